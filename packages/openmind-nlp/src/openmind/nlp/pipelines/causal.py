"""The framework-neutral half of every decoder-only pipeline (PyTorch, MindSpore, MindFormers).

What a causal-LM pipeline does around its model is the same on every framework: encode prompts
(text or ids), check them against the context window, turn special-token stop strings into ids,
group prompts by generation parameters and batch them, decide the ``finish_reason``, emit the last
streamed text, split ``(context, continuation)`` pairs like lm-evaluation-harness and score them.
It lives here once, so the backends cannot drift apart; a backend supplies only the parts that
touch tensors (:meth:`CausalLMPipeline.generate_batch`, :meth:`~CausalLMPipeline.log_probs`,
:meth:`~CausalLMPipeline.top_tokens`) and adapters. Nothing here imports a framework: the
log-probability arrays a backend returns (``torch.Tensor`` or ``numpy.ndarray``) are only indexed.
"""

from __future__ import annotations

import abc
import dataclasses
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from openmind.nlp.errors import I_BAD_PARAM, I_PROMPT_TOO_LONG
from openmind.nlp.pipelines.base import Generation, GenerationParams, GenerativePipeline, Prompt, TokenLogprob
from openmind.nlp.pipelines.stopping import StopText

#: how generated tokens are decoded to text, on every backend
DECODE = {"skip_special_tokens": True, "clean_up_tokenization_spaces": False}


def merge_eos(configured: Any, tokenizer_eos: int | None) -> tuple[int, ...]:
    """The end-of-sequence ids: generation_config's (an id or a list) plus the tokenizer's own."""
    eos = (
        list(configured) if isinstance(configured, (list, tuple)) else ([configured] if configured is not None else [])
    )
    if tokenizer_eos is not None and tokenizer_eos not in eos:
        eos.append(tokenizer_eos)
    return tuple(eos)


def finish_reason(*, cancelled: bool, stopped: bool, produced: int, max_new_tokens: int) -> str:
    """OpenAI's ``finish_reason`` of one row: ``cancelled``, ``stop`` (EOS / stop string) or ``length``."""
    if cancelled:
        return "cancelled"
    if stopped:
        return "stop"
    return "length" if produced >= max_new_tokens else "stop"


