"""openMind 1.0's NLP tasks on PyTorch: each output equals transformers' own pipeline / model call
on the same inputs (tiny random models from configs, real tokenizers)."""

from __future__ import annotations

import pytest
import torch

from openmind import pipeline
from openmind.core.errors import OpenMindError

CONTEXT = "My name is Wolfgang and I live in Berlin. I work as an engineer at a small company."


# ---- question-answering ---------------------------------------------------------------------------


def reference_spans(folder, question, context, max_answer_len=15):
    """Every span's score by brute force over the model's own logits (transformers' definition:
    softmax over the context tokens + CLS, CLS taken out, p(start) * p(end))."""
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForQuestionAnswering.from_pretrained(folder).eval()
    enc = tok(question, context, return_offsets_mapping=True, return_tensors="pt")
    offsets = enc.pop("offset_mapping")[0].tolist()
    with torch.no_grad():
        out = model(**enc)
    seq = enc.sequence_ids(0)
    keep = [s == 1 or i == 0 for i, s in enumerate(seq)]
    start = out.start_logits[0].masked_fill(~torch.tensor(keep), -10000.0).softmax(-1)
    end = out.end_logits[0].masked_fill(~torch.tensor(keep), -10000.0).softmax(-1)
    spans = []
    for s in range(len(seq)):
        for e in range(s, min(len(seq), s + max_answer_len)):
            if seq[s] == 1 and seq[e] == 1:
                a, b = offsets[s][0], offsets[e][1]
                spans.append((float(start[s] * end[e]), a, b, context[a:b]))
    return sorted(spans, key=lambda x: -x[0])


def test_question_answering_equals_the_model_call(qa_dir):
    qa = pipeline("question-answering", model=str(qa_dir))
    expected = reference_spans(qa_dir, "Where do I live?", CONTEXT)
    got = qa(question="Where do I live?", context=CONTEXT, top_k=3)
    assert [(g["start"], g["end"], g["answer"]) for g in got] == [(a, b, t) for _, a, b, t in expected[:3]]
    assert [g["score"] for g in got] == pytest.approx([s for s, *_ in expected[:3]], rel=1e-5)
    best = qa({"question": "Where do I live?", "context": CONTEXT})
    assert best == got[0] and set(best) == {"score", "start", "end", "answer"}
    batch = qa(
        [{"question": "Where do I live?", "context": CONTEXT}, {"question": "What is my job?", "context": CONTEXT}]
    )
    assert batch[0] == best and len(batch) == 2


def test_question_answering_long_context_uses_windows(qa_dir):
    qa = pipeline("question-answering", model=str(qa_dir))
    long_context = " ".join([CONTEXT] * 30)
    got = qa(question="Where do I live?", context=long_context, max_seq_len=64, doc_stride=16)
    assert long_context[got["start"] : got["end"]] == got["answer"] and got["answer"]


def test_question_answering_bad_inputs_name_the_field(qa_dir):
    qa = pipeline("question-answering", model=str(qa_dir))
    with pytest.raises(OpenMindError) as info:
        qa({"question": "Where?"})
    assert info.value.code == "OM-I003" and "context" in info.value.location
    with pytest.raises(OpenMindError) as info:
        qa(question="Where?", context=CONTEXT, doc_stride=500)
    assert info.value.code == "OM-I102"


# ---- zero-shot-classification / table-question-answering / feature-extraction ----------------------


def test_zero_shot_equals_transformers(nli_dir):
    from transformers import pipeline as hf_pipeline

    ours = pipeline("zero-shot-classification", model=str(nli_dir))
    ref = hf_pipeline("zero-shot-classification", model=str(nli_dir))
    labels = ["politics", "sports", "cooking"]
    text = "The match ended in a draw after extra time."
    assert ours(text, candidate_labels=labels) == ref(text, candidate_labels=labels)
    assert ours([text, "A recipe"], candidate_labels=labels, multi_label=True) == ref(
        [text, "A recipe"], candidate_labels=labels, multi_label=True
    )
    with pytest.raises(OpenMindError) as info:
        ours(text)
    assert info.value.code == "OM-I102" and info.value.location == "candidate_labels"


def test_table_question_answering_equals_transformers(tapas_dir):
    from transformers import pipeline as hf_pipeline

    table = {"Repository": ["transformers", "datasets", "tokenizers"], "Stars": ["36542", "4512", "3934"]}
    query = "How many stars does the transformers repository have?"
    ours = pipeline("table-question-answering", model=str(tapas_dir))
    ref = hf_pipeline("table-question-answering", model=str(tapas_dir))
    assert ours(table=table, query=query) == ref(table=table, query=query)
    with pytest.raises(OpenMindError) as info:
        ours(table={"a": ["1", "2"], "b": ["1"]}, query=query)
    assert info.value.code == "OM-I003" and "table" in info.value.location


def test_feature_extraction_is_per_token_and_text2emb_pooled(encoder_dir):
    from transformers import pipeline as hf_pipeline

    ours = pipeline("feature-extraction", model=str(encoder_dir))
    ref = hf_pipeline("feature-extraction", model=str(encoder_dir))
    text = "Hello world, twice."
    states = ours(text)
    expected = ref(text)
    assert len(states) == 1 and len(states[0]) == len(ours.backend.tokenizer(text)["input_ids"])
    assert torch.allclose(torch.tensor(states), torch.tensor(expected), atol=1e-6)
    pooled = pipeline("text2emb", model=str(encoder_dir))(text)
    assert len(pooled) == 32  # one vector per sentence
    from openmind.core.plugins import get_registry

    assert get_registry().task("feature-extraction").name == "feature-extraction"


