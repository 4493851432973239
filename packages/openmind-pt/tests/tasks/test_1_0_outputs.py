"""openMind 1.0's return shapes (transformers' pipelines) by default, key for key, and transformers'
per-call generation keywords: every output equals transformers' own pipeline on the same tiny model
and inputs (summarization / translation / text2text, which transformers 5 no longer has as
pipelines, equal ``model.generate`` with the same keywords, in transformers 4's shape that 1.0
returned; question-answering, also gone from transformers 5, is compared with the model's own
logits in ``test_nlp_tasks.py``). ``return_format="openmind"`` gives the 2.x structured outputs."""

from __future__ import annotations

import pytest
import torch

from openmind import pipeline
from openmind.core.errors import OpenMindError


@pytest.fixture(scope="module")
def generators(llama2_dir):
    from transformers import pipeline as hf_pipeline

    return pipeline("text-generation", model=str(llama2_dir)), hf_pipeline("text-generation", model=str(llama2_dir))


GENERATION_CALLS = [
    (("Hello there",), {"max_new_tokens": 5, "do_sample": False}),
    ((["Hello there", "Hi"],), {"max_new_tokens": 5, "do_sample": False}),
    (("Hello there",), {"max_length": 9, "do_sample": False}),
    ((["Hello there, how are you", "Hi"],), {"max_length": 10, "do_sample": False}),
    (("Hello there",), {"max_new_tokens": 8, "min_length": 9, "do_sample": False}),
    (("Hello there",), {"max_new_tokens": 8, "min_new_tokens": 8, "do_sample": False}),
    (("Hello there",), {"max_new_tokens": 8, "repetition_penalty": 1.5, "do_sample": False}),
    (("Hello there",), {"max_new_tokens": 8, "no_repeat_ngram_size": 2, "do_sample": False}),
    (
        ("Hello there",),
        {"max_new_tokens": 6, "num_beams": 3, "length_penalty": 0.5, "early_stopping": True, "do_sample": False},
    ),
    (("Hello there",), {"max_new_tokens": 5, "do_sample": False, "return_full_text": False}),
    (("Hello there",), {"max_new_tokens": 6, "do_sample": True, "top_k": 10, "num_return_sequences": 3}),
    (("Hello there",), {"max_new_tokens": 6, "do_sample": True, "top_p": 0.9, "temperature": 0.7}),
]


@pytest.mark.parametrize("args, kwargs", GENERATION_CALLS, ids=lambda v: str(v)[:60])
def test_text_generation_equals_transformers_pipeline(generators, args, kwargs):
    ours, reference = generators
    torch.manual_seed(0)
    expected = reference(*args, **kwargs)
    torch.manual_seed(0)
    assert ours(*args, **kwargs) == expected


def test_text_generation_openmind_format_and_refusals(llama2_dir, generators):
    ours, _ = generators
    structured = pipeline("text-generation", model=str(llama2_dir), return_format="openmind", max_new_tokens=5)
    (legacy,) = ours("Hello there", max_new_tokens=5, do_sample=False)
    assert structured("Hello there", do_sample=False) == legacy  # one {"generated_text"} per input
    # build-time defaults take transformers' keywords too
    built = pipeline("text-generation", model=str(llama2_dir), max_length=9, do_sample=False)
    assert built("Hello there") == ours("Hello there", max_length=9, do_sample=False)
    for kwargs, where in (
        ({"num_return_sequences": 2, "do_sample": False}, "num_return_sequences"),  # greedy gives one answer
        ({"num_return_sequences": 2, "num_beams": 3}, "num_return_sequences"),
        ({"max_length": 0}, "max_length"),
        ({"min_new_tokens": -1}, "min_new_tokens"),
    ):
        with pytest.raises(OpenMindError) as info:
            ours("Hello there", **kwargs)
        assert info.value.code == "OM-I102" and info.value.location == where, kwargs
    with pytest.raises(OpenMindError) as info:
        pipeline("text-generation", model=str(llama2_dir), return_format="2.x")
    assert info.value.code == "OM-I102" and info.value.location == "return_format"


