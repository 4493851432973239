"""openMind 1.0's task names on MindSpore: feature-extraction (the real MiniLM) and fill-mask (a tiny
BertForMaskedLM) on the native BERT code equal the PyTorch pipelines (transformers' own); tasks with no MindSpore
pipeline are a coded error naming the frameworks that have one.

fill-mask on the native BertForMaskedLM is also in the shared conformance suite (test_conformance.py)."""

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


def test_fill_mask_matches_pytorch(masked_lm_model_dir):
    """The native BertForMaskedLM against transformers' fill-mask pipeline (through openmind's PyTorch
    pipeline) on the same checkpoint: the same candidates, strings and sequences, scores within 1e-5."""
    pt = openmind.pipeline("fill-mask", model=str(masked_lm_model_dir), framework="pt")
    ms = openmind.pipeline("fill-mask", model=str(masked_lm_model_dir), framework="ms")
    assert ms.selection["impl"].endswith("MindSporeFillMask")
    texts = [f"Paris is the {ms.mask_token} of France.", f"The {ms.mask_token} sat on the mat, and it was happy."]
    got = ms(texts, top_k=4, batch_size=2)
    for g, text in zip(got, texts, strict=True):
        e = pt(text, top_k=4)
        assert [(o["token"], o["token_str"], o["sequence"]) for o in g] == [
            (o["token"], o["token_str"], o["sequence"]) for o in e
        ]
        np.testing.assert_allclose([o["score"] for o in g], [o["score"] for o in e], atol=1e-5)
    alone = ms(texts[1], top_k=4)  # batched with a shorter text or not: the same candidates
    assert [o["token"] for o in alone] == [o["token"] for o in got[1]]
    np.testing.assert_allclose([o["score"] for o in alone], [o["score"] for o in got[1]], atol=1e-6)


@pytest.mark.parametrize("task", ["question-answering", "zero-shot-classification", "table-question-answering"])
def test_tasks_without_a_mindspore_pipeline_say_so(task, minilm_dir):
    with pytest.raises(OpenMindError) as info:
        openmind.pipeline(task, model=str(minilm_dir), framework="ms")
    assert info.value.code == "OM-I002" and "pt" in info.value.message
