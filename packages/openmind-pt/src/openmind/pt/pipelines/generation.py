"""Decoder-only generation on transformers: chat, text-generation, summarization, translation.

Batches are left-padded so that greedy results do not depend on batching. Stop strings, streaming
and cancellation run inside the decode loop through one stopping criterion that decodes each
row as it grows (:class:`RowWatcher`); nothing is decoded per step when none of them is asked for.
The decode loop is the static-cache fast path (:mod:`openmind.pt.pipelines.fastpath`) when it
covers the model and the options, ``model.generate`` otherwise (the reason is logged once).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openmind.core.api import read_config
from openmind.core.pipelines.base import LoadOptions
from openmind.nlp.errors import I_BAD_PARAM
from openmind.nlp.pipelines.base import Generation, GenerationParams, Prompt, TokenLogprob
from openmind.nlp.pipelines.causal import DECODE, CausalLMPipeline, finish_reason, merge_eos
from openmind.nlp.pipelines.stopping import StopText, truncate_at_stop
from openmind.pt.device import import_torch
from openmind.pt.pipelines.fastpath import StaticDecoder, log_fallback
from openmind.pt.pipelines.loading import check_head, dtype_name, load_adapter, load_model, load_tokenizer


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
        #: generated tokens seen at the last call
        self._seen = 0
        #: ``done`` as the tensor each call returns (updated in place when a row ends: callers
        #: combine it into new tensors and do not keep it; a new tensor per token cost more)
        self._done = None

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        produced = input_ids.shape[1] - self.start
        # called after each token (one more than last time), a row's first end-of-sequence token is
        # its newest one: without text to decode (only cancellation to check) one column is read per
        # step instead of whole rows; otherwise (several tokens at once) rows are scanned
        one_more = produced == self._seen + 1
        self._seen = produced
        last = input_ids[:, -1].tolist() if one_more and not self.decode else None
        self._check(last, produced, input_ids)
        if self._done is None:  # one watcher per batch: one device
            self._done = self.torch.tensor(self.done, dtype=self.torch.bool, device=input_ids.device)
        return self._done

    def newest(self, last: list[int], produced: int) -> Any:
        """What calling the watcher after one more token per row returns, from those tokens
        (``last``: each row's newest, padding for finished rows) and the count generated so far:
        the decode loop has them as a list and needs no slice of the sequences. ``None`` when the
        watcher needs whole rows (text to decode), the call is not the next token, or it was never
        called (it learns the device then): call it as usual instead."""
        if self.decode or produced != self._seen + 1 or self._done is None:
            return None
        self._seen = produced
        self._check(last, produced, None)
        return self._done

    def _check(self, last: list[int] | None, produced: int, input_ids: Any) -> None:
        for r in range(len(self.done)):
            if self.done[r]:
                continue
            ended = False
            if last is not None:
                ended = last[r] in self.eos
                tokens = range(produced - 1 if ended else produced)  # only its length is used below
            else:
                tokens = input_ids[r, self.start :].tolist()
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
                if self._done is not None:
                    self._done[r] = True


class TorchCausalLM(CausalLMPipeline):
    """The PyTorch pipeline of chat / text-generation / summarization / translation (transformers)."""

    framework = "pt"
    backend = "transformers"
    supports_controls = True
    #: honours GenerationParams.GENERATE_OPTIONS (transformers' generate takes them as they are)
    supports_generate_options = True

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
        self._decoder: StaticDecoder | None = None
        self.init_ids(
            merge_eos(gen.eos_token_id, tokenizer.eos_token_id),
            gen.pad_token_id if gen.pad_token_id is not None else tokenizer.pad_token_id,
        )

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> TorchCausalLM:
        from transformers import AutoModelForCausalLM

        check_head(read_config(model_dir), options.task, model_dir)
        tokenizer = load_tokenizer(model_dir, options, padding_side="left")
        model, device, dtype = load_model(model_dir, AutoModelForCausalLM, options)
        return cls(model, tokenizer, task=options.task, model_dir=model_dir, device=device, dtype=dtype)

    @property
    def decoder(self) -> StaticDecoder:
        """The static-cache decode loop of this model (rebuilt when the model object changes)."""
        if self._decoder is None or self._decoder.model is not self.model:
            self._decoder = StaticDecoder(self.model)
        return self._decoder

    # ---- helpers ---------------------------------------------------------------------------
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
        rows = self.encode_prompts(inputs)
        eos_ids, text_stops = self.stops_for(params)
        input_ids, attention_mask = self._pad_left(rows)
        return Batch(
            input_ids,
            attention_mask,
            [len(r) for r in rows],
            list(indices if indices is not None else range(len(rows))),
            params,
            text_stops=text_stops,
            eos_ids=eos_ids,
        )

    def generation_kwargs(self, params: GenerationParams, eos_ids: tuple[int, ...]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "max_new_tokens": params.max_new_tokens,
            "num_beams": params.num_beams,
            "pad_token_id": self.pad_id,
            "eos_token_id": list(eos_ids) or None,
        }
        for name in ("do_sample", "temperature", "top_p", "top_k", "repetition_penalty", *params.GENERATE_OPTIONS):
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
        if params.controls:  # per-row logit_bias / penalties / min_p / grammars (constrained.py)
            from openmind.pt.pipelines.constrained import prepare_controls

            prepare_controls(self, params, kwargs, features.input_ids.shape[1], features.eos_ids)
        if watch:
            from transformers import StoppingCriteriaList

            features.watcher = RowWatcher(self.tokenizer, features)
            kwargs["stopping_criteria"] = StoppingCriteriaList([features.watcher])
        if params.seed is not None:
            torch.manual_seed(params.seed)
        decoder = self.decoder
        cfg = decoder.config_for({k: v for k, v in kwargs.items() if k != "stopping_criteria"})
        reason = decoder.reason(cfg, logprobs=params.wants_logprobs)
        if reason is None and params.controls:
            # grammars, logit_bias and penalties are logits processors of generate (constrained.py)
            reason = "per-row controls (grammar, logit_bias, penalties, min_p)"
        with torch.inference_mode():
            if reason is None:
                out = decoder.generate(features.input_ids, features.attention_mask, cfg, features.watcher)
                return out, None
            log_fallback(reason)
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
            if watcher is not None and not cancelled:
                self.emit_final(watcher.rows[r], text, batch.on_text, batch.indices[r])
            reason = finish_reason(
                cancelled=cancelled, stopped=ended or hit, produced=len(tokens), max_new_tokens=params.max_new_tokens
            )
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
    def generate_batch(
        self,
        prompts: list[Prompt],
        params: GenerationParams,
        indices: list[int],
        on_text: Callable[[int, str], None] | None,
        is_cancelled: Callable[[int], bool] | None,
    ) -> list[Generation]:
        batch = self.preprocess(prompts, params, indices)
        batch.on_text, batch.is_cancelled = on_text, is_cancelled
        return self.postprocess(self.forward(batch, params), params, batch)

    def check_controls(self, controls: Any, params: GenerationParams) -> None:
        """Compile a row's grammar before it is queued (OM-I102 on a bad schema)."""
        if controls is not None and controls.constraint is not None:
            from openmind.pt.pipelines.constrained import check_constraint

            check_constraint(self, controls.constraint, self.stops_for(params)[0])

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

    def log_probs(self, rows: list[list[int]]) -> Any:
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

    def top_tokens(self, step: Any, k: int) -> list[tuple[int, float]]:
        values, ids = step.topk(k)
        return [(int(i), float(v)) for v, i in zip(values.tolist(), ids.tolist())]
