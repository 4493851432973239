"""Decoder-only generation on transformers: chat, text-generation, summarization, translation.

Batches are left-padded so that greedy results do not depend on batching. Stop strings, streaming
and cancellation run inside ``model.generate`` through one stopping criterion that decodes each
row as it grows (:class:`RowWatcher`); nothing is decoded per step when none of them is asked for.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from openmind.core.api import read_config
from openmind.nlp.errors import I_BAD_PARAM, I_PROMPT_TOO_LONG
from openmind.nlp.pipelines.base import (
    Generation,
    GenerationParams,
    GenerativePipeline,
    LoadOptions,
    Prompt,
    TokenLogprob,
)
from openmind.nlp.pipelines.stopping import StopText, truncate_at_stop
from openmind.pt.device import import_torch
from openmind.pt.pipelines.loading import check_head, dtype_name, load_adapter, load_model, load_tokenizer

DECODE = {"skip_special_tokens": True, "clean_up_tokenization_spaces": False}


@dataclass
class Batch:
    """One left-padded batch and what its rows need after generation."""

    input_ids: Any
    attention_mask: Any
    prompt_lens: list[int]
    indices: list[int]
    params: GenerationParams
    text_stops: tuple[str, ...] = ()
    eos_ids: tuple[int, ...] = ()
    on_text: Callable[[int, str], None] | None = None
    is_cancelled: Callable[[int], bool] | None = None
    watcher: RowWatcher | None = None


class RowWatcher:
    """A ``StoppingCriteria`` that decodes each unfinished row, emits text deltas, applies stop
    strings and cancellation. Returns a per-row "done" mask as transformers expects."""

    def __init__(self, tokenizer: Any, batch: Batch) -> None:
        torch = import_torch()
        self.torch = torch
        self.tokenizer = tokenizer
        self.start = batch.input_ids.shape[1]
        self.eos = set(batch.eos_ids)
        self.indices = batch.indices
        self.on_text = batch.on_text
        self.is_cancelled = batch.is_cancelled
        self.decode = bool(batch.text_stops) or batch.on_text is not None
        n = len(batch.indices)
        self.rows = [StopText(batch.text_stops) for _ in range(n)]
        self.done = [False] * n
        self.cancelled = [False] * n
        #: generated-token count at which each row ended (None while running)
        self.ended_at: list[int | None] = [None] * n

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        n = len(self.done)
        for r in range(n):
            if self.done[r]:
                continue
            tokens = input_ids[r, self.start :].tolist()
            ended = False
            for j, token in enumerate(tokens):
                if token in self.eos:
                    tokens, ended = tokens[:j], True
                    break
            if self.decode:
                delta = self.rows[r].update(self.tokenizer.decode(tokens, **DECODE), final=ended)
                if delta and self.on_text is not None:
                    self.on_text(self.indices[r], delta)
                if self.rows[r].stopped:
                    ended = True
            if not ended and self.is_cancelled is not None and self.is_cancelled(self.indices[r]):
                self.cancelled[r] = ended = True
            if ended:
                self.done[r] = True
                self.ended_at[r] = len(tokens) + (0 if self.rows[r].stopped or self.cancelled[r] else 1)
        return self.torch.tensor(self.done, dtype=self.torch.bool, device=input_ids.device)


class TorchCausalLM(GenerativePipeline):
    """The PyTorch pipeline of chat / text-generation / summarization / translation (transformers)."""

    framework = "pt"
    backend = "transformers"

    def __init__(self, model: Any, tokenizer: Any, *, task: str, model_dir: str, device: str, dtype: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.task = task
        self.model_dir = model_dir
        self.device = device
        self.dtype = dtype_name(dtype)
        config = getattr(model, "config", None)
        self.max_length = getattr(config, "max_position_embeddings", None)
        gen = model.generation_config
        eos = gen.eos_token_id if gen.eos_token_id is not None else tokenizer.eos_token_id
        eos = list(eos) if isinstance(eos, (list, tuple)) else ([eos] if eos is not None else [])
        if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in eos:
            eos.append(tokenizer.eos_token_id)
        self.eos_ids: tuple[int, ...] = tuple(eos)
        pad = gen.pad_token_id if gen.pad_token_id is not None else tokenizer.pad_token_id
        self.pad_id: int = pad if pad is not None else (eos[0] if eos else 0)
        self._lock = threading.RLock()
        self._stop_cache: dict[tuple[str, ...], tuple[tuple[int, ...], tuple[str, ...]]] = {}

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> TorchCausalLM:
        from transformers import AutoModelForCausalLM

        check_head(read_config(model_dir), options.task, model_dir)
        tokenizer = load_tokenizer(model_dir, options, padding_side="left")
        model, device, dtype = load_model(model_dir, AutoModelForCausalLM, options)
        return cls(model, tokenizer, task=options.task, model_dir=model_dir, device=device, dtype=dtype)

    # ---- helpers ---------------------------------------------------------------------------
    def encode(self, prompt: Prompt) -> list[int]:
        if isinstance(prompt, str):
            return list(self.tokenizer(prompt)["input_ids"])
        return list(prompt)

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

    def _pad_left(self, rows: list[list[int]]) -> tuple[Any, Any]:
        torch = import_torch()
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            if row:
                ids[i, width - len(row) :] = torch.tensor(row, dtype=torch.long)
                mask[i, width - len(row) :] = 1
        return ids.to(self.device), mask.to(self.device)

    # ---- preprocess / forward / postprocess ----------------------------------------------
    def preprocess(self, inputs: list[Prompt], params: GenerationParams, indices: list[int] | None = None) -> Batch:
        rows = [self.encode(p) for p in inputs]
        for i, row in enumerate(rows):
            if not row:
                raise I_PROMPT_TOO_LONG.error(f"prompt {i} is empty after tokenization", hint="Pass a non-empty input.")
            if self.max_length and len(row) >= self.max_length:
                raise I_PROMPT_TOO_LONG.error(
                    f"prompt {i} has {len(row)} tokens; the model takes at most {self.max_length}",
                    location=f"input[{i}]",
                )
        stop_ids, text_stops = self.split_stops(params.stop)
        input_ids, attention_mask = self._pad_left(rows)
        return Batch(
            input_ids,
            attention_mask,
            [len(r) for r in rows],
            list(indices if indices is not None else range(len(rows))),
            params,
            text_stops=text_stops,
            eos_ids=tuple(dict.fromkeys((*self.eos_ids, *stop_ids))),
        )

    def generation_kwargs(self, params: GenerationParams, eos_ids: tuple[int, ...]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "max_new_tokens": params.max_new_tokens,
            "num_beams": params.num_beams,
            "pad_token_id": self.pad_id,
            "eos_token_id": list(eos_ids) or None,
        }
        for name in ("do_sample", "temperature", "top_p", "top_k", "repetition_penalty"):
            value = getattr(params, name)
            if value is not None:
                kwargs[name] = value
        if params.temperature is not None and params.do_sample is None:
            kwargs["do_sample"] = params.temperature > 0
        return kwargs

    def forward(self, features: Batch, params: GenerationParams) -> Any:
        torch = import_torch()
        kwargs = self.generation_kwargs(params, features.eos_ids)
        if params.wants_logprobs:
            if params.num_beams > 1:
                raise I_BAD_PARAM.error("logprobs cannot be combined with num_beams > 1", location="logprobs")
            kwargs.update(output_logits=True, return_dict_in_generate=True)
        watch = params.num_beams == 1 and (
            features.text_stops or features.on_text is not None or features.is_cancelled is not None
        )
        if watch:
            from transformers import StoppingCriteriaList

            features.watcher = RowWatcher(self.tokenizer, features)
            kwargs["stopping_criteria"] = StoppingCriteriaList([features.watcher])
        if params.seed is not None:
            torch.manual_seed(params.seed)
        with torch.inference_mode():
            out = self.model.generate(input_ids=features.input_ids, attention_mask=features.attention_mask, **kwargs)
        if params.wants_logprobs:
            return out.sequences, out.logits
        return out, None

    def postprocess(self, outputs: Any, params: GenerationParams, features: Batch | None = None) -> list[Generation]:
        torch = import_torch()
        sequences, logits = outputs
        batch = features
        start = batch.input_ids.shape[1]
        watcher = batch.watcher
        eos = set(batch.eos_ids)
        results = []
        for r in range(sequences.shape[0]):
            tokens = sequences[r, start:].tolist()
            ended = False
            limit = watcher.ended_at[r] if watcher is not None else None
            for j, token in enumerate(tokens if limit is None else tokens[:limit]):
                if token in eos:
                    tokens, ended = tokens[:j], True
                    break
            else:
                if limit is not None:
                    tokens = tokens[:limit]
            text, hit = truncate_at_stop(self.tokenizer.decode(tokens, **DECODE), batch.text_stops)
            if watcher is not None and watcher.rows[r].stopped:
                hit = True
            cancelled = watcher is not None and watcher.cancelled[r]
            if watcher is not None and batch.on_text is not None and not cancelled:
                delta = watcher.rows[r].update(text, final=True)
                if delta:
                    batch.on_text(batch.indices[r], delta)
            if cancelled:
                reason = "cancelled"
            elif ended or hit:
                reason = "stop"
            else:
                reason = "length" if len(tokens) >= params.max_new_tokens else "stop"
            logprobs = None
            if logits is not None:
                logprobs = []
                for t, token in enumerate(tokens):
                    step = torch.log_softmax(logits[t][r].float(), dim=-1)
                    top = []
                    if params.top_logprobs:
                        values, ids = step.topk(params.top_logprobs)
                        top = [(self.tokenizer.decode([i]), float(v)) for v, i in zip(values.tolist(), ids.tolist())]
                    logprobs.append(TokenLogprob(self.tokenizer.decode([token]), token, float(step[token]), top))
            results.append(Generation(text, tokens, reason, batch.prompt_lens[r], logprobs))
        return results

    # ---- the contract ------------------------------------------------------------------------
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
        groups: dict[GenerationParams, list[int]] = {}
        for i, p in enumerate(per_prompt):
            groups.setdefault(p, []).append(i)
        results: list[Generation | None] = [None] * len(prompts)
        batch_size = max(1, int(batch_size))
        with self._lock, self._adapter(adapter):
            for group_params, indices in groups.items():
                for s in range(0, len(indices), batch_size):
                    chunk = indices[s : s + batch_size]
                    batch = self.preprocess([prompts[i] for i in chunk], group_params, chunk)
                    batch.on_text, batch.is_cancelled = on_text, is_cancelled
                    out = self.postprocess(self.forward(batch, group_params), group_params, batch)
                    for i, generation in zip(chunk, out, strict=True):
                        results[i] = generation
        return results  # type: ignore[return-value]

    def _adapter(self, name: str | None):
        import contextlib

        if name is None:
            return contextlib.nullcontext()
        if not hasattr(self.model, "peft_config"):
            raise I_BAD_PARAM.error(f"adapter {name!r} requested, but the model has no adapters", location="adapter")
        if name == "":
            return self.model.disable_adapter()
        if name not in self.model.peft_config:
            raise I_BAD_PARAM.error(
                f"unknown adapter {name!r}; loaded: {', '.join(self.model.peft_config)}", location="adapter"
            )

        @contextlib.contextmanager
        def active():
            previous = self.model.active_adapter
            self.model.set_adapter(name)
            try:
                yield
            finally:
                self.model.set_adapter(previous)

        return active()

    def add_adapter(self, name: str, path: str) -> None:
        with self._lock:
            self.model = load_adapter(self.model, path, name)

    def _logits(self, rows: list[list[int]]) -> Any:
        """Log-softmax over right-padded rows: shape (batch, width, vocab), float32."""
        torch = import_torch()
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
            mask[i, : len(row)] = 1
        with torch.inference_mode():
            logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device)).logits
        return torch.log_softmax(logits.float(), dim=-1)

    def _context_prefix(self) -> list[int]:
        bos = self.tokenizer.bos_token_id
        return [bos] if bos is not None else list(self.eos_ids[:1])

    def _encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        # like lm-evaluation-harness: trailing spaces of the context belong to the continuation
        spaces = len(context) - len(context.rstrip())
        if spaces:
            context, continuation = context[:-spaces], context[-spaces:] + continuation
        if not context:
            prefix = self._context_prefix()
            return prefix, list(self.tokenizer(continuation, add_special_tokens=False)["input_ids"])
        whole = list(self.tokenizer(context + continuation)["input_ids"])
        ctx = list(self.tokenizer(context)["input_ids"])
        if whole[: len(ctx)] != ctx:
            return ctx, list(self.tokenizer(continuation, add_special_tokens=False)["input_ids"])
        return ctx, whole[len(ctx) :]

    def loglikelihood(self, requests: Sequence[tuple[str, str]], *, batch_size: int = 1) -> list[tuple[float, bool]]:
        torch = import_torch()
        pairs = [self._encode_pair(c, x) for c, x in requests]
        limit = (self.max_length or 10**9) + 1
        results: list[tuple[float, bool]] = []
        batch_size = max(1, int(batch_size))
        with self._lock:
            for s in range(0, len(pairs), batch_size):
                chunk = pairs[s : s + batch_size]
                rows = [(ctx + cont)[-limit:][:-1] for ctx, cont in chunk]
                logprobs = self._logits(rows)
                for i, (_ctx, cont) in enumerate(chunk):
                    if not cont:
                        results.append((0.0, True))
                        continue
                    end = len(rows[i])
                    positions = logprobs[i, end - len(cont) : end]
                    target = torch.tensor(cont, device=positions.device)
                    total = positions.gather(1, target[:, None]).sum().item()
                    greedy = bool((positions.argmax(dim=-1) == target).all().item())
                    results.append((float(total), greedy))
        return results

    def prompt_logprobs(self, prompts: Sequence[Prompt], top_logprobs: int = 0) -> list[list[TokenLogprob]]:
        out = []
        with self._lock:
            for prompt in prompts:
                ids = self.encode(prompt)
                logprobs = self._logits([ids])[0]
                items = [TokenLogprob(self.tokenizer.decode([ids[0]]), ids[0], None)]
                for t in range(1, len(ids)):
                    step = logprobs[t - 1]
                    top = []
                    if top_logprobs:
                        values, tops = step.topk(top_logprobs)
                        top = [(self.tokenizer.decode([i]), float(v)) for v, i in zip(values.tolist(), tops.tolist())]
                    items.append(TokenLogprob(self.tokenizer.decode([ids[t]]), ids[t], float(step[ids[t]]), top))
                out.append(items)
        return out
