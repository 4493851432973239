"""A backend's conformance subclass that forgets a reference hook fails, naming the hook."""

import pytest

from openmind.nlp.testing import conformance as C


class _Forgetful(C.TextClassificationConformance):  # no reference_logits
    framework = "pt"


def test_a_missing_reference_hook_fails_by_name():
    with pytest.raises(pytest.fail.Exception, match=r"_Forgetful does not define reference_logits\(\)"):
        _Forgetful().reference_logits("folder", "text")
