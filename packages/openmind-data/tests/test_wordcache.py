"""Word-memoised tokenisation (openmind.data.wordcache): the same ids and token starts as the Rust
pipeline on the real Llama-2 tokenizer, label masks equal with and without it, and it is used only
where the tokenizer's own JSON makes it exact."""

import json
import random

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


def test_ids_and_token_starts_equal_the_rust_pipeline(llama2_tok):
    rng = random.Random(0)
    texts = ["", " ", "Hello world", "  two  spaces  ", "a\u2581 b", "<s>[INST] Hi [/INST] Hello </s>"]
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40))) for _ in range(400)]
    _assert_same(llama2_tok.backend_tokenizer, texts)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=6), max_size=25))
def test_ids_equal_for_any_text(llama2_tok, parts):
    _assert_same(llama2_tok.backend_tokenizer, ["".join(parts)])


def test_bounded_memo_gives_the_same_ids(llama2_tok, monkeypatch):
    monkeypatch.setattr(wordcache, "MAX_WORDS", 8)
    backend = llama2_tok.backend_tokenizer
    cache = WordCache.for_backend(backend)
    texts = [f"word{i} and more words {i * 7}" for i in range(50)]
    assert [ids for ids, _ in cache.encode_batch(texts)] == [e.ids for e in _rust(backend, texts)]
    assert len(cache.words) <= 8


def test_label_masks_equal_with_and_without_the_memo(llama2_tok, llama2_template):
    rows = [chat(i, turns=1 + i % 4, system="be brief " * (i % 3) or None)["messages"] for i in range(40)]
    rows.append([{"role": "user", "content": " lead  and  trail "}, {"role": "assistant", "content": "a\u2581 b 😀 "}])
    batch = [{"messages": [message(m["role"], m["content"]) for m in r], "tools": None} for r in rows]
    for train_on in ("assistant", "last"):
        memo = Encoder(llama2_tok, llama2_template, train_on=train_on)
        assert memo.words is not None  # the Llama-2 tokenizer is eligible
        rust = Encoder(llama2_tok, llama2_template, train_on=train_on)
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

    # the layout current transformers converts SentencePiece models to: no normaliser, a Metaspace
    # pre-tokenizer that prepends "▁" to the first section only
    spec = _spec(llama2_tok)
    spec["normalizer"] = None
    spec["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
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
