"""Decoder-only generation on MindSpore: chat, text-generation, summarization, translation.

Same contract and semantics as the PyTorch pipeline (left padding, greedy results independent of
batching, stop strings on text, streaming, cancellation, logprobs, log-likelihoods, LoRA adapters),
on the native Llama-family model and its compiled static-cache decoder
(:mod:`openmind.ms.generation`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np

from openmind.core.pipelines.base import LoadOptions
from openmind.ms import runtime
from openmind.ms.pipelines.loading import check_folder, generation_defaults, load_tokenizer, resolve_dtype
from openmind.nlp.errors import I_BAD_PARAM, M_ADAPTER
from openmind.nlp.pipelines.base import Generation, GenerationParams, Prompt, TokenLogprob
from openmind.nlp.pipelines.causal import DECODE, CausalLMPipeline, finish_reason, merge_eos
from openmind.nlp.pipelines.stopping import StopText, truncate_at_stop


def LlamaModelType():  # noqa: N802 - a lazily imported class
    from openmind.ms.models.llama import LlamaForCausalLM

    return LlamaForCausalLM


class MindSporeCausalLM(CausalLMPipeline):
    """The MindSpore pipeline of chat / text-generation / summarization / translation."""

    framework = "ms"
    backend = "native"

    def __init__(self, model: Any, tokenizer: Any, *, task: str, model_dir: str, device: str, dtype: str) -> None:
        self.model = model
        if isinstance(model, LlamaModelType()):
            from openmind.ms.generation import decoder

            self.decoder = decoder(model)
        self.tokenizer = tokenizer
        self.task = task
        self.model_dir = model_dir
        self.device = device
        self.dtype = dtype
        cfg = model.config
        self.max_length = cfg.max_position_embeddings
        gen = generation_defaults(model_dir)
        eos = gen.get("eos_token_id", None)
        self.init_ids(
            merge_eos(eos if eos is not None else list(cfg.eos_token_ids), tokenizer.eos_token_id),
            gen.get("pad_token_id", tokenizer.pad_token_id),
        )
        #: decoding defaults of generation_config.json (transformers' defaults otherwise)
        self.gen_defaults = {
            "do_sample": gen.get("do_sample", False),
            "temperature": gen.get("temperature", 1.0),
            "top_k": gen.get("top_k", 50),
            "top_p": gen.get("top_p", 1.0),
            "repetition_penalty": gen.get("repetition_penalty", 1.0),
        }
        self._adapters: dict[str, dict[str, np.ndarray]] = {}

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> MindSporeCausalLM:
        check_folder(model_dir, options)
        tokenizer = load_tokenizer(model_dir, options, padding_side="left")
        device = runtime.set_device(options.device)
        dtype = resolve_dtype(options.dtype, device.split(":")[0])
        from openmind.ms.models import auto

        model, _ = auto.load(model_dir, "causal-lm", dtype=dtype)
        pipe = cls(model, tokenizer, task=options.task, model_dir=model_dir, device=device, dtype=dtype)
        if options.adapter:
            pipe.add_adapter("default", options.adapter)
            pipe._apply(pipe._adapters["default"], 1.0)  # the adapter given at load time is always on
            pipe._adapters["default"] = {}
        return pipe

    # ---- helpers ---------------------------------------------------------------------------
    def decoding(self, params: GenerationParams, eos_ids: tuple[int, ...]):
        from openmind.ms.generation import GenerationParams as Decoding

        if params.num_beams > 1:
            raise I_BAD_PARAM.error("beam search is not implemented on MindSpore", location="num_beams")
        d = self.gen_defaults
        do_sample = params.do_sample
        if do_sample is None:
            do_sample = params.temperature > 0 if params.temperature is not None else bool(d["do_sample"])
        return Decoding(
            max_new_tokens=params.max_new_tokens,
            do_sample=do_sample,
            temperature=params.temperature if params.temperature is not None else d["temperature"],
            top_k=params.top_k if params.top_k is not None else (d["top_k"] or 0),
            top_p=params.top_p if params.top_p is not None else d["top_p"],
            repetition_penalty=params.repetition_penalty or d["repetition_penalty"] or 1.0,
            seed=params.seed,
            eos_token_ids=eos_ids,
            logprobs=params.wants_logprobs,
            top_logprobs=params.top_logprobs,
        )

    # ---- preprocess / forward / postprocess ----------------------------------------------
    def preprocess(self, inputs: list[Prompt], params: GenerationParams, indices: list[int] | None = None) -> dict:
        rows = self.encode_prompts(inputs)
        eos_ids, text_stops = self.stops_for(params)
        return {
            "rows": rows,
            "indices": list(indices if indices is not None else range(len(rows))),
            "eos_ids": eos_ids,
            "text_stops": text_stops,
            "on_text": None,
            "is_cancelled": None,
        }

    def forward(self, features: dict, params: GenerationParams) -> dict:
        rows, indices = features["rows"], features["indices"]
        text_stops, on_text, is_cancelled = features["text_stops"], features["on_text"], features["is_cancelled"]
        decoding = self.decoding(params, features["eos_ids"])
        watch = bool(text_stops) or on_text is not None or is_cancelled is not None
        texts = [StopText(text_stops) for _ in rows]
        cancelled = [False] * len(rows)
        stopped_on_text = [False] * len(rows)

        def stop_check(r: int, tokens: list[int]) -> bool:
            if not watch:
                return False
            # (an EOS ends a row before this is called: the final text is emitted by postprocess)
            delta = texts[r].update(self.tokenizer.decode(tokens, **DECODE))
            if delta and on_text is not None:
                on_text(indices[r], delta)
            if texts[r].stopped:
                stopped_on_text[r] = True
                return True
            if is_cancelled is not None and is_cancelled(indices[r]):
                cancelled[r] = True
                return True
            return False

        tokens: list[list[int]] = [[] for _ in rows]
        logprobs: list[list[tuple[int, float | None, list[tuple[int, float]]]]] = [[] for _ in rows]
        ended = [False] * len(rows)
        for step in self.decoder.stream(rows, decoding, pad_id=self.pad_id, stop_check=stop_check):
            for r, item in enumerate(step):
                if item is None:
                    continue
                token, logp, done, top = item
                tokens[r].append(token)
                logprobs[r].append((token, logp, top))
                ended[r] = done
        return {
            "tokens": tokens,
            "logprobs": logprobs,
            "ended": ended,
            "cancelled": cancelled,
            "stopped_on_text": stopped_on_text,
            "texts": texts,
            "features": features,
        }

    def postprocess(self, outputs: dict, params: GenerationParams) -> list[Generation]:
        features = outputs["features"]
        eos = set(features["eos_ids"])
        on_text = features["on_text"]
        results = []
        for r, raw in enumerate(outputs["tokens"]):
            tokens = list(raw)
            hit_eos = bool(tokens) and tokens[-1] in eos and outputs["ended"][r]
            if hit_eos:
                tokens = tokens[:-1]
            text, hit = truncate_at_stop(self.tokenizer.decode(tokens, **DECODE), features["text_stops"])
            cancelled = outputs["cancelled"][r]
            if not cancelled:
                self.emit_final(outputs["texts"][r], text, on_text, features["indices"][r])
            reason = finish_reason(
                cancelled=cancelled,
                stopped=hit_eos or hit or outputs["stopped_on_text"][r],
                produced=len(tokens),
                max_new_tokens=params.max_new_tokens,
            )
            logprobs = None
            if params.wants_logprobs:
                logprobs = [
                    TokenLogprob(
                        self.tokenizer.decode([token]),
                        token,
                        logp,
                        [(self.tokenizer.decode([i]), lp) for i, lp in top],
                    )
                    for token, logp, top in outputs["logprobs"][r][: len(tokens)]
                ]
            results.append(Generation(text, tokens, reason, len(features["rows"][r]), logprobs))
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
        features = self.preprocess(prompts, params, indices)
        features["on_text"], features["is_cancelled"] = on_text, is_cancelled
        return self.postprocess(self.forward(features, params), params)

    def _apply(self, deltas: dict[str, np.ndarray], sign: float) -> None:
        from openmind.ms.models.lora import add_parameters

        add_parameters(self.model, deltas, sign)

    @contextlib.contextmanager
    def _adapter(self, name: str | None):
        if name is None or name == "":
            if name == "" and not self._adapters:
                raise I_BAD_PARAM.error("adapter '' requested, but the model has no adapters", location="adapter")
            yield
            return
        if name not in self._adapters:
            loaded = ", ".join(self._adapters) or "none"
            raise I_BAD_PARAM.error(f"unknown adapter {name!r}; loaded: {loaded}", location="adapter")
        deltas = self._adapters[name]
        originals = {n: p.asnumpy().copy() for n, p in self.model.parameters_and_names() if n in deltas}
        self._apply(deltas, 1.0)
        try:
            yield
        finally:
            from mindspore import Tensor

            params = dict(self.model.parameters_and_names())
            for n, value in originals.items():
                params[n].set_data(Tensor(value, dtype=params[n].dtype))

    def add_adapter(self, name: str, path: str) -> None:
        from openmind.ms.models.lora import adapter_deltas

        with self._lock:
            try:
                self._adapters[name] = adapter_deltas(self.model, path)
            except OSError as exc:
                raise M_ADAPTER.error(f"cannot read adapter {path!r}: {exc}", location=path) from exc

    def log_probs(self, rows: list[list[int]]) -> np.ndarray:
        return self.decoder.log_probs(rows, pad_id=self.pad_id)

    def top_tokens(self, step: np.ndarray, k: int) -> list[tuple[int, float]]:
        return [(int(i), float(step[i])) for i in np.argsort(-step, kind="stable")[:k]]
