"""Word-memoised tokenisation for SentencePiece BPE tokenizers in the legacy layout (Llama-2, Mistral v0.1).

The fast tokenizers converted from SentencePiece BPE models (``LlamaConverter``'s legacy output)
have no pre-tokenizer: the normaliser turns spaces into ``▁`` and prepends one, and the BPE model
merges over each whole text between special tokens. The Rust BPE keeps a cache of words it has
seen, but here the "word" is the whole text, so it never hits, and every text pays the full merge
loop plus the offset bookkeeping of the normaliser (about 70% of a preparation's CPU with the
Llama-2 tokenizer).

When no vocabulary entry has a ``▁`` after any other character, no merge can join a character
to the ``▁`` that follows it. A text then tokenises as the concatenation of its words -- each run
of spaces with the characters up to the next space -- tokenised alone by the same BPE model: the
merges on either side of such a boundary never interact, whatever order their ranks give them.
:class:`WordCache` does that, asking the tokenizer's own BPE model (``backend.model.tokenize``)
once per distinct word and memoising the ids, so the ids are exactly the Rust pipeline's
(tests compare them, and the label masks, on generated texts and on every benchmark row).

It is used only where that argument holds, checked on the tokenizer's own description
(:meth:`WordCache.for_backend`): a BPE model without dropout or word affixes, no pre-tokenizer,
the normaliser ``Prepend("▁") + Replace(" ", "▁")``, special tokens matched before
normalisation without stripping, and the vocabulary condition above. Anything else keeps the
Rust ``encode_batch`` path. A text that already contains ``▁`` is tokenised as one word (its
spaces would sit next to ``▁`` runs the model may merge). The memo is bounded
(:data:`MAX_WORDS`); it is emptied when full.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from itertools import accumulate, chain, repeat
from operator import add
from typing import Any

SPACE = "\u2581"
#: distinct words memoised per process before the memo is emptied (~300 bytes each: ~20 MB at most)
MAX_WORDS = 1 << 16
_WORD = re.compile(" +[^ ]*")


def _eligible(spec: dict[str, Any]) -> bool:
    model = spec.get("model") or {}
    if model.get("type") != "BPE" or model.get("dropout") not in (None, 0.0):
        return False
    if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        return False
    if spec.get("pre_tokenizer") is not None:
        return False
    normalizer = spec.get("normalizer") or {}
    steps = normalizer.get("normalizers") if normalizer.get("type") == "Sequence" else None
    if steps != [
        {"type": "Prepend", "prepend": SPACE},
        {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
    ]:
        return False
    for added in spec.get("added_tokens") or []:
        if added.get("normalized") or added.get("lstrip") or added.get("rstrip") or added.get("single_word"):
            return False
        if not added.get("content"):
            return False
    vocab = model.get("vocab") or {}
    # a merge joining a character to the "▁" after it would need such an entry
    return not any(SPACE in token.lstrip(SPACE) for token in vocab)


def _spec(backend: Any) -> dict[str, Any]:
    """The parts of the tokenizer's JSON that :func:`_eligible` reads, from the backend's own
    attributes (serialising the whole tokenizer takes ~10x longer: vocabulary and merges)."""
    model = backend.model
    normalizer = backend.normalizer
    return {
        "model": {
            "type": type(model).__name__,
            "dropout": getattr(model, "dropout", None),
            "continuing_subword_prefix": getattr(model, "continuing_subword_prefix", None),
            "end_of_word_suffix": getattr(model, "end_of_word_suffix", None),
            "vocab": backend.get_vocab(),
        },
        "pre_tokenizer": None if backend.pre_tokenizer is None else {},
        "normalizer": json.loads(normalizer.__getstate__()) if normalizer is not None else None,
        "added_tokens": [
            {
                "id": i,
                "content": a.content,
                "normalized": a.normalized,
                "lstrip": a.lstrip,
                "rstrip": a.rstrip,
                "single_word": a.single_word,
            }
            for i, a in sorted(backend.get_added_tokens_decoder().items())
        ],
    }


class Located:
    """Where the tokens of one text start (original character offsets), worked out per query from
    the text's segments (``where`` for :meth:`openmind.data.encoding.Encoder._label`): only the
    segments a label boundary falls in are looked at."""

    __slots__ = ("segments", "cache", "_starts")

    def __init__(self, segments: list[tuple], cache: WordCache) -> None:
        #: (first character, first token, the word keys or None for a special token, their ids, the
        #: segment's text where it has single spaces only, else None)
        self.segments = segments
        self.cache = cache
        self._starts: list[int] | None = None

    def first_at(self, pos: int) -> int:
        """Index of the first token whose first character is at or after ``pos``."""
        if self._starts is None:
            self._starts = [seg[0] for seg in self.segments]
        k = bisect_right(self._starts, pos) - 1
        if k < 0:
            return 0
        start, first, keys, ids, single = self.segments[k]
        if keys is None:  # a special token: one token at ``start``
            return first if start >= pos else first + 1
        # word j (" " + keys[j]) has its normalised character 0 at original character start - 1 +
        # (length of the words before it); the prepended "▁" of word 0 maps to ``start``
        if single is not None:  # single spaces: word j starts at the j-th space (found in C)
            space = single.rfind(" ", 0, pos - start + 1)
            j = single.count(" ", 0, space + 1) if space >= 0 else 0
            base = start + space
        else:
            bases = list(accumulate(map(add, map(len, keys), repeat(1)), initial=start - 1))
            j = bisect_right(bases, pos, hi=len(keys)) - 1
            base = bases[j]
        token = first + sum(map(len, ids[:j]))
        for k, offset in enumerate(self.cache.starts_of(keys[j])):
            if max(base + offset, start) >= pos:
                return token + k
        return token + len(ids[j])


class WordCache:
    """Ids (and token starts) of whole texts from memoised per-word BPE results; see the module.

    A word is a run of spaces and the characters up to the next space; it is memoised under its
    *key*, the word without its first space (for text without double spaces: ``part.split(" ")``).
    """

    def __init__(self, backend: Any, specials: dict[str, int]) -> None:
        self.backend = backend
        self.model = backend.model
        self.specials = specials
        ordered = sorted(specials, key=len, reverse=True)  # leftmost-longest, as the Rust matcher
        self._split = re.compile("(" + "|".join(map(re.escape, ordered)) + ")").split if ordered else None
        self.words: dict[str, tuple[int, ...]] = {}
        self._starts: dict[str, tuple[int, ...]] = {}

    @classmethod
    def for_backend(cls, backend: Any) -> WordCache | None:
        """A cache for ``backend`` (a ``tokenizers.Tokenizer``), or None where it would not be exact."""
        if getattr(backend, "pre_tokenizer", 0) is not None:  # cheap first check: most tokenizers have one
            return None
        try:
            spec = _spec(backend)
        except Exception:  # noqa: BLE001 - a backend that does not describe itself: not eligible
            return None
        if not _eligible(spec):
            return None
        specials = {a["content"]: a["id"] for a in spec.get("added_tokens") or []}
        return cls(backend, specials)

    def _word(self, key: str) -> tuple[int, ...]:
        """Tokenise the word ``" " + key`` with the BPE model and memoise its ids and token starts."""
        normalised = SPACE + key.replace(" ", SPACE)
        tokens = self.model.tokenize(normalised)
        # the model's offsets count UTF-8 bytes: the character each token starts in (byte-fallback
        # tokens of one character all start at it, as in the Rust pipeline's offsets)
        data = normalised.encode()
        starts = tuple(len(data[: t.offsets[0]].decode("utf-8", errors="ignore")) for t in tokens)
        ids = tuple(t.id for t in tokens)
        if len(self.words) >= MAX_WORDS:
            self.words.clear()
            self._starts.clear()
        self.words[key] = ids
        self._starts[key] = starts
        return ids

    def starts_of(self, key: str) -> tuple[int, ...]:
        """Where the tokens of word ``" " + key`` start in it (normalised characters)."""
        starts = self._starts.get(key)
        if starts is None:  # emptied since (the memo is bounded): the same result again
            self._word(key)
            starts = self._starts[key]
        return starts

    def encode(self, text: str) -> tuple[list[int], Located]:
        """``(ids, where)`` of ``text`` as ``backend.encode(text, add_special_tokens=False)`` gives them."""
        parts = self._split(text) if self._split else [text]
        ids: list[int] = []
        segments: list = []
        get = self.words.get
        pos = 0
        for i, part in enumerate(parts):
            if i & 1:  # a special token
                segments.append((pos, len(ids), None, None, None))
                ids.append(self.specials[part])
                pos += len(part)
                continue
            if not part:
                continue
            # the segment's normalised text is "▁" + part with spaces as "▁": character k > 0 of it is
            # character k - 1 of the part; the prepended one maps to the part's first character
            single = None
            if SPACE in part:  # a "▁" in the text may merge with the spaces around it: one word
                keys = [part]
            elif "  " in part or part[0] == " ":  # runs of spaces stay in one word
                keys = [w[1:] for w in _WORD.findall(" " + part)]
            else:
                keys, single = part.split(" "), part
            found = list(map(get, keys))
            if None in found:  # words met for the first time (looked for in C, filled one by one)
                k = found.index(None)
                while True:
                    found[k] = self._word(keys[k])
                    try:
                        k = found.index(None, k + 1)
                    except ValueError:
                        break
            segments.append((pos, len(ids), keys, found, single))
            ids += chain.from_iterable(found)
            pos += len(part)
        return ids, Located(segments, self)

    def encode_batch(self, texts: list[str]) -> list[tuple[list[int], Located]]:
        return [self.encode(text) for text in texts]
