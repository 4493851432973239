"""Tokenisation with label masks on the real Llama-2 tokenizer; truncation; preference pairs."""

import pytest
from data_helpers import chat
from hypothesis import given, settings
from hypothesis import strategies as st

from openmind.data.encoding import DROPPED, NO_LABELS, OK, TOO_LONG, TRUNCATED, Encoder, encode_rows
from openmind.data.formats import message

IGNORE = -100


def _row(messages):
    return {"messages": [message(m["role"], m["content"]) for m in messages], "tools": None}


def _trained(ids, labels):
    return [i for i, lab in zip(ids, labels) if lab != IGNORE]


def test_ids_are_the_official_tokenisation_and_labels_cover_answers(llama2_tok, llama2_template):
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Name a colour."},
        {"role": "assistant", "content": "Blue is a colour."},
        {"role": "user", "content": "Another?"},
        {"role": "assistant", "content": "Green."},
    ]
    out = encode_rows(Encoder(llama2_tok, llama2_template), [_row(messages)])[0]
    assert out["input_ids"] == llama2_tok.apply_chat_template(messages, tokenize=True)["input_ids"]
    assert out["_status"] == OK
    # trained: " {answer} </s>" of both turns, exactly
    answers = [llama2_tok(" " + m["content"] + " </s>", add_special_tokens=False)["input_ids"] for m in messages[2::2]]
    # whole-string tokenisation merges the leading space into the first word (no lone 29871 token)
    assert _trained(out["input_ids"], out["labels"]) == [t for a in answers for t in a[1:]]
    assert out["labels"][-2:] == [29871, 2]  # "... </s>": the official template's space before EOS is trained
    assert out["labels"][0] == IGNORE


@pytest.mark.parametrize("train_on", ["assistant", "last", "all"])
def test_same_as_template_encode(llama2_tok, llama2_template, train_on):
    from openmind.nlp.templates import JinjaTemplate

    rows = [chat(i, turns=1 + i % 3, system="sys" if i % 2 else None)["messages"] for i in range(6)]
    for template in (llama2_template, JinjaTemplate.from_tokenizer(llama2_tok)):
        batch = encode_rows(Encoder(llama2_tok, template, train_on=train_on), [_row(m) for m in rows])
        for messages, out in zip(rows, batch):
            ref = template.encode(llama2_tok, messages, train_on=train_on)
            assert (out["input_ids"], out["labels"]) == (ref.input_ids, ref.labels)
    last = encode_rows(Encoder(llama2_tok, llama2_template, train_on="last"), [_row(rows[2])])[0]
    every = encode_rows(Encoder(llama2_tok, llama2_template), [_row(rows[2])])[0]
    assert (
        0
        < len(_trained(**{"ids": last["input_ids"], "labels": last["labels"]}))
        < len(_trained(every["input_ids"], every["labels"]))
    )


_words = st.text(alphabet="abcdefghij XYZ?!,.0123456789éü", min_size=1, max_size=30).filter(lambda s: s.strip())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_words, _words), min_size=1, max_size=4))
def test_batched_encoding_matches_one_by_one_and_masks_align(llama2_tok, llama2_template, turns):
    messages = [x for q, a in turns for x in ({"role": "user", "content": q}, {"role": "assistant", "content": a})]
    enc = Encoder(llama2_tok, llama2_template)
    alone = encode_rows(enc, [_row(messages)])[0]
    batched = encode_rows(enc, [_row(chat(1)["messages"]), _row(messages), _row(chat(2)["messages"])])[1]
    assert (alone["input_ids"], alone["labels"]) == (batched["input_ids"], batched["labels"])
    ids, labels = alone["input_ids"], alone["labels"]
    assert len(ids) == len(labels)
    assert all(lab in (IGNORE, i) for i, lab in zip(ids, labels))
    assert labels.count(2) == ids.count(2) == len(turns)  # every EOS ends an answer and is trained
    ref = llama2_template.encode(llama2_tok, messages)
    assert (ids, labels) == (ref.input_ids, ref.labels)


