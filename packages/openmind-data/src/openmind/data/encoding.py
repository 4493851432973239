"""Template rendering + tokenisation with per-turn label masks, batched through fast tokenizers.

How a conversation becomes ``input_ids``/``labels``:

1. the template cuts the rendered conversation into ``(text, trainable)`` pieces
   (:meth:`openmind.nlp.templates.Template.segments`);
2. the whole rendered string is tokenised **once** (a batch of conversations in one call to the
   Rust tokenizer), so ``input_ids`` are exactly what ``apply_chat_template(tokenize=True)``
   gives — tokens merge across piece boundaries the same way they do at inference. SentencePiece
   BPE tokenizers (Llama-2, Mistral: the legacy ``tokenizer.json`` layout and the ``Metaspace`` one
   of current conversions) go through :mod:`openmind.data.wordcache` instead: the same BPE model
   asked once per distinct word, the same ids, ~4x less CPU;
3. each token takes the piece its first character belongs to (character offsets from the
   tokenizer): tokens of trainable pieces keep their id as label, the others get
   ``IGNORE_INDEX``. ``train_on``: ``assistant`` (every assistant turn, the default), ``last``
   (only the last assistant turn) or ``all``.

Tokenising each piece on its own (what a naive per-turn encoder does) can differ from this at
the boundaries — with Llama-2's tokenizer it adds a spurious ``▁`` (id 29871) at the start of
every answer — so openmind tokenises whole strings. Slow (Python) tokenizers, which have no
offsets, fall back to :meth:`Template.encode` piece by piece.

Truncation (``cutoff_len``): ``right`` keeps the start, ``left`` keeps the end, ``drop`` leaves
the sample out, ``error`` raises OM-D007; all are counted. A sample left without any trainable
token (after truncation) is dropped and counted.
"""

from __future__ import annotations

import json
import weakref
from bisect import bisect_left
from typing import Any

from openmind.core.training.layout import IGNORE_INDEX
from openmind.data.formats import PAIR_STAGES, for_template, parse_tools
from openmind.data.wordcache import Located, WordCache

#: row status codes written by the encoder (counted in the report, see preparation.py)
OK, TRUNCATED, DROPPED, TOO_LONG, NO_LABELS = 0, 1, 2, 3, 4
TRUNCATIONS = ("right", "left", "drop", "error", "proportional")
#: tokens beyond cutoff_len a cut text must still give (tokens near a cut may differ from the whole text's)
CUT_MARGIN = 16
TRAIN_ON = ("assistant", "all", "last")


_BACKENDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def backend_of(tokenizer: Any):
    """The fast tokenizer's Rust backend without truncation/padding state, or None.

    The backend itself when it has neither (what ``encode_batch`` then returns is exactly what a
    private copy would); otherwise a copy without them, kept per tokenizer object (building one
    serialises and parses the whole vocabulary: 0.1-0.4 s for Llama-2's)."""
    backend = getattr(tokenizer, "backend_tokenizer", None) if getattr(tokenizer, "is_fast", False) else None
    if backend is None:
        return None
    if backend.truncation is None and backend.padding is None:
        return backend
    try:
        cached = _BACKENDS.get(tokenizer)
    except TypeError:  # not weak-referenceable
        cached = None
    if cached is not None:
        return cached
    from tokenizers import Tokenizer

    copy = Tokenizer.from_str(backend.to_str())
    copy.no_truncation()
    copy.no_padding()
    try:
        _BACKENDS[tokenizer] = copy
    except TypeError:
        pass
    return copy


def _bos_eos(tokenizer: Any) -> tuple[list[int], list[int]]:
    """What the tokenizer adds around a plain text (for pre-training rows)."""
    bos = getattr(tokenizer, "bos_token_id", None)
    eos = getattr(tokenizer, "eos_token_id", None)
    probe = tokenizer("a", add_special_tokens=True)["input_ids"]
    prefix = [bos] if bos is not None and probe and probe[0] == bos else []
    return prefix, ([eos] if eos is not None else [])


