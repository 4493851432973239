"""It really learns, on PyTorch: see :func:`openmind.nlp.testing.synthetic.learns` (the MindSpore
suite runs the same procedure)."""

from __future__ import annotations

import pytest

from openmind.nlp.testing.synthetic import learns

pytestmark = pytest.mark.slow


def test_full_sft_then_lora_learn_through_the_chat_pipeline(tmp_path):
    from openmind.pt.testing import tiny_llama

    learns(tmp_path, tiny_llama(tmp_path / "base", hidden_size=64, layers=2, heads=4), framework="pt")
