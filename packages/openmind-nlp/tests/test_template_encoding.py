"""segments() and encode(): label masks cover exactly the assistant's output."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from openmind.core.errors import OpenMindError
from openmind.nlp.templates import IGNORE_INDEX, JinjaTemplate, load_template
from openmind.nlp.templates.plugin import TEMPLATES

NAMES = [t.name for t in TEMPLATES]
CONVERSATION = [
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris."},
    {"role": "user", "content": "And of Italy?"},
    {"role": "assistant", "content": "Rome."},
]

text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20).filter(str.strip)


@st.composite
def conversations(draw):
    turns = draw(st.integers(1, 3))
    messages = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(text)})
    for _ in range(turns):
        messages += [{"role": "user", "content": draw(text)}, {"role": "assistant", "content": draw(text)}]
    return messages


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversation=conversations(), name=st.sampled_from(NAMES))
@example(  # a user text that is a letter of an end-of-turn marker ("<end_of_turn>")
    conversation=[{"role": "user", "content": "r"}, {"role": "assistant", "content": "0"}], name="gemma2"
)
def test_segments_join_to_render(conversation, name):
    template = load_template(name)
    try:
        rendered = template.render(conversation)
    except OpenMindError as exc:  # families without a system role refuse it
        assert exc.code == "OM-TP002" and conversation[0]["role"] == "system"
        return
    pieces = template.segments(conversation)
    assert "".join(p for p, _ in pieces) == rendered
    trained = "".join(p for p, t in pieces if t)
    for message in conversation:
        if message["role"] == "assistant":
            assert message["content"].strip() in trained
        elif message["content"].strip():
            # the template's own markers (e.g. "<end_of_turn>") are trained and may contain a short user text
            answers_only = re.sub(r"<[^<>\s]+>|\[/?[A-Z_]+\]", "", trained)
            assert message["content"].strip() not in answers_only or message["content"].strip() in "".join(
                m["content"] for m in conversation if m["role"] == "assistant"
            )


@pytest.mark.parametrize("name", NAMES)
def test_trained_segments_are_the_answers_and_end_of_turn(name):
    template = load_template(name)
    trained = [p for p, t in template.segments(CONVERSATION) if t]
    assert len(trained) == 2
    assert "Paris." in trained[0] and "Rome." in trained[1]
    assert not any("capital" in p or "Italy" in p for p in trained)
    # a stop word (or end-of-turn token) is trained, so the model learns to stop
    assert all(any(p.endswith(s) for s in (*template.stop_words, "Paris.", "Rome.")) for p in trained)


def test_chatml_segments_exact():
    assert load_template("qwen2.5").segments(CONVERSATION[:2]) == [
        (
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n",
            False,
        ),
        ("Paris.<|im_end|>", True),
        ("\n", False),
    ]


@pytest.fixture(scope="module")
def llama2():
    pytest.importorskip("transformers")
    from openmind.nlp.testing.assets import llama2_tokenizer

    return llama2_tokenizer()


def test_encode_llama2_ids_and_labels(llama2):
    template = load_template("llama2")
    encoded = template.encode(llama2, CONVERSATION)
    rendered = template.render(CONVERSATION)
    # the ids are exactly those of the whole rendered prompt (what inference sees)
    assert encoded.input_ids == llama2(rendered, add_special_tokens=False)["input_ids"]
    assert encoded.input_ids[0] == 1 and encoded.input_ids.count(2) == 2  # <s> first, one </s> per answer
    assert len(encoded.labels) == len(encoded.input_ids)
    trained = [i for i, label in zip(encoded.input_ids, encoded.labels) if label != IGNORE_INDEX]
    # official Llama-2 answers are " Paris. </s>": the space before </s> is token 29871
    assert llama2.decode(trained) == "Paris. </s> Rome. </s>"  # the decoder shows "▁Rome" as " Rome"
    assert trained.count(29871) == 2 and trained.count(2) == 2
    assert all(label in (IGNORE_INDEX, token) for token, label in zip(encoded.input_ids, encoded.labels))


def test_encode_train_on_last_and_all(llama2):
    template = load_template("llama2")
    every = template.encode(llama2, CONVERSATION, train_on="assistant")
    last = template.encode(llama2, CONVERSATION, train_on="last")
    whole = template.encode(llama2, CONVERSATION, train_on="all")
    assert every.input_ids == last.input_ids == whole.input_ids
    assert whole.labels == whole.input_ids
    kept_last = [t for t, label in zip(last.input_ids, last.labels) if label != IGNORE_INDEX]
    assert llama2.decode(kept_last) == "Rome. </s>"
    assert sum(label != IGNORE_INDEX for label in every.labels) > sum(label != IGNORE_INDEX for label in last.labels)
    with pytest.raises(OpenMindError) as info:
        template.encode(llama2, CONVERSATION, train_on="user")
    assert info.value.code == "OM-TP005"


def test_encode_with_the_tokenizers_own_template_matches_native(llama2):
    jinja = JinjaTemplate.from_tokenizer(llama2)
    native = load_template("llama2")
    a, b = jinja.encode(llama2, CONVERSATION), native.encode(llama2, CONVERSATION)
    assert a.input_ids == b.input_ids and a.labels == b.labels


def test_encode_offsets_point_at_segment_starts(llama2):
    template = load_template("llama2")
    encoded = template.encode(llama2, CONVERSATION)
    pieces = template.segments(CONVERSATION)
    assert len(encoded.offsets) == len(pieces) and encoded.offsets[0] == 0
    assert encoded.offsets == sorted(encoded.offsets)
    first_answer = encoded.offsets[1]
    assert encoded.labels[first_answer] != IGNORE_INDEX and encoded.labels[first_answer - 1] == IGNORE_INDEX