class Encoder:
    """Batch function for ``datasets.map(batched=True)``: standard rows -> ids/labels.

    :param stage: ``sft`` (conversations), ``pt`` (text), ``dpo``/``rm``/``orpo``/``simpo``
        (preference pairs), ``kto`` (one answer + its ``label``: ``input_ids``/``labels`` with only the
        last answer trained) or ``grpo`` (``prompt_ids``: the prompt up to the assistant header, and the
        reference ``answer`` text).
    """

    def __init__(
        self,
        tokenizer: Any,
        template: Any = None,
        *,
        stage: str = "sft",
        train_on: str = "assistant",
        cutoff_len: int = 1024,
        truncation: str = "right",
    ) -> None:
        if train_on not in TRAIN_ON:
            raise ValueError(f"train_on must be one of {TRAIN_ON}")
        if truncation not in TRUNCATIONS:
            raise ValueError(f"truncation must be one of {TRUNCATIONS}")
        self.tokenizer = tokenizer
        self.template = template
        self.stage = stage
        self.train_on = "last" if stage in (*PAIR_STAGES, "kto", "grpo") else train_on
        self.cutoff_len = int(cutoff_len)
        self.truncation = truncation
        self._backend = None
        #: per-word memo of the BPE (:mod:`openmind.data.wordcache`); False: the tokenizer is not eligible
        self._words: Any = None
        self._specials: tuple[list[int], list[int]] | None = None
        self._longest: int | None = None
        #: return ``pyarrow.Table`` batches (what ``prepare`` uses: no per-value type inference on write)
        self.arrow = False

    def __getstate__(self) -> dict[str, Any]:  # the Rust backend copy is rebuilt in each worker
        state = dict(self.__dict__)
        state["_backend"] = None
        state["_words"] = None
        return state

    # ---- tokenisation -----------------------------------------------------------------
    @property
    def backend(self):
        backend = self._backend
        # the tokenizer's own backend is used while it has no truncation/padding; a call such as
        # tokenizer(..., truncation=True) leaves that state on it, then a private copy is made
        if backend is None or (backend and (backend.truncation is not None or backend.padding is not None)):
            backend = self._backend = backend_of(self.tokenizer) or False
        return backend

    def warm(self) -> Encoder:
        """Build what every batch needs (the Rust backend, the character bound of
        :meth:`char_limit`) once, before worker processes are forked: they inherit it instead of
        each parsing the vocabulary again."""
        _ = self.words
        self.char_limit()
        return self

    @property
    def words(self) -> Any:
        """The word-memoised encoder of the backend where it is exact, else None (built once)."""
        words = self._words
        backend = self.backend
        if words is None or (words and words.backend is not backend):
            words = self._words = (WordCache.for_backend(backend) if backend else None) or False
        return words or None

    def tokenize(self, texts: list[str]) -> list[tuple[list[int], Any]]:
        """``[(ids, where)]`` of whole strings, in one batched call; ``where`` locates characters
        (a ``tokenizers.Encoding``, a :class:`~openmind.data.wordcache.Located`, or the list of
        token start offsets)."""
        words = self.words
        if words is not None:
            return words.encode_batch(texts)
        backend = self.backend
        if backend:
            return [(e.ids, e) for e in backend.encode_batch(texts, add_special_tokens=False)]
        out = self.tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)
        return [(ids, [o[0] for o in offs]) for ids, offs in zip(out["input_ids"], out["offset_mapping"])]

    def char_limit(self) -> int | None:
        """Characters of a text that can matter for ``cutoff_len`` tokens (None: no limit).

        No token covers more characters than the longest vocabulary entry, so the first (or last)
        ``(cutoff_len + CUT_MARGIN) * longest`` characters hold at least the tokens that survive
        truncation. Texts beyond it are cut before tokenising: memory and time per row are bounded
        by this many characters, whatever the row's size (a 10 MB row tokenises ~70k characters
        for cutoff_len 1024 with the Llama-2 vocabulary).
        """
        # proportional truncation cuts each turn: a pre-cut of the whole text would change what it keeps
        if self.cutoff_len >= 1 << 40 or self.truncation not in ("right", "left", "drop", "error"):
            return None
        if self._longest is None:
            try:
                self._longest = max((len(t) for t in self.tokenizer.get_vocab()), default=0) or 0
            except Exception:  # noqa: BLE001 - a tokenizer without a vocabulary: no cut
                self._longest = 0
        if not self._longest:
            return None
        return (self.cutoff_len + CUT_MARGIN) * max(self._longest, 1)

    def tokenize_bounded(self, texts: list[str]) -> tuple[list[tuple[list[int], Any]], list[str], list[int]]:
        """:meth:`tokenize` with texts beyond :meth:`char_limit` cut first (the start kept, or the
        end for ``truncation=left``): ``(encoded, texts as tokenised, characters cut off the start)``.

        A cut text that gives fewer than ``cutoff_len + CUT_MARGIN`` tokens (a tokenizer that drops
        characters, such as whitespace) is tokenised whole instead, so the kept tokens are always
        those of the whole text: tokens differ only around the cut, which lies beyond them.
        """
        limit = self.char_limit()
        shifts = [0] * len(texts)
        if limit is None or all(len(t) <= limit for t in texts):
            return self.tokenize(texts), texts, shifts
        cut = list(texts)
        for k, text in enumerate(texts):
            if len(text) > limit:
                if self.truncation == "left":
                    cut[k], shifts[k] = text[-limit:], len(text) - limit
                else:
                    cut[k] = text[:limit]
        encoded = self.tokenize(cut)
        for k, text in enumerate(texts):
            if cut[k] is not text and len(encoded[k][0]) < self.cutoff_len + CUT_MARGIN:
                encoded[k] = self.tokenize([text])[0]
                cut[k], shifts[k] = text, 0
        return encoded, cut, shifts

    @staticmethod
    def _first_at(where: Any, pos: int, n: int) -> int:
        """Index of the first token whose first character is at or after ``pos``."""
        if isinstance(where, list):
            return bisect_left(where, pos)
        if isinstance(where, Located):
            return where.first_at(pos)
        k = where.char_to_token(pos)
        if k is None:  # a character no token covers: fall back to the offsets
            return bisect_left([o[0] for o in where.offsets], pos)
        return k + 1 if where.token_to_chars(k)[0] < pos else k

    # ---- conversations ----------------------------------------------------------------
    def pieces(self, messages: list[dict], tools: Any) -> list[tuple[str, bool]]:
        return self.template.segments(for_template(messages), tools=parse_tools(tools))

    def _spans(self, pieces: list[tuple[str, bool]]) -> tuple[str, list[tuple[int, int]]]:
        """The whole string and the character spans that carry labels."""
        spans = []
        pos = 0
        trainable = [i for i, (_, t) in enumerate(pieces) if t]
        keep = set(trainable[-1:]) if self.train_on == "last" else set(trainable)
        for i, (text, _) in enumerate(pieces):
            if i in keep:
                spans.append((pos, pos + len(text)))
            pos += len(text)
        return "".join(t for t, _ in pieces), spans

    def _label(self, ids: list[int], where: Any, spans: list[tuple[int, int]], length: int) -> list[int]:
        if self.train_on == "all":
            return list(ids)
        labels = [IGNORE_INDEX] * len(ids)
        n = len(ids)
        for a, b in spans:
            if a >= b:
                continue
            i = self._first_at(where, a, n)
            j = n if b >= length else self._first_at(where, b, n)
            labels[i:j] = ids[i:j]
        return labels

    def encode_conversations(self, items: list[tuple[list[dict], Any]]) -> list[tuple[list[int], list[int]] | str]:
        """``[(messages, tools)]`` -> ``[(ids, labels)]`` (or an error text for a row the template refuses)."""
        from openmind.core.errors import OpenMindError

        texts: list[str] = []
        spans: list[list[tuple[int, int]] | None] = []
        errors: dict[int, str] = {}
        slow: dict[int, tuple[list[int], list[int]]] = {}
        for k, (messages, tools) in enumerate(items):
            try:
                if not self.backend and not getattr(self.tokenizer, "is_fast", False):
                    enc = self.template.encode(
                        self.tokenizer, for_template(messages), tools=parse_tools(tools), train_on=self.train_on
                    )
                    slow[k] = (enc.input_ids, enc.labels)
                    texts.append("")
                    spans.append(None)
                    continue
                text, sp = self._spans(self.pieces(messages, tools))
            except OpenMindError as exc:
                errors[k] = exc.message
                text, sp = "", None
            texts.append(text)
            spans.append(sp)
        out: list[tuple[list[int], list[int]] | str] = []
        if len(slow) < len(items):
            encoded, texts, shifts = self.tokenize_bounded(texts)
            for k, shift in enumerate(shifts):
                if shift and spans[k] is not None:
                    spans[k] = [(max(a - shift, 0), max(b - shift, 0)) for a, b in spans[k]]
        else:
            encoded = [([], [])] * len(items)
        for k, (ids, where) in enumerate(encoded):
            if k in errors:
                out.append(errors[k])
            elif k in slow:
                out.append(slow[k])
            else:
                out.append((ids, self._label(ids, where, spans[k], len(texts[k]))))
        return out

    # ---- truncation -------------------------------------------------------------------
    def cut(self, ids: list[int], labels: list[int]) -> tuple[list[int], list[int], int]:
        n = self.cutoff_len
        if len(ids) <= n:
            status = OK
        elif self.truncation == "right":
            ids, labels, status = ids[:n], labels[:n], TRUNCATED
        elif self.truncation == "left":
            ids, labels, status = ids[-n:], labels[-n:], TRUNCATED
        elif self.truncation == "proportional":
            ids, labels = proportional_cut(ids, labels, n)
            status = TRUNCATED
        elif self.truncation == "drop":
            status = DROPPED
        else:
            status = TOO_LONG
        if status in (OK, TRUNCATED) and self.stage != "pt" and labels.count(IGNORE_INDEX) == len(labels):
            status = NO_LABELS
        return ids, labels, status

    # ---- batch entry points -----------------------------------------------------------
    def output_columns(self) -> list[str]:
        if self.stage in PAIR_STAGES:
            return ["chosen_input_ids", "chosen_labels", "rejected_input_ids", "rejected_labels"]
        if self.stage == "kto":
            return ["input_ids", "labels", "label"]
        if self.stage == "grpo":
            return ["prompt_ids", "answer"]
        return ["input_ids", "labels"]

    def __call__(self, batch: dict[str, list]) -> dict[str, list]:
        if self.stage == "pt":
            return self._pretrain(batch)
        if self.stage in PAIR_STAGES:
            return self._pairs(batch)
        if self.stage == "grpo":
            return self._prompts(batch)
        return self._sft(batch)

    def _finish(self, out: dict[str, list], batch: dict[str, list]) -> Any:
        out["_file"] = list(batch["_file"])
        out["_row"] = list(batch["_row"])
        return to_table(out) if self.arrow else out

    def _sft(self, batch: dict[str, list]) -> dict[str, list]:
        tools = batch.get("tools") or [None] * len(batch["messages"])
        results = self.encode_conversations(list(zip(batch["messages"], tools)))
        out: dict[str, list] = {"input_ids": [], "labels": [], "_status": [], "_length": [], "_problems": []}
        for result in results:
            if isinstance(result, str):
                out["input_ids"].append([])
                out["labels"].append([])
                out["_status"].append(OK)
                out["_length"].append(0)
                out["_problems"].append(json.dumps([{"field": "messages", "reason": result, "code": "OM-D011"}]))
                continue
            ids, labels = result
            length = len(ids)
            ids, labels, status = self.cut(ids, labels)
            out["input_ids"].append(ids if status in (OK, TRUNCATED) else [])
            out["labels"].append(labels if status in (OK, TRUNCATED) else [])
            out["_status"].append(status)
            out["_length"].append(length)
            out["_problems"].append(None)
        if self.stage == "kto":
            out["label"] = [bool(x) for x in batch["label"]]
        return self._finish(out, batch)

    def _prompts(self, batch: dict[str, list]) -> dict[str, list]:
        """GRPO prompts: the tokens before the answer of ``messages + [assistant: answer]`` (the
        prompt as the model sees it at generation, assistant header included); tokenised with the
        answer so that the prompt ends on the same token boundary as in training and inference."""
        items = [
            (list(m) + [{"role": "assistant", "content": a or "0", "tool_calls": None, "name": None}], None)
            for m, a in zip(batch["messages"], batch["answer"])
        ]
        out: dict[str, list] = {"prompt_ids": [], "answer": [], "_status": [], "_length": [], "_problems": []}
        for result, answer in zip(self.encode_conversations(items), batch["answer"]):
            out["answer"].append(answer or "")
            if isinstance(result, str):
                out["prompt_ids"].append([])
                out["_status"].append(OK)
                out["_length"].append(0)
                out["_problems"].append(json.dumps([{"field": "messages", "reason": result, "code": "OM-D011"}]))
                continue
            ids, labels = result
            start = next((i for i, x in enumerate(labels) if x != IGNORE_INDEX), len(ids))
            prompt = ids[:start]
            status = OK if len(prompt) < self.cutoff_len else (DROPPED if self.truncation == "drop" else TOO_LONG)
            if status == TOO_LONG and self.truncation == "left":
                prompt, status = prompt[-(self.cutoff_len - 1) :], TRUNCATED
            out["prompt_ids"].append(prompt if status in (OK, TRUNCATED) else [])
            out["_status"].append(status)
            out["_length"].append(len(ids[:start]))
            out["_problems"].append(None)
        return self._finish(out, batch)

    def _pretrain(self, batch: dict[str, list]) -> dict[str, list]:
        if self._specials is None:
            self._specials = _bos_eos(self.tokenizer)
        prefix, suffix = self._specials
        encoded, _, _ = self.tokenize_bounded(list(batch["text"]))
        out: dict[str, list] = {"input_ids": [], "labels": [], "_status": [], "_length": [], "_problems": []}
        for ids, _ in encoded:
            ids = prefix + ids + suffix
            length = len(ids)
            ids, labels, status = self.cut(ids, list(ids))
            keep = status in (OK, TRUNCATED)
            out["input_ids"].append(ids if keep else [])
            out["labels"].append(labels if keep else [])
            out["_status"].append(status)
            out["_length"].append(length)
            out["_problems"].append(None)
        return self._finish(out, batch)

    def _pairs(self, batch: dict[str, list]) -> dict[str, list]:
        items = []
        for messages, chosen, rejected in zip(batch["messages"], batch["chosen"], batch["rejected"]):
            for answer in (chosen, rejected):
                items.append(
                    (
                        list(messages) + [{"role": "assistant", "content": answer, "tool_calls": None, "name": None}],
                        None,
                    )
                )
        results = self.encode_conversations(items)
        out: dict[str, list] = {
            "chosen_input_ids": [],
            "chosen_labels": [],
            "rejected_input_ids": [],
            "rejected_labels": [],
            "_status": [],
            "_length": [],
            "_problems": [],
        }
        for k in range(0, len(results), 2):
            pair = results[k : k + 2]
            bad = next((r for r in pair if isinstance(r, str)), None)
            if bad is not None:
                for key in ("chosen_input_ids", "chosen_labels", "rejected_input_ids", "rejected_labels"):
                    out[key].append([])
                out["_status"].append(OK)
                out["_length"].append(0)
                out["_problems"].append(json.dumps([{"field": "messages", "reason": bad, "code": "OM-D011"}]))
                continue
            statuses = []
            length = max(len(pair[0][0]), len(pair[1][0]))
            for name, (ids, labels) in zip(("chosen", "rejected"), pair):
                ids, labels, status = self.cut(ids, labels)
                statuses.append(status)
                out[f"{name}_input_ids"].append(ids)
                out[f"{name}_labels"].append(labels)
            status = max(statuses, key=lambda s: (s not in (OK, TRUNCATED), s))
            if status not in (OK, TRUNCATED):
                for key in ("chosen_input_ids", "chosen_labels", "rejected_input_ids", "rejected_labels"):
                    out[key][-1] = []
            out["_status"].append(status)
            out["_length"].append(length)
            out["_problems"].append(None)
        return self._finish(out, batch)