# ---- seq2seq: text2text-generation, summarization, translation ---------------------------------------


def reference_generate(folder, texts, **kwargs):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    enc = tok(texts, padding=True, return_tensors="pt")
    enc.pop("token_type_ids", None)  # BART with a BERT tokenizer: the model takes none
    with torch.no_grad():
        out = model.generate(**enc, **kwargs)
    return [t.strip() for t in tok.batch_decode(out, skip_special_tokens=True)]


def test_t5_summarization_translation_text2text_equal_generate(t5_dir):
    text = "The tower is 324 metres tall, about the same height as an 81-storey building."
    summarize = pipeline("summarization", model=str(t5_dir), max_new_tokens=12)
    assert type(summarize).__name__ == "Seq2SeqSummarizationPipeline"
    expected = reference_generate(t5_dir, ["summarize: " + text], max_new_tokens=12, do_sample=False)
    assert summarize(text) == [{"summary_text": expected[0]}]
    translate = pipeline("translation", model=str(t5_dir), max_new_tokens=12)
    expected = reference_generate(
        t5_dir, ["translate English to German: Hello there"], max_new_tokens=12, do_sample=False
    )
    assert translate("Hello there", source_lang="en", target_lang="de") == [{"translation_text": expected[0]}]
    t2t = pipeline("text2text-generation", model=str(t5_dir))
    texts = ["question: what is 42?", "a longer input that pads the other one out"]
    expected = reference_generate(t5_dir, texts, max_new_tokens=10, num_beams=2, do_sample=False)
    assert t2t(texts, max_new_tokens=10, num_beams=2, batch_size=2) == [[{"generated_text": e}] for e in expected]


def test_bart_summarization_batches_equal_generate(bart_dir):
    texts = ["The quick brown fox jumps over the lazy dog.", "Short one."]
    summarize = pipeline("summarization", model=str(bart_dir), max_new_tokens=8)
    expected = reference_generate(bart_dir, texts, max_new_tokens=8, do_sample=False)
    assert summarize(texts, batch_size=2) == [[{"summary_text": e}] for e in expected]
    assert summarize(texts[0]) == [{"summary_text": reference_generate(bart_dir, texts[:1], max_new_tokens=8)[0]}]


def test_marian_translation_equals_generate(marian_dir):
    """Marian (OPUS-MT's architecture; its source/target SentencePiece models are a real one,
    Mistral's, built into a MarianTokenizer in openmind.pt.testing): no prefix, the text as it is."""
    texts = ["Hello there", "How are you doing today, my friend?"]
    translate = pipeline("translation", model=str(marian_dir), max_new_tokens=10)
    assert type(translate).__name__ == "Seq2SeqTranslationPipeline"
    expected = reference_generate(marian_dir, texts, max_new_tokens=10, do_sample=False)
    assert translate(texts, batch_size=2) == [[{"translation_text": e}] for e in expected]
    one = reference_generate(marian_dir, texts[1:], max_new_tokens=10, num_beams=3, do_sample=False)
    assert translate(texts[1], num_beams=3) == [{"translation_text": one[0]}]
    assert any(e for e in expected)  # something was generated (the comparison is not of empty strings)


def test_mt5_summarization_translation_text2text_equal_generate(mt5_dir):
    """mT5 ships no task prefixes: summarization / translation / text2text all feed the text as it is."""
    texts = ["The tower is 324 metres tall, about the same height as an 81-storey building.", "Short one."]
    summarize = pipeline("summarization", model=str(mt5_dir), max_new_tokens=8)
    assert type(summarize).__name__ == "Seq2SeqSummarizationPipeline"
    expected = reference_generate(mt5_dir, texts, max_new_tokens=8, do_sample=False)
    assert summarize(texts, batch_size=2) == [[{"summary_text": e}] for e in expected]
    translate = pipeline("translation", model=str(mt5_dir), max_new_tokens=8)
    expected = reference_generate(mt5_dir, ["Hello there"], max_new_tokens=8, do_sample=False)
    assert translate("Hello there", source_lang="en", target_lang="de") == [{"translation_text": expected[0]}]
    t2t = pipeline("text2text-generation", model=str(mt5_dir))
    expected = reference_generate(mt5_dir, texts, max_new_tokens=6, num_beams=2, do_sample=False)
    assert t2t(texts, max_new_tokens=6, num_beams=2, batch_size=2) == [[{"generated_text": e}] for e in expected]


def test_summarization_on_a_chat_model_stays_the_instruction_path(llama2_dir):
    summarize = pipeline("summarization", model=str(llama2_dir), max_new_tokens=4)
    assert type(summarize).__name__ == "SummarizationPipeline"
    assert [set(o) for o in summarize("Some text")] == [{"summary_text"}]


def test_tasks_inferred_from_the_folder(qa_dir, t5_dir, tapas_dir):
    from openmind.core.api import infer_task

    assert infer_task(str(qa_dir)) == "question-answering"
    assert infer_task(str(t5_dir)) == "text2text-generation"
    assert infer_task(str(tapas_dir)) == "table-question-answering"
    assert pipeline(model=str(qa_dir)).task == "question-answering"
