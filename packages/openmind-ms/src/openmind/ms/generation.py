"""Autoregressive generation for the native causal LMs: KV cache, left-padded batches, greedy or
sampled decoding, streaming, token log-probabilities, and log-likelihood scoring.

The decoding loop runs on the host (numpy) and each step is one MindSpore forward over the new
token(s) with the key/value cache, as transformers' ``generate`` does. Greedy decoding on the same
checkpoint gives the same tokens as transformers on PyTorch (tested).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
from mindspore import Tensor

from openmind.core.pipelines.base import DEFAULT_MAX_NEW_TOKENS
from openmind.ms.models.llama import LlamaForCausalLM

#: one generated token of one row: (token id, log-prob or None, ended, [(id, log-prob)] alternatives)
Step = tuple[int, "float | None", bool, list[tuple[int, float]]]


@dataclass
class GenerationParams:
    """What decoding does. ``stop`` is checked by the caller (see ``stop_check``)."""

    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    do_sample: bool = False
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    repetition_penalty: float = 1.0
    seed: int | None = None
    eos_token_ids: tuple[int, ...] = ()
    logprobs: bool = False
    #: alternatives per position (ids with log-probs), implies ``logprobs``
    top_logprobs: int = 0


@dataclass
class Generated:
    """Per prompt: new token ids (an EOS that ended it included), their log-probs, and why it ended."""

    tokens: list[list[int]]
    finish_reasons: list[str]
    logprobs: list[list[float]] | None = None
    prompt_tokens: list[int] = field(default_factory=list)


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def _sample(logits: np.ndarray, p: GenerationParams, rng: np.random.Generator) -> np.ndarray:
    logits = logits.astype(np.float64) / max(p.temperature, 1e-5)
    if p.top_k and p.top_k < logits.shape[-1]:
        kth = np.partition(logits, -p.top_k, axis=-1)[:, -p.top_k][:, None]
        logits = np.where(logits < kth, -np.inf, logits)
    if p.top_p < 1.0:
        order = np.argsort(logits, axis=-1)
        sorted_logits = np.take_along_axis(logits, order, -1)
        probs = np.exp(sorted_logits - sorted_logits.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        remove_sorted = np.cumsum(probs, -1) <= 1 - p.top_p
        remove_sorted[:, -1] = False
        remove = np.zeros_like(remove_sorted)
        np.put_along_axis(remove, order, remove_sorted, -1)
        logits = np.where(remove, -np.inf, logits)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    return np.array([rng.choice(len(row), p=row) for row in probs], dtype=np.int64)


def _penalise(logits: np.ndarray, seen: list[set[int]], penalty: float) -> np.ndarray:
    logits = logits.copy()
    for row, ids in enumerate(seen):
        if ids:
            idx = np.fromiter(ids, dtype=np.int64)
            values = logits[row, idx]
            logits[row, idx] = np.where(values < 0, values * penalty, values / penalty)
    return logits


def bucket(n: int, step: int) -> int:
    """Round ``n`` up to a multiple of ``step``: compiled graphs are reused across nearby lengths."""
    return max(step, -(-n // step) * step)


class Decoder:
    """Compiled (``mindspore.jit``) prefill and decode steps of one causal LM over a static KV cache.

    Shapes are bucketed (prompt to a multiple of :attr:`prompt_step`, cache to a multiple of
    :attr:`cache_step`), so a graph compiled for one request serves the next ones of similar size.
    ``compiled=False`` runs the same steps eagerly (PyNative), e.g. for debugging.
    """

    prompt_step = 64
    cache_step = 64

    def __init__(self, model: LlamaForCausalLM, *, compiled: bool = True):
        import mindspore as ms

        self.model = model
        self.compiled = compiled
        cfg = model.config
        self.kv_shape = (cfg.num_key_value_heads, cfg.head_dim)
        self.dtype = model.model.embed_tokens.weight.dtype

        def prefill(ids, cos, sin, mask, caches):
            logits, presents = model(ids, cos, sin, mask, caches, None, True)
            return logits, presents

        def decode(ids, cos, sin, mask, caches, write):
            logits, presents = model(ids, cos, sin, mask, caches, write, True)
            return logits, presents

        def full(ids, cos, sin, mask):
            return model(ids, cos, sin, mask)[0]

        self._prefill = ms.jit(prefill) if compiled else prefill
        self._decode = ms.jit(decode) if compiled else decode
        self._full = ms.jit(full) if compiled else full

    def log_probs(self, rows: list[list[int]], *, pad_id: int = 0) -> np.ndarray:
        """Log-softmax over right-padded ``rows``: ``(batch, width, vocab)`` float32 (positions past a
        row's end are garbage)."""
        width = bucket(max(len(r) for r in rows), self.prompt_step)
        ids = np.full((len(rows), width), pad_id, dtype=np.int32)
        key_mask = np.zeros((len(rows), width), dtype=np.int32)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
            key_mask[i, : len(row)] = 1
        cos, sin, mask = self.model.prepare(key_mask, width)
        logits = self._full(Tensor(ids), cos, sin, mask).asnumpy().astype(np.float32)
        return _log_softmax(logits)

    def empty_cache(self, batch: int, length: int):
        import mindspore as ms

        zeros = np.zeros((batch, self.kv_shape[0], length, self.kv_shape[1]), np.float32)
        layers = self.model.config.num_hidden_layers
        # mutable: a tuple of tensors is otherwise a compile-time constant (one compile per step)
        return ms.mutable(tuple((Tensor(zeros, self.dtype), Tensor(zeros, self.dtype)) for _ in range(layers)))

    def stream(
        self,
        prompts: list[list[int]],
        params: GenerationParams,
        *,
        pad_id: int = 0,
        stop_check: Callable[[int, list[int]], bool] | None = None,
    ) -> Iterator[list[Step | None]]:
        """Yield, at every step, per prompt a :data:`Step` ``(token, logprob, ended, top)`` or ``None``
        once it has ended (``top``: the ``top_logprobs`` best ``(id, logprob)``).

        ``ended`` is true when the token is an EOS or ``stop_check(row, tokens)`` says so (stop
        strings); a row that runs out of ``max_new_tokens`` never reports ``ended``.
        """
        import mindspore as ms

        if params.max_new_tokens <= 0:
            return
        model = self.model
        batch = len(prompts)
        width = bucket(max(len(p) for p in prompts), self.prompt_step)
        ids = np.full((batch, width), pad_id, dtype=np.int32)
        key_mask = np.zeros((batch, width), dtype=np.int32)
        for i, p in enumerate(prompts):
            ids[i, width - len(p) :] = p
            key_mask[i, width - len(p) :] = 1
        length = bucket(width + params.max_new_tokens, self.cache_step)
        caches = self.empty_cache(batch, length)
        rng = np.random.default_rng(params.seed)
        eos = set(params.eos_token_ids)
        done = [False] * batch
        generated: list[list[int]] = [[] for _ in range(batch)]
        seen = [set(p) for p in prompts] if params.repetition_penalty != 1.0 else None
        cos, sin, mask = model.prepare(key_mask, width)
        logits, caches = self._prefill(Tensor(ids), cos, sin, mask, caches)
        caches = ms.mutable(caches)
        full_mask = np.zeros((batch, length), dtype=np.int32)
        full_mask[:, :width] = key_mask
        write = np.zeros((1, 1, length, 1), np.float32)
        for step in range(params.max_new_tokens):
            logits = logits.asnumpy()[:, -1].astype(np.float32)
            if seen is not None:
                logits = _penalise(logits, seen, params.repetition_penalty)
            nxt = _sample(logits, params, rng) if params.do_sample else logits.argmax(-1)
            logp = top = None
            if params.logprobs or params.top_logprobs:
                all_logp = _log_softmax(logits)
                logp = np.take_along_axis(all_logp, nxt[:, None], -1)[:, 0]
                if params.top_logprobs:
                    top = np.argsort(-all_logp, axis=-1, kind="stable")[:, : params.top_logprobs]
            out: list[Step | None] = []
            for row in range(batch):
                if done[row]:
                    out.append(None)
                    continue
                token = int(nxt[row])
                generated[row].append(token)
                if seen is not None:
                    seen[row].add(token)
                done[row] = token in eos or (stop_check is not None and stop_check(row, generated[row]))
                alternatives = [] if top is None else [(int(i), float(all_logp[row, i])) for i in top[row]]
                out.append((token, None if logp is None else float(logp[row]), done[row], alternatives))
            yield out
            if all(done) or step == params.max_new_tokens - 1:
                return
            slot = width + step
            full_mask[:, slot] = 1
            write[:] = 0
            write[0, 0, slot, 0] = 1
            cos, sin, mask = model.prepare(full_mask, 1)
            step_ids = np.where(done, pad_id, nxt).astype(np.int32)[:, None]
            logits, caches = self._decode(Tensor(step_ids), cos, sin, mask, caches, Tensor(write))
            caches = ms.mutable(caches)


def decoder(model: LlamaForCausalLM) -> Decoder:
    """The model's :class:`Decoder` (created once per model: its compiled graphs are cached on it)."""
    found = getattr(model, "_openmind_decoder", None)
    if found is None:
        found = Decoder(model)
        object.__setattr__(model, "_openmind_decoder", found)
    return found


def stream(
    model: LlamaForCausalLM,
    prompts: list[list[int]],
    params: GenerationParams,
    *,
    pad_id: int = 0,
    stop_check: Callable[[int, list[int]], bool] | None = None,
) -> Iterator[list[Step | None]]:
    """See :meth:`Decoder.stream`."""
    return decoder(model).stream(prompts, params, pad_id=pad_id, stop_check=stop_check)


def generate(
    model: LlamaForCausalLM,
    prompts: list[list[int]],
    params: GenerationParams,
    *,
    pad_id: int = 0,
    stop_check: Callable[[int, list[int]], bool] | None = None,
) -> Generated:
    tokens: list[list[int]] = [[] for _ in prompts]
    logprobs: list[list[float]] = [[] for _ in prompts]
    reasons = ["length"] * len(prompts)
    for step in stream(model, prompts, params, pad_id=pad_id, stop_check=stop_check):
        for row, item in enumerate(step):
            if item is None:
                continue
            token, logp, ended, _top = item
            tokens[row].append(token)
            if logp is not None:
                logprobs[row].append(logp)
            if ended:
                reasons[row] = "stop"
    wanted = params.logprobs or params.top_logprobs
    return Generated(tokens, reasons, logprobs if wanted else None, [len(p) for p in prompts])