_INT_COLUMNS = {"_status": "int8", "_length": "int32", "_file": "int32", "_row": "int64", "label": "bool"}
_STRING_COLUMNS = ("_problems", "answer")


def to_table(out: dict[str, list]):
    """Encoder output -> ``pyarrow.Table`` (token lists as int32 list arrays built from flat buffers)."""
    from itertools import chain

    import numpy as np
    import pyarrow as pa

    arrays = {}
    for name, values in out.items():
        if name in _INT_COLUMNS:
            arrays[name] = pa.array(values, type=_INT_COLUMNS[name])
        elif name in _STRING_COLUMNS:
            arrays[name] = pa.array(values, type=pa.string())
        elif any(isinstance(v, np.ndarray) for v in values):
            # media arrays (pixel values, image grids): flat float32 / int64 lists, shapes stored beside
            parts = [np.asarray(v).reshape(-1) for v in values]
            kind = np.float32 if any(p.dtype.kind == "f" for p in parts) else np.int64
            offsets = np.zeros(len(parts) + 1, dtype=np.int64)
            np.cumsum([len(p) for p in parts], out=offsets[1:])
            flat = np.concatenate([p.astype(kind) for p in parts]) if parts else np.zeros(0, dtype=kind)
            arrays[name] = pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(flat))
        else:
            offsets = np.zeros(len(values) + 1, dtype=np.int32)
            np.cumsum(np.fromiter(map(len, values), dtype=np.int32, count=len(values)), out=offsets[1:])
            flat = np.fromiter(chain.from_iterable(values), dtype=np.int32, count=int(offsets[-1]))
            arrays[name] = pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat))
    return pa.table(arrays)


