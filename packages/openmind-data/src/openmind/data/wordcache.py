"""Word-memoised tokenisation for SentencePiece BPE tokenizers (Llama-2, Mistral, and the like).

Fast tokenizers of SentencePiece BPE models come in two layouts. The legacy ``tokenizer.json``
(Llama-2 and Mistral-7B v0.1 publish it) has no pre-tokenizer: the normaliser turns spaces into ``▁``
and prepends one to every section between special tokens. What current transformers converts a
``tokenizer.model`` to has no normaliser and a ``Metaspace`` pre-tokenizer that turns spaces into
``▁`` and prepends one to the first section only (``prepend_scheme="first"``) or to every section
(``"always"``), unless the section already starts with one, without splitting. Either way the BPE
model merges over each whole section. The Rust BPE keeps a cache of words it has seen, but here the
"word" is the whole text, so it never hits, and every text pays the full merge loop plus the offset
bookkeeping (about 70% of a preparation's CPU with the Llama-2 tokenizer).

When no vocabulary entry has a ``▁`` after any other character, no merge can join a character
to the ``▁`` that follows it. A text then tokenises as the concatenation of its words -- each run
of spaces with the characters up to the next space -- tokenised alone by the same BPE model: the
merges on either side of such a boundary never interact, whatever order their ranks give them.
:class:`WordCache` does that, asking the tokenizer's own BPE model (``backend.model.tokenize``)
once per distinct word and memoising the ids, so the ids are exactly the Rust pipeline's
(tests compare them, and the label masks, on generated texts and on every benchmark row). Where
``Metaspace`` puts no ``▁`` before a section (after a special token with ``"first"``, or a section
that starts with a space), its characters up to the first space are a *bare* piece, memoised apart.

It is used only where that argument holds, checked on the tokenizer's own description
(:meth:`WordCache.for_backend`): a BPE model without dropout or word affixes; either no
pre-tokenizer and the normaliser ``Prepend("▁") + Replace(" ", "▁")``, or no normaliser and
``Metaspace("▁", prepend_scheme="first"|"always", split=False)``; special tokens matched before
normalisation without stripping; and the vocabulary condition above. Anything else keeps the
Rust ``encode_batch`` path. A text that already contains ``▁`` is tokenised as one word (its
spaces would sit next to ``▁`` runs the model may merge). The memo is bounded
(:data:`MAX_WORDS`); it is emptied when full. Token starts (for label masks) are worked out
only for the words a label boundary falls in.
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


#: the legacy layout's normaliser (no pre-tokenizer): "▁" prepended to every section, spaces to "▁"
LEGACY_NORMALIZER = [
    {"type": "Prepend", "prepend": SPACE},
    {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
]


def _layout(spec: dict[str, Any]) -> str | None:
    """Which "▁" prefix rule the tokenizer applies to each section between special tokens:
    ``"legacy"`` (always), ``"always"`` (unless the section starts with a space or "▁"),
    ``"first"`` (as "always", for the section at the start of the text only); None: not covered."""
    model = spec.get("model") or {}
    if model.get("type") != "BPE" or model.get("dropout") not in (None, 0.0):
        return None
    if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        return None
    normalizer, pre = spec.get("normalizer"), spec.get("pre_tokenizer")
    if pre is None and normalizer and normalizer.get("type") == "Sequence":
        layout = "legacy" if normalizer.get("normalizers") == LEGACY_NORMALIZER else None
    elif normalizer is None and pre and pre.get("type") == "Metaspace":
        metaspace = pre.get("replacement") == SPACE and pre.get("split") is False
        layout = pre.get("prepend_scheme") if metaspace and pre.get("prepend_scheme") in ("first", "always") else None
    else:
        layout = None
    if layout is None:
        return None
    for added in spec.get("added_tokens") or []:
        if added.get("normalized") or added.get("lstrip") or added.get("rstrip") or added.get("single_word"):
            return None
        if not added.get("content"):
            return None
    vocab = model.get("vocab") or {}
    # a merge joining a character to the "▁" after it would need such an entry
    return None if any(SPACE in token.lstrip(SPACE) for token in vocab) else layout


def _eligible(spec: dict[str, Any]) -> bool:
    return _layout(spec) is not None


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
        "pre_tokenizer": json.loads(pre.__getstate__()) if (pre := backend.pre_tokenizer) is not None else None,
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
        #: (first character, first token, what the segment is, its ids, the segment's text where it
        #: has single spaces only else None, the first character its leading "▁" may map to). What it
        #: is: None for a special token (one token); a str for a piece tokenised as it is, without a
        #: "▁" put before it; else the list of its word keys.
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
        start, first, keys, ids, single, floor = self.segments[k]
        if keys is None:  # a special token: one token at ``start``
            return first if start >= pos else first + 1
        if keys.__class__ is str:  # a piece as it is: its characters are the normalised ones
            for k, offset in enumerate(self.cache.bare_starts_of(keys)):
                if start + offset >= pos:
                    return first + k
            return first + len(ids)
        # word j (" " + keys[j]) has its normalised character 0 at original character start - 1 +
        # (length of the words before it); a "▁" put before the segment maps to ``floor``
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
            if max(base + offset, floor) >= pos:
                return token + k
        return token + len(ids[j])


class WordCache:
    """Ids (and token starts) of whole texts from memoised per-word BPE results; see the module.

    A word is a run of spaces and the characters up to the next space; it is memoised under its
    *key*, the word without its first space (for text without double spaces: ``part.split(" ")``).
    Where the layout puts no "▁" before a section (Metaspace: after a special token, or a section
    that starts with a space), the characters up to its first space are a *bare* piece, memoised
    apart.
    """

    def __init__(self, backend: Any, specials: dict[str, int], layout: str = "legacy") -> None:
        self.backend = backend
        self.model = backend.model
        self.specials = specials
        self.layout = layout
        ordered = sorted(specials, key=len, reverse=True)  # leftmost-longest, as the Rust matcher
        self._split = re.compile("(" + "|".join(map(re.escape, ordered)) + ")").split if ordered else None
        self.words: dict[str, tuple[int, ...]] = {}
        self._starts: dict[str, tuple[int, ...]] = {}
        self.bare: dict[str, tuple[int, ...]] = {}
        self._bare_starts: dict[str, tuple[int, ...]] = {}

    @classmethod
    def for_backend(cls, backend: Any) -> WordCache | None:
        """A cache for ``backend`` (a ``tokenizers.Tokenizer``), or None where it would not be exact."""
        pre = getattr(backend, "pre_tokenizer", 0)
        if pre is not None and type(pre).__name__ != "Metaspace":  # cheap first check: most have another
            return None
        try:
            spec = _spec(backend)
        except Exception:  # noqa: BLE001 - a backend that does not describe itself: not eligible
            return None
        layout = _layout(spec)
        if layout is None:
            return None
        specials = {a["content"]: a["id"] for a in spec.get("added_tokens") or []}
        return cls(backend, specials, layout)

    def _tokens(self, normalised: str) -> list:
        return self.model.tokenize(normalised)

    @staticmethod
    def _char_starts(normalised: str, tokens: list) -> tuple[int, ...]:
        # the model's offsets count UTF-8 bytes: the character each token starts in (byte-fallback
        # tokens of one character all start at it, as in the Rust pipeline's offsets)
        data = normalised.encode()
        return tuple(len(data[: t.offsets[0]].decode("utf-8", errors="ignore")) for t in tokens)

    def _word(self, key: str) -> tuple[int, ...]:
        """Tokenise the word ``" " + key`` with the BPE model and memoise its ids."""
        ids = tuple(t.id for t in self._tokens(SPACE + key.replace(" ", SPACE)))
        if len(self.words) >= MAX_WORDS:
            self.words.clear()
        self.words[key] = ids
        return ids

    def starts_of(self, key: str) -> tuple[int, ...]:
        """Where the tokens of word ``" " + key`` start in it (normalised characters).

        Worked out when a label boundary first falls in the word (most words never hold one) and
        memoised beside the ids."""
        starts = self._starts.get(key)
        if starts is None:
            normalised = SPACE + key.replace(" ", SPACE)
            starts = self._char_starts(normalised, self._tokens(normalised))
            if len(self._starts) >= MAX_WORDS:
                self._starts.clear()
            self._starts[key] = starts
        return starts

    def _bare(self, key: str) -> tuple[int, ...]:
        """Tokenise the piece ``key`` as it is (spaces as "▁", nothing put before it) and memoise its ids."""
        ids = tuple(t.id for t in self._tokens(key.replace(" ", SPACE)))
        if len(self.bare) >= MAX_WORDS:
            self.bare.clear()
        self.bare[key] = ids
        return ids

    def bare_starts_of(self, key: str) -> tuple[int, ...]:
        """Where the tokens of the bare piece ``key`` start in it (characters)."""
        starts = self._bare_starts.get(key)
        if starts is None:
            normalised = key.replace(" ", SPACE)
            starts = self._char_starts(normalised, self._tokens(normalised))
            if len(self._bare_starts) >= MAX_WORDS:
                self._bare_starts.clear()
            self._bare_starts[key] = starts
        return starts

    def _words(self, part: str, pos: int, floor: int, ids: list[int], segments: list) -> None:
        """The segment of ``"▁" + part`` (spaces as "▁") at character ``pos``: its words' ids."""
        single = None
        if SPACE in part:  # a "▁" in the text may merge with the spaces around it: one word
            keys = [part]
        elif "  " in part or part[:1] == " ":  # runs of spaces stay in one word
            keys = [w[1:] for w in _WORD.findall(" " + part)]
        else:
            keys, single = part.split(" "), part
        get = self.words.get
        found = list(map(get, keys))
        if None in found:  # words met for the first time (looked for in C, filled one by one)
            k = found.index(None)
            while True:
                found[k] = self._word(keys[k])
                try:
                    k = found.index(None, k + 1)
                except ValueError:
                    break
        segments.append((pos, len(ids), keys, found, single, floor))
        ids += chain.from_iterable(found)

    def _as_is(self, part: str, pos: int, ids: list[int], segments: list) -> None:
        """A section with no "▁" put before it (Metaspace): the characters up to its first space
        as one bare piece, then the rest, which starts with a space: "▁" + its words."""
        if SPACE in part:  # a "▁" in the text may merge with the spaces around it: one piece
            head, rest = part, ""
        else:
            cut = part.find(" ")
            head, rest = (part, "") if cut < 0 else (part[:cut], part[cut:])
        if head:
            found = self.bare.get(head) or self._bare(head)
            segments.append((pos, len(ids), head, found, None, pos))
            ids += found
        if rest:  # its first space is the "▁" of its first word (at that space: no earlier floor)
            start = pos + len(head) + 1
            self._words(rest[1:], start, start - 1, ids, segments)

    def encode(self, text: str) -> tuple[list[int], Located]:
        """``(ids, where)`` of ``text`` as ``backend.encode(text, add_special_tokens=False)`` gives them."""
        parts = self._split(text) if self._split else [text]
        ids: list[int] = []
        segments: list = []
        layout = self.layout
        pos = 0
        for i, part in enumerate(parts):
            if i & 1:  # a special token
                segments.append((pos, len(ids), None, None, None, pos))
                ids.append(self.specials[part])
                pos += len(part)
                continue
            if not part:
                continue
            if layout != "legacy" and (part[0] == " " or part[0] == SPACE or (pos and layout == "first")):
                self._as_is(part, pos, ids, segments)  # Metaspace puts no "▁" before this section
            else:
                # the segment's normalised text is "▁" + part with spaces as "▁": character k > 0 of it
                # is character k - 1 of the part; the prepended one maps to the part's first character
                self._words(part, pos, pos, ids, segments)
            pos += len(part)
        return ids, Located(segments, self)

    def encode_batch(self, texts: list[str]) -> list[tuple[list[int], Located]]:
        return [self.encode(text) for text in texts]