def test_text_classification_equals_transformers_pipeline(seq_cls_model_dir):
    from transformers import pipeline as hf_pipeline

    ours = pipeline("text-classification", model=str(seq_cls_model_dir))
    reference = hf_pipeline("text-classification", model=str(seq_cls_model_dir))
    for inputs in ("good movie", ["good movie", "bad"]):
        for kwargs in ({}, {"top_k": 1}, {"top_k": 2}, {"top_k": None}, {"function_to_apply": "sigmoid"}):
            assert ours(inputs, **kwargs) == reference(inputs, **kwargs), (inputs, kwargs)
    built = pipeline("text-classification", model=str(seq_cls_model_dir), top_k=2)
    assert built("good movie") == hf_pipeline("text-classification", model=str(seq_cls_model_dir), top_k=2)(
        "good movie"
    )
    structured = pipeline("text-classification", model=str(seq_cls_model_dir), return_format="openmind")
    assert [structured("good movie")] == ours("good movie")


def test_token_classification_equals_transformers_pipeline(token_cls_model_dir):
    from transformers import pipeline as hf_pipeline

    ours = pipeline("token-classification", model=str(token_cls_model_dir))
    reference = hf_pipeline("token-classification", model=str(token_cls_model_dir))
    text = "My name is Wolfgang and I live in Berlin"
    for inputs in (text, [text, "Angela visited Paris"]):
        for kwargs in ({}, {"aggregation_strategy": "simple"}, {"aggregation_strategy": "first"}):
            expected = reference(inputs, **kwargs)
            got = ours(inputs, **kwargs)
            assert got == expected, (inputs, kwargs)
            rows = [got] if isinstance(inputs, str) else got
            assert all(
                list(e) == list(x)
                for r, s in zip(rows, [expected] if isinstance(inputs, str) else expected)
                for e, x in zip(r, s)
            )
    structured = pipeline("token-classification", model=str(token_cls_model_dir), return_format="openmind")
    assert structured(text) == [
        {"entity": e["entity_group"], "word": e["word"], "start": e["start"], "end": e["end"], "score": e["score"]}
        for e in reference(text, aggregation_strategy="simple")
    ]


def test_fill_mask_and_feature_extraction_equal_transformers(masked_lm_model_dir, encoder_dir):
    from transformers import pipeline as hf_pipeline

    fill, fill_ref = (
        pipeline("fill-mask", model=str(masked_lm_model_dir)),
        hf_pipeline("fill-mask", model=str(masked_lm_model_dir)),
    )
    for inputs in ("Paris is the [MASK] of France.", ["Paris is the [MASK] of France.", "a [MASK]"]):
        assert fill(inputs) == fill_ref(inputs)
        assert fill(inputs, top_k=2) == fill_ref(inputs, top_k=2)
    extract, extract_ref = (
        pipeline("feature-extraction", model=str(encoder_dir)),
        hf_pipeline("feature-extraction", model=str(encoder_dir)),
    )
    for inputs in ("Hello world", ["Hello world", "a longer second sentence here"]):
        got, expected = extract(inputs), extract_ref(inputs)
        assert (
            torch.allclose(torch.tensor(got), torch.tensor(expected), atol=1e-6)
            if isinstance(inputs, str)
            else all(
                torch.allclose(torch.tensor(g), torch.tensor(e), atol=1e-6) for g, e in zip(got, expected, strict=True)
            )
        )


def _generate(folder, texts, **kwargs):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    out = []
    for text in texts:  # one by one, as transformers' pipelines (batch_size=1) did
        with torch.no_grad():
            ids = model.generate(**tok([text], return_tensors="pt"), **kwargs)
        out.append(tok.decode(ids[0], skip_special_tokens=True).strip())
    return out


def test_seq2seq_tasks_return_1_0_shapes_and_take_length_keywords(t5_dir):
    text = "The tower is 324 metres tall, about the same height as an 81-storey building."
    summarize = pipeline("summarization", model=str(t5_dir))
    for kwargs in ({"max_length": 7}, {"max_length": 12, "min_length": 10}, {"max_new_tokens": 6, "num_beams": 2}):
        expected = _generate(t5_dir, ["summarize: " + text], do_sample=False, **kwargs)
        assert summarize(text, **kwargs) == [{"summary_text": expected[0]}], kwargs
    translate = pipeline("translation", model=str(t5_dir), max_length=8)
    expected = _generate(
        t5_dir, ["translate English to German: Hello", "translate English to German: Bye"], max_length=8
    )
    assert translate(["Hello", "Bye"], source_lang="en", target_lang="de") == [
        [{"translation_text": e}] for e in expected
    ]
    t2t = pipeline("text2text-generation", model=str(t5_dir), return_format="openmind")
    assert t2t("hello", max_length=6) == {"generated_text": _generate(t5_dir, ["hello"], max_length=6)[0]}