def test_truncation_strategies(llama2_tok, llama2_template):
    messages = chat(3, turns=3)["messages"]
    full = encode_rows(Encoder(llama2_tok, llama2_template), [_row(messages)])[0]
    n = len(full["input_ids"])
    right = encode_rows(Encoder(llama2_tok, llama2_template, cutoff_len=40), [_row(messages)])[0]
    assert right["_status"] == TRUNCATED and right["_length"] == n
    assert (right["input_ids"], right["labels"]) == (full["input_ids"][:40], full["labels"][:40])
    left = encode_rows(Encoder(llama2_tok, llama2_template, cutoff_len=40, truncation="left"), [_row(messages)])[0]
    assert (left["input_ids"], left["labels"]) == (full["input_ids"][-40:], full["labels"][-40:])
    drop = encode_rows(Encoder(llama2_tok, llama2_template, cutoff_len=40, truncation="drop"), [_row(messages)])[0]
    assert drop["_status"] == DROPPED and drop["input_ids"] == []
    err = encode_rows(Encoder(llama2_tok, llama2_template, cutoff_len=40, truncation="error"), [_row(messages)])[0]
    assert err["_status"] == TOO_LONG
    # cut inside the first prompt: no trained token left -> dropped, counted
    tiny = encode_rows(Encoder(llama2_tok, llama2_template, cutoff_len=5), [_row(messages)])[0]
    assert tiny["_status"] == NO_LABELS


def test_pretrain_rows_get_bos_and_eos(llama2_tok):
    out = encode_rows(Encoder(llama2_tok, stage="pt"), [{"text": "Hello world"}])[0]
    assert out["input_ids"] == [1, 15043, 3186, 2] and out["labels"] == out["input_ids"]


def test_preference_pairs_train_only_the_answer(llama2_tok, llama2_template):
    row = {"messages": [message("user", "What is 2+2?")], "chosen": "It is 4.", "rejected": "It is 5."}
    out = encode_rows(Encoder(llama2_tok, llama2_template, stage="dpo", train_on="all"), [row])[0]
    for name, answer in (("chosen", "It is 4."), ("rejected", "It is 5.")):
        messages = [{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": answer}]
        ref = llama2_template.encode(llama2_tok, messages, train_on="last")
        assert (out[f"{name}_input_ids"], out[f"{name}_labels"]) == (ref.input_ids, ref.labels)
    assert out["chosen_input_ids"][:-4] == out["rejected_input_ids"][:-4]


def test_template_refusal_is_a_located_problem(tmp_path, llama2_tok, llama2_template):
    from data_helpers import data_args, write_jsonl

    from openmind.core.errors import OpenMindError
    from openmind.data import prepare

    tool_turns = {
        "messages": [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"type": "function", "function": {"name": "w", "arguments": {}}}],
            },
            {"role": "tool", "content": "21C"},
            {"role": "assistant", "content": "21 degrees"},
        ]
    }
    path = write_jsonl(tmp_path / "t.jsonl", [chat(0), tool_turns, chat(1)])
    with pytest.raises(OpenMindError) as err:
        prepare(data_args(dataset=[str(path)]), llama2_tok, llama2_template)
    assert (
        err.value.code == "OM-D011"
        and err.value.location.startswith(f"{path}:2")
        and "role 'tool'" in err.value.message
    )
    data = prepare(data_args(dataset=[str(path)], on_error="skip"), llama2_tok, llama2_template)
    assert (data.stats["read"], data.stats["kept"], data.stats["rejected"]) == (3, 2, 1)
    assert len(data.train) == 2


def test_the_backend_is_shared_only_without_truncation_or_padding(llama2_tok, llama2_template):
    from openmind.data.encoding import backend_of
    from openmind.nlp.testing.assets import llama2_tokenizer

    assert backend_of(llama2_tok) is llama2_tok.backend_tokenizer  # no copy of the vocabulary
    stateful = llama2_tokenizer()
    stateful.backend_tokenizer.enable_truncation(8)
    stateful.backend_tokenizer.enable_padding(length=600)
    private = backend_of(stateful)
    assert private is not stateful.backend_tokenizer and private.truncation is None and private.padding is None
    rows = [_row(chat(i, turns=1 + i % 3)["messages"]) for i in range(4)]
    got = encode_rows(Encoder(stateful, llama2_template), rows)
    want = encode_rows(Encoder(llama2_tok, llama2_template), rows)
    assert [(r["input_ids"], r["labels"]) for r in got] == [(r["input_ids"], r["labels"]) for r in want]
    assert len(got[0]["input_ids"]) > 8
    assert stateful.backend_tokenizer.truncation["max_length"] == 8  # the user's tokenizer is left as it was
    # state set on the tokenizer after the encoder started using its backend is not used either
    clean = llama2_tokenizer()
    encoder = Encoder(clean, llama2_template)
    assert encoder.backend is clean.backend_tokenizer
    clean(["a b c d e f g h i j k l"], truncation=True, max_length=4)
    assert clean.backend_tokenizer.truncation is not None  # transformers leaves it set
    again = encode_rows(encoder, rows)
    assert [(r["input_ids"], r["labels"]) for r in again] == [(r["input_ids"], r["labels"]) for r in want]