class CausalLMPipeline(GenerativePipeline):
    """Shared base of the decoder-only pipelines; see the module docstring for the split."""

    tokenizer: Any
    #: end-of-sequence ids (generation_config's and the tokenizer's)
    eos_ids: tuple[int, ...] = ()
    #: padding id (generation_config's, the tokenizer's, else the first EOS)
    pad_id: int = 0
    #: whether ``generate_batch`` honours per-row :mod:`controls <openmind.nlp.pipelines.controls>`
    supports_controls: bool = False

    def init_ids(self, eos: tuple[int, ...], pad: int | None) -> None:
        """Set :attr:`eos_ids`, :attr:`pad_id`, the lock and the stop-string cache."""
        self.eos_ids = tuple(eos)
        self.pad_id = pad if pad is not None else (eos[0] if eos else 0)
        self._lock = threading.RLock()
        self._stop_cache: dict[tuple[str, ...], tuple[tuple[int, ...], tuple[str, ...]]] = {}

    # ---- prompts and stops -----------------------------------------------------------------
    def encode(self, prompt: Prompt) -> list[int]:
        if isinstance(prompt, str):
            return list(self.tokenizer(prompt)["input_ids"])
        return list(prompt)

    def encode_prompts(self, inputs: Sequence[Prompt]) -> list[list[int]]:
        """Token ids of each prompt; an empty prompt or one that fills the context is OM-I103."""
        rows = [self.encode(p) for p in inputs]
        for i, row in enumerate(rows):
            if not row:
                raise I_PROMPT_TOO_LONG.error(f"prompt {i} is empty after tokenization", hint="Pass a non-empty input.")
            if self.max_length and len(row) >= self.max_length:
                raise I_PROMPT_TOO_LONG.error(
                    f"prompt {i} has {len(row)} tokens; the model takes at most {self.max_length}",
                    location=f"input[{i}]",
                )
        return rows

    def split_stops(self, stops: tuple[str, ...]) -> tuple[tuple[int, ...], tuple[str, ...]]:
        """Stop strings that are one special token become token ids (they never show in decoded
        text); the others are matched on text."""
        cached = self._stop_cache.get(stops)
        if cached is None:
            special = set(self.tokenizer.all_special_ids or [])
            ids: list[int] = []
            texts: list[str] = []
            for stop in stops:
                encoded = self.tokenizer(stop, add_special_tokens=False)["input_ids"]
                if len(encoded) == 1 and encoded[0] in special:
                    ids.append(encoded[0])
                else:
                    texts.append(stop)
            cached = self._stop_cache[stops] = (tuple(ids), tuple(texts))
        return cached

    def stops_for(self, params: GenerationParams) -> tuple[tuple[int, ...], tuple[str, ...]]:
        """``(ids that end a row, stop strings matched on text)`` for one batch."""
        stop_ids, text_stops = self.split_stops(params.stop)
        return tuple(dict.fromkeys((*self.eos_ids, *stop_ids))), text_stops

    @staticmethod
    def emit_final(row: StopText | None, text: str, on_text: Callable[[int, str], None] | None, index: int) -> None:
        """Stream the text of a finished row that the per-step decode still held back."""
        if row is not None and on_text is not None:
            delta = row.update(text, final=True)
            if delta:
                on_text(index, delta)

    # ---- generation ------------------------------------------------------------------------
    @abc.abstractmethod
    def generate_batch(
        self,
        prompts: list[Prompt],
        params: GenerationParams,
        indices: list[int],
        on_text: Callable[[int, str], None] | None,
        is_cancelled: Callable[[int], bool] | None,
    ) -> list[Generation]:
        """One batch of prompts sharing ``params``; ``indices`` are their positions in the call
        (what ``on_text``/``is_cancelled`` receive)."""

    @abc.abstractmethod
    def _adapter(self, name: str | None) -> AbstractContextManager[Any]:
        """A context in which the adapter ``name`` is active (``None``: as loaded, ``""``: none)."""

    def generate(
        self,
        prompts: Sequence[Prompt],
        params: GenerationParams | Sequence[GenerationParams],
        *,
        batch_size: int = 1,
        on_text: Callable[[int, str], None] | None = None,
        is_cancelled: Callable[[int], bool] | None = None,
        adapter: str | None = None,
    ) -> list[Generation]:
        per_prompt = [params] * len(prompts) if isinstance(params, GenerationParams) else list(params)
        if len(per_prompt) != len(prompts):
            raise I_BAD_PARAM.error(f"{len(prompts)} prompts but {len(per_prompt)} generation params")
        if self.supports_controls:
            per_prompt = _seeds_per_row(per_prompt)
        # per-row controls do not split batches: group on the rest, hand each batch its rows' controls
        groups: dict[GenerationParams, list[int]] = {}
        for i, p in enumerate(per_prompt):
            groups.setdefault(dataclasses.replace(p, controls=None), []).append(i)
        if any(p.controls is not None for p in per_prompt) and not self.supports_controls:
            raise I_BAD_PARAM.error(
                f"logit_bias, presence/frequency penalties, min_p and grammar-constrained decoding "
                f"(response_format, tool_choice) are not supported by the {getattr(self, 'framework', 'this')!r} backend",
                location="controls",
                hint="Serve the model with --framework pt for these options.",
            )
        results: list[Generation | None] = [None] * len(prompts)
        batch_size = max(1, int(batch_size))
        with self._lock, self._adapter(adapter):
            for group_params, indices in groups.items():
                for s in range(0, len(indices), batch_size):
                    chunk = indices[s : s + batch_size]
                    rows = tuple(per_prompt[i].controls for i in chunk)
                    if any(c is not None for c in rows):
                        group_params = dataclasses.replace(group_params, controls=rows)
                    else:
                        group_params = dataclasses.replace(group_params, controls=None)
                    out = self.generate_batch([prompts[i] for i in chunk], group_params, chunk, on_text, is_cancelled)
                    for i, generation in zip(chunk, out, strict=True):
                        results[i] = generation
        return results  # type: ignore[return-value]

    # ---- scoring ---------------------------------------------------------------------------
    @abc.abstractmethod
    def log_probs(self, rows: list[list[int]]) -> Any:
        """Log-softmax over right-padded ``rows``: an array of shape (batch, width, vocab)."""

    @abc.abstractmethod
    def top_tokens(self, step: Any, k: int) -> list[tuple[int, float]]:
        """The ``k`` most likely ``(token id, log-probability)`` of one row of :meth:`log_probs`."""

    def _context_prefix(self) -> list[int]:
        bos = self.tokenizer.bos_token_id
        return [bos] if bos is not None else list(self.eos_ids[:1])

    def _encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        # like lm-evaluation-harness: trailing spaces of the context belong to the continuation
        spaces = len(context) - len(context.rstrip())
        if spaces:
            context, continuation = context[:-spaces], context[-spaces:] + continuation
        if not context:
            return self._context_prefix(), list(self.tokenizer(continuation, add_special_tokens=False)["input_ids"])
        whole = list(self.tokenizer(context + continuation)["input_ids"])
        ctx = list(self.tokenizer(context)["input_ids"])
        if whole[: len(ctx)] != ctx:
            return ctx, list(self.tokenizer(continuation, add_special_tokens=False)["input_ids"])
        return ctx, whole[len(ctx) :]

    def loglikelihood(self, requests: Sequence[tuple[str, str]], *, batch_size: int = 1) -> list[tuple[float, bool]]:
        pairs = [self._encode_pair(c, x) for c, x in requests]
        limit = (self.max_length or 10**9) + 1
        results: list[tuple[float, bool]] = []
        batch_size = max(1, int(batch_size))
        with self._lock:
            for s in range(0, len(pairs), batch_size):
                chunk = pairs[s : s + batch_size]
                rows = [(ctx + cont)[-limit:][:-1] for ctx, cont in chunk]
                logprobs = self.log_probs(rows)
                for i, (_ctx, cont) in enumerate(chunk):
                    if not cont:
                        results.append((0.0, True))
                        continue
                    end = len(rows[i])
                    positions = logprobs[i, end - len(cont) : end]
                    total = sum(float(positions[k, token]) for k, token in enumerate(cont))
                    greedy = all(int(positions[k].argmax()) == token for k, token in enumerate(cont))
                    results.append((total, greedy))
        return results

    def prompt_logprobs(self, prompts: Sequence[Prompt], top_logprobs: int = 0) -> list[list[TokenLogprob]]:
        decode = self.tokenizer.decode
        out = []
        with self._lock:
            for prompt in prompts:
                ids = self.encode(prompt)
                logprobs = self.log_probs([ids])[0]
                items = [TokenLogprob(decode([ids[0]]), ids[0], None)]
                for t in range(1, len(ids)):
                    step = logprobs[t - 1]
                    top = [(decode([i]), v) for i, v in self.top_tokens(step, top_logprobs)] if top_logprobs else []
                    items.append(TokenLogprob(decode([ids[t]]), ids[t], float(step[ids[t]]), top))
                out.append(items)
        return out


def _seeds_per_row(per_prompt: list[GenerationParams]) -> list[GenerationParams]:
    """Rows that differ only by ``seed`` would each be a batch of their own: move their seeds into
    their :class:`~openmind.nlp.pipelines.controls.RowControls` so that they share one batch, each
    row drawing from its own generator (what it draws alone with that seed). A seed that the whole
    group shares stays a batch setting (one seeded stream, as before)."""
    from openmind.nlp.pipelines.controls import RowControls

    seeds: dict[GenerationParams, set[int | None]] = {}
    for p in per_prompt:
        seeds.setdefault(dataclasses.replace(p, controls=None, seed=None), set()).add(p.seed)
    out = []
    for p in per_prompt:
        shared = len(seeds[dataclasses.replace(p, controls=None, seed=None)]) == 1
        if not shared and p.seed is not None and p.do_sample is not False:  # greedy rows ignore seeds
            controls = dataclasses.replace(p.controls or RowControls(), seed=p.seed)
            p = dataclasses.replace(p, seed=None, controls=controls)
        out.append(p)
    return out
