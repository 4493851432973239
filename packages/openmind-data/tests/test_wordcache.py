"""Word-memoised tokenisation (openmind.data.wordcache): the same ids and token starts as the Rust
pipeline on the real Llama-2 tokenizer, label masks equal with and without it, and it is used only
where the tokenizer's own JSON makes it exact."""

import json
import random

import pytest
from data_helpers import chat
from hypothesis import given, settings
from hypothesis import strategies as st

from openmind.data import wordcache
from openmind.data.encoding import Encoder, encode_rows
from openmind.data.formats import message
from openmind.data.wordcache import WordCache

# characters that stress the word boundaries: space runs, the "▁" itself, byte-fallback characters,
# other whitespace, and the special tokens (matched before normalisation)
PIECES = [
    " ",
    "  ",
    "   ",
    "\n",
    "\t",
    "a",
    "b",
    "the",
    "é",
    "中",
    "😀",
    "\u2581",
    "<s>",
    "</s>",
    "<unk>",
    ".",
    " .",
    "x y",
]


def _rust(backend, texts):
    return backend.encode_batch(texts, add_special_tokens=False)


_CACHES = {}


def _assert_same(backend, texts):
    cache = _CACHES.get(id(backend)) or _CACHES.setdefault(id(backend), WordCache.for_backend(backend))
    assert cache is not None
    for text, ref, (ids, where) in zip(texts, _rust(backend, texts), cache.encode_batch(texts)):
        assert ids == ref.ids, repr(text)
        for pos in range(len(text) + 1):  # first token at or after every character position
            assert where.first_at(pos) == Encoder._first_at(ref, pos, len(ids)), (repr(text), pos)


#: the layouts SentencePiece BPE tokenizers come in: the legacy tokenizer.json (Llama-2, Mistral v0.1:
#: a Prepend + Replace normaliser), and what current transformers converts them to (no normaliser, a
#: Metaspace pre-tokenizer putting "▁" before the first section only, or before every section)
LAYOUTS = ["legacy", "first", "always"]
_BACKENDS = {}


def _layout_backend(llama2_tok, layout):
    if layout == "legacy":
        return llama2_tok.backend_tokenizer
    if layout not in _BACKENDS:
        spec = _spec(llama2_tok)
        spec["normalizer"] = None
        spec["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": layout, "split": False}
        _BACKENDS[layout] = _backend(spec)
    return _BACKENDS[layout]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_ids_and_token_starts_equal_the_rust_pipeline(llama2_tok, layout):
    rng = random.Random(0)
    texts = ["", " ", "Hello world", "  two  spaces  ", "a\u2581 b", "<s>[INST] Hi [/INST] Hello </s>"]
    texts += ["<s>Hello", "<s> Hello", "</s>  x", "\u2581x y", " \u2581", "<s>\u2581 a", "<s> ", "x<s>"]
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40))) for _ in range(400)]
    backend = _layout_backend(llama2_tok, layout)
    assert WordCache.for_backend(backend).layout == layout
    _assert_same(backend, texts)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(LAYOUTS), st.lists(st.sampled_from(PIECES) | st.text(max_size=6), max_size=25))
def test_ids_equal_for_any_text(llama2_tok, layout, parts):
    _assert_same(_layout_backend(llama2_tok, layout), ["".join(parts)])


@pytest.mark.parametrize("layout", ["legacy", "first"])
def test_bounded_memo_gives_the_same_ids(llama2_tok, layout, monkeypatch):
    monkeypatch.setattr(wordcache, "MAX_WORDS", 8)
    backend = _layout_backend(llama2_tok, layout)
    cache = WordCache.for_backend(backend)
    texts = [f"word{i} and more words {i * 7}</s>after{i} the end" for i in range(50)]
    assert [ids for ids, _ in cache.encode_batch(texts)] == [e.ids for e in _rust(backend, texts)]
    for text, (_, where) in zip(texts, cache.encode_batch(texts)):  # starts worked out after the memo emptied
        ref = _rust(backend, [text])[0]
        assert [where.first_at(p) for p in range(len(text))] == [
            Encoder._first_at(ref, p, len(ref.ids)) for p in range(len(text))
        ]
    assert len(cache.words) <= 8 and len(cache.bare) <= 8 and len(cache._starts) <= 8


