"""Encoder-decoder generation on transformers (T5, BART, mT5, Marian): text2text-generation, and
summarization / translation on seq2seq folders.

The input text goes to the encoder (padded with the tokenizer's own settings, as
``tokenizer(texts, padding=True)``), ``model.generate`` decodes, the answer is the decoded output.
Stop strings are applied to the decoded text; streaming emits the whole answer once it is done.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from openmind.core.api import read_config
from openmind.nlp.errors import I_BAD_PARAM
from openmind.nlp.pipelines.base import Generation, GenerationParams, LoadOptions, Prompt, TokenLogprob
from openmind.nlp.pipelines.causal import DECODE, finish_reason, merge_eos
from openmind.nlp.pipelines.stopping import truncate_at_stop
from openmind.pt.device import import_torch
from openmind.pt.pipelines.generation import TorchCausalLM
from openmind.pt.pipelines.loading import dtype_name, load_model, load_tokenizer


class TorchSeq2SeqLM(TorchCausalLM):
    """``AutoModelForSeq2SeqLM`` + ``generate``."""

    def __init__(self, model: Any, tokenizer: Any, *, task: str, model_dir: str, device: str, dtype: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.task = task
        self.model_dir = model_dir
        self.device = device
        self.dtype = dtype_name(dtype)
        self.max_length = None  # the encoder truncates nothing silently: see encode_prompts
        gen = model.generation_config
        self.init_ids(
            merge_eos(gen.eos_token_id, tokenizer.eos_token_id),
            gen.pad_token_id if gen.pad_token_id is not None else tokenizer.pad_token_id,
        )

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> TorchSeq2SeqLM:
        from transformers import AutoModelForSeq2SeqLM

        tokenizer = load_tokenizer(model_dir, options, padding_side="right")
        model, device, dtype = load_model(model_dir, AutoModelForSeq2SeqLM, options)
        return cls(model, tokenizer, task=options.task, model_dir=model_dir, device=device, dtype=dtype)

    def preprocess(self, inputs: list[Prompt], params: GenerationParams, indices: list[int] | None = None) -> Any:
        rows = self.encode_prompts(inputs)
        features = self.tokenizer.pad({"input_ids": rows}, padding=True, return_tensors="pt")
        eos_ids, text_stops = self.stops_for(params)
        return {
            "input_ids": features["input_ids"].to(self.device),
            "attention_mask": features["attention_mask"].to(self.device),
            "prompt_lens": [len(r) for r in rows],
            "eos_ids": eos_ids,
            "text_stops": text_stops,
        }

    def forward(self, features: Any, params: GenerationParams) -> Any:
        torch = import_torch()
        kwargs = self.generation_kwargs(params, features["eos_ids"])
        if params.seed is not None:
            torch.manual_seed(params.seed)
        with torch.inference_mode():
            return self.model.generate(
                input_ids=features["input_ids"], attention_mask=features["attention_mask"], **kwargs
            )

    def postprocess(self, outputs: Any, params: GenerationParams, features: Any = None) -> list[Generation]:
        start = getattr(self.model.generation_config, "decoder_start_token_id", None)
        results = []
        for r in range(outputs.shape[0]):
            tokens = outputs[r].tolist()
            if tokens and tokens[0] == start:
                tokens = tokens[1:]
            ended = False
            for j, token in enumerate(tokens):
                if token in features["eos_ids"]:
                    tokens, ended = tokens[:j], True
                    break
            while tokens and tokens[-1] == self.pad_id:
                tokens = tokens[:-1]
            text, hit = truncate_at_stop(self.tokenizer.decode(tokens, **DECODE), features["text_stops"])
            reason = finish_reason(
                cancelled=False, stopped=ended or hit, produced=len(tokens), max_new_tokens=params.max_new_tokens
            )
            results.append(Generation(text, tokens, reason, features["prompt_lens"][r]))
        return results

    def generate_batch(
        self,
        prompts: list[Prompt],
        params: GenerationParams,
        indices: list[int],
        on_text: Callable[[int, str], None] | None,
        is_cancelled: Callable[[int], bool] | None,
    ) -> list[Generation]:
        if params.wants_logprobs:
            raise I_BAD_PARAM.error("logprobs are not available for encoder-decoder models", location="logprobs")
        features = self.preprocess(prompts, params, indices)
        results = self.postprocess(self.forward(features, params), params, features)
        if on_text is not None:
            for index, generation in zip(indices, results, strict=True):
                if generation.text:
                    on_text(index, generation.text)
        return results

    def loglikelihood(self, requests: Sequence[tuple[str, str]], *, batch_size: int = 1) -> list[tuple[float, bool]]:
        raise I_BAD_PARAM.error("log-likelihood scoring is implemented for decoder-only models only")

    def prompt_logprobs(self, prompts: Sequence[Prompt], top_logprobs: int = 0) -> list[list[TokenLogprob]]:
        raise I_BAD_PARAM.error("prompt log-probabilities are implemented for decoder-only models only")


class TorchGenerative:
    """The PyTorch pipeline of ``summarization`` / ``translation``: seq2seq for encoder-decoder
    folders, the decoder-only (chat) pipeline otherwise."""

    framework = "pt"
    backend = "transformers"

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> TorchCausalLM:
        if read_config(model_dir).get("is_encoder_decoder"):
            return TorchSeq2SeqLM.load(model_dir, options)
        return TorchCausalLM.load(model_dir, options)
