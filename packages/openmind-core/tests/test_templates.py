"""The template protocol and revision hashing in openmind-core (no framework, no domain package)."""

from __future__ import annotations

import subprocess
import sys

from openmind.core.specs import TemplateSpec
from openmind.core.templates import find_revision, normalise_template, template_hash

TEXT = "{% for m in messages %}{{ m['content'] }}{% endfor %}"


def test_hash_is_of_the_normalised_text():
    assert normalise_template("\r\n  " + TEXT.replace("%}{{", "%}\r\n{{") + "\n\n") == TEXT.replace("%}{{", "%}\n{{")
    assert template_hash(TEXT + "\n") == template_hash("  " + TEXT) != template_hash(TEXT.replace("m[", "x["))
    assert len(template_hash(TEXT)) == 64


def test_find_revision_among_specs():
    specs = [
        TemplateSpec(name="a", revisions=(("A-1", template_hash("other")),)),
        TemplateSpec(name="b", revisions=(("B-1", "0" * 64), ("B-2", template_hash(TEXT)))),
    ]
    spec, label = find_revision(TEXT + "\n", specs)
    assert (spec.name, label) == ("b", "B-2")
    assert find_revision("unknown", specs) is None


def test_template_spec_fields_survive_the_snapshot_round_trip():
    from openmind.core.snapshot import _tuples

    spec = TemplateSpec(
        name="x", stop_words=("<e>",), revisions=(("X", "1" * 64),), aliases=("y",), options={"enable_thinking": False}
    )
    data = spec.to_dict()
    data.pop("kind")
    data.pop("component")
    rebuilt = TemplateSpec(**{k: _tuples(v) for k, v in data.items()})
    assert rebuilt == spec and rebuilt.options == spec.options


def test_protocol_module_imports_no_framework():
    code = (
        "import sys, openmind.core.templates; "
        "print(sorted(m for m in ('torch', 'transformers', 'mindspore', 'jinja2', 'openmind.nlp') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