@pytest.mark.parametrize("layout", ["legacy", "first"])
def test_label_masks_equal_with_and_without_the_memo(llama2_tok, llama2_template, layout):
    from transformers import PreTrainedTokenizerFast

    tok = llama2_tok
    if layout != "legacy":
        tok = PreTrainedTokenizerFast(tokenizer_object=_layout_backend(llama2_tok, layout))
    rows = [chat(i, turns=1 + i % 4, system="be brief " * (i % 3) or None)["messages"] for i in range(40)]
    rows.append([{"role": "user", "content": " lead  and  trail "}, {"role": "assistant", "content": "a\u2581 b 😀 "}])
    batch = [{"messages": [message(m["role"], m["content"]) for m in r], "tools": None} for r in rows]
    for train_on in ("assistant", "last"):
        memo = Encoder(tok, llama2_template, train_on=train_on)
        assert memo.words is not None and memo.words.layout == layout  # eligible
        rust = Encoder(tok, llama2_template, train_on=train_on)
        rust._words = False
        assert rust.words is None
        assert encode_rows(memo, batch) == encode_rows(rust, batch)


def _spec(llama2_tok):
    return json.loads(llama2_tok.backend_tokenizer.to_str())


def _backend(spec):
    from tokenizers import Tokenizer

    return Tokenizer.from_str(json.dumps(spec))


def test_used_only_where_exact(llama2_tok):
    assert WordCache.for_backend(_backend(_spec(llama2_tok))) is not None
    # a vocabulary entry with "▁" after another character: a merge could cross a word boundary
    spec = _spec(llama2_tok)
    spec["model"]["vocab"]["a\u2581"] = len(spec["model"]["vocab"])
    assert WordCache.for_backend(_backend(spec)) is None
    # a pre-tokenizer, another normaliser, a stripping added token, BPE dropout: the Rust path
    spec = _spec(llama2_tok)
    spec["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}
    assert WordCache.for_backend(_backend(spec)) is None
    # Metaspace: only without the normaliser, without splitting, and with a "▁" put before sections
    for pre in ({"split": True}, {"prepend_scheme": "never"}, {"replacement": "_"}):
        spec = _spec(llama2_tok)
        spec["normalizer"] = None
        spec["pre_tokenizer"] = {
            "type": "Metaspace",
            "replacement": "\u2581",
            "prepend_scheme": "first",
            "split": False,
        }
        spec["pre_tokenizer"].update(pre)
        assert WordCache.for_backend(_backend(spec)) is None, pre
    spec = _spec(llama2_tok)  # both a normaliser and a Metaspace pre-tokenizer
    spec["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
    assert WordCache.for_backend(_backend(spec)) is None
    spec = _spec(llama2_tok)
    spec["normalizer"]["normalizers"] = spec["normalizer"]["normalizers"][1:]
    assert WordCache.for_backend(_backend(spec)) is None
    spec = _spec(llama2_tok)
    spec["added_tokens"][2]["lstrip"] = True
    assert WordCache.for_backend(_backend(spec)) is None
    spec = _spec(llama2_tok)
    spec["model"]["dropout"] = 0.1
    assert WordCache.for_backend(_backend(spec)) is None


def test_other_tokenizers_keep_the_rust_path(llama2_tok):
    from transformers import PreTrainedTokenizerFast

    # a pre-tokenizer the memo does not cover (a Metaspace that splits at every "▁")
    spec = _spec(llama2_tok)
    spec["normalizer"] = None
    spec["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}
    tok = PreTrainedTokenizerFast(tokenizer_object=_backend(spec))
    enc = Encoder(tok)
    assert enc.words is None
    text = "<s>hello  world </s>"
    assert enc.tokenize([text])[0][0] == tok(text, add_special_tokens=False)["input_ids"]


def test_a_backend_with_truncation_state_gets_its_own_memo(llama2_tok):
    from openmind.nlp.testing.assets import llama2_tokenizer

    tok = llama2_tokenizer()
    enc = Encoder(tok)
    first = enc.words
    tok("some text", truncation=True, max_length=4)  # leaves truncation on the backend: a private copy
    assert enc.words is not None and enc.words is not first
    assert enc.words.backend is enc.backend