def encode_rows(encoder: Encoder, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Encode a few standard rows directly (previews, tests)."""
    batch: dict[str, list] = {}
    for row in rows:
        for key, value in row.items():
            batch.setdefault(key, []).append(value)
    batch.setdefault("_file", [0] * len(rows))
    batch.setdefault("_row", list(range(len(rows))))
    out = encoder(batch)
    return [{k: out[k][i] for k in out} for i in range(len(rows))]


def infer_seqlen(source_len: int, target_len: int, cutoff_len: int) -> tuple[int, int]:
    """LLaMA-Factory's split of a budget between a prompt and its answer (``data/processor/
    processor_utils.py:infer_seqlen``, 0.9.5): short answers are kept whole, else the two are cut in
    proportion to their lengths."""
    if target_len * 2 < cutoff_len:
        max_target_len = cutoff_len
    elif source_len * 2 < cutoff_len:
        max_target_len = cutoff_len - source_len
    else:
        max_target_len = int(cutoff_len * (target_len / (source_len + target_len)))
    new_target_len = min(max_target_len, target_len)
    max_source_len = max(cutoff_len - new_target_len, 0)
    new_source_len = min(max_source_len, source_len)
    return new_source_len, new_target_len


def proportional_cut(ids: list[int], labels: list[int], cutoff_len: int) -> tuple[list[int], list[int]]:
    """``truncation: proportional`` (LLaMA-Factory's behaviour): the sequence is read as turns of
    (prompt tokens, trained tokens) -- runs of masked and unmasked labels -- and each turn keeps the
    head of its prompt and of its answer as :func:`infer_seqlen` splits the budget left, in order."""
    turns: list[tuple[int, int, int, int]] = []  # (source start, source end, target start, target end)
    i, n = 0, len(ids)
    while i < n:
        s0 = i
        while i < n and labels[i] == IGNORE_INDEX:
            i += 1
        t0 = i
        while i < n and labels[i] != IGNORE_INDEX:
            i += 1
        turns.append((s0, t0, t0, i))
    out_ids: list[int] = []
    out_labels: list[int] = []
    total = 0
    for s0, s1, t0, t1 in turns:
        if total >= cutoff_len:
            break
        s_len, t_len = infer_seqlen(s1 - s0, t1 - t0, cutoff_len - total)
        out_ids += ids[s0 : s0 + s_len] + ids[t0 : t0 + t_len]
        out_labels += labels[s0 : s0 + s_len] + labels[t0 : t0 + t_len]
        total += s_len + t_len
    return out_ids, out_labels
