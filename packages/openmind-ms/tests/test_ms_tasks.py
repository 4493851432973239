"""openMind 1.0's task names on MindSpore: feature-extraction on the native BERT encoder equals the
PyTorch pipeline (transformers' feature-extraction) on the real MiniLM; tasks with no MindSpore
pipeline are a coded error naming the frameworks that have one."""

from __future__ import annotations

import numpy as np
import pytest

import openmind
from openmind.core.errors import OpenMindError

SENTENCES = ["A man is eating food.", "A man is eating a piece of bread.", "The weather is lovely today!"]


def test_feature_extraction_per_token_states_match_pytorch(minilm_dir):
    pt = openmind.pipeline("feature-extraction", model=str(minilm_dir), framework="pt")
    ms = openmind.pipeline("feature-extraction", model=str(minilm_dir), framework="ms")
    assert ms.selection["impl"].endswith("MindSporeFeatureExtraction")
    # the reference one text at a time: transformers' own pipeline keeps the padding positions of a
    # batch in its output; MindSpore's states are each text's own tokens, batched or not
    got, expected = ms(SENTENCES, batch_size=3), [pt(s) for s in SENTENCES]
    for g, e, text in zip(got, expected, SENTENCES, strict=True):
        tokens = len(ms.backend.tokenizer(text)["input_ids"])
        assert np.asarray(g).shape == np.asarray(e).shape == (1, tokens, 384)
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), atol=2e-4)
    # one input alone, batched with longer ones or not: the same states
    np.testing.assert_allclose(np.asarray(ms(SENTENCES[2])), np.asarray(got[2]), atol=1e-5)
    # tokenizer arguments pass through, as in transformers' pipeline
    cut = ms(SENTENCES[0], tokenize_kwargs={"truncation": True, "max_length": 4})
    assert np.asarray(cut).shape == (1, 4, 384)
    np.testing.assert_allclose(
        np.asarray(cut), np.asarray(pt(SENTENCES[0], tokenize_kwargs={"truncation": True, "max_length": 4})), atol=2e-4
    )


def test_feature_extraction_too_long_is_a_coded_error(minilm_dir):
    ms = openmind.pipeline("feature-extraction", model=str(minilm_dir), framework="ms")
    with pytest.raises(OpenMindError) as info:
        ms("word " * 600)
    assert info.value.code == "OM-I003" and "512 positions" in info.value.message
    assert info.value.location == "input[0]" and "truncation" in (info.value.hint or "")


@pytest.mark.parametrize("task", ["question-answering", "fill-mask", "zero-shot-classification"])
def test_tasks_without_a_mindspore_pipeline_say_so(task, minilm_dir):
    with pytest.raises(OpenMindError) as info:
        openmind.pipeline(task, model=str(minilm_dir), framework="ms")
    assert info.value.code == "OM-I002" and "pt" in info.value.message
