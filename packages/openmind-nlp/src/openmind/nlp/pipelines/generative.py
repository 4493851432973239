"""Shared base of the generative wrappers (chat, text-generation, summarization, translation)."""

from __future__ import annotations

from typing import Any, ClassVar

from openmind.core.plugins import attributed
from openmind.nlp.errors import I_BAD_PARAM
from openmind.nlp.pipelines.base import Generation, GenerationParams, GenerativePipeline, TextStream
from openmind.nlp.pipelines.wrapper import PipelineWrapper

#: per-call options that become per-row controls (:mod:`openmind.nlp.pipelines.controls`)
CONTROL_NAMES = ("response_format", "logit_bias", "presence_penalty", "frequency_penalty", "min_p")


def row_controls(values: dict[str, Any]) -> Any:
    """OpenAI-style options as :class:`~openmind.nlp.pipelines.controls.RowControls` (OM-I102 on bad ones).

    ``response_format``: ``{"type": "json_object"}``, ``{"type": "json_schema", "json_schema":
    {"schema": {...}}}`` (OpenAI's shape) or ``{"type": "json_schema", "schema": {...}}``;
    ``logit_bias``: ``{token_id: bias}``; penalties in [-2, 2]; ``min_p`` in [0, 1].
    """
    from openmind.nlp.pipelines.controls import RowControls, json_object_constraint, json_schema_constraint

    def bad(name: str, value: Any, rule: str):
        return I_BAD_PARAM.error(f"{name}={value!r}: {rule}", location=name)

    constraint = None
    fmt = values.get("response_format")
    if fmt is not None:
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind == "json_object":
            constraint = json_object_constraint()
        elif kind == "json_schema":
            inner = fmt.get("json_schema") if isinstance(fmt.get("json_schema"), dict) else fmt
            schema = inner.get("schema")
            if not isinstance(schema, dict):
                raise bad("response_format", fmt, "json_schema needs a 'schema' object")
            constraint = json_schema_constraint(schema, "response_format")
        elif kind != "text":
            raise bad("response_format", fmt, "use {'type': 'json_object'} or {'type': 'json_schema', ...}")
    bias = values.get("logit_bias") or {}
    try:
        pairs = tuple(sorted((int(k), float(v)) for k, v in dict(bias).items()))
    except (TypeError, ValueError):
        raise bad("logit_bias", bias, "a mapping of token id to a bias in [-100, 100]") from None
    if any(not -100 <= v <= 100 or t < 0 for t, v in pairs):
        raise bad("logit_bias", bias, "token ids >= 0, biases in [-100, 100]")
    penalties = {}
    for name in ("presence_penalty", "frequency_penalty"):
        value = values.get(name) or 0.0
        if not isinstance(value, (int, float)) or not -2 <= value <= 2:
            raise bad(name, value, "a number in [-2, 2]")
        penalties[name] = float(value)
    min_p = values.get("min_p")
    if min_p is not None and (not isinstance(min_p, (int, float)) or not 0 <= min_p <= 1):
        raise bad("min_p", min_p, "a number in [0, 1]")
    controls = RowControls(logit_bias=pairs, min_p=min_p or None, constraint=constraint, **penalties)
    return None if controls.empty else controls


#: transformers' per-call keywords that the wrapper turns into generation parameters per input:
#: ``max_length`` / ``min_length`` count the prompt's tokens too (decoder-only models; the decoder's
#: start token on encoder-decoder models), ``num_return_sequences`` answers per input
LENGTH_KEYS = ("max_length", "min_length", "num_return_sequences")


class GenerativeWrapper(PipelineWrapper):
    """Generation parameters (``max_new_tokens``, ``temperature``, ``top_p``, ``top_k``,
    ``repetition_penalty``, ``do_sample``, ``num_beams``, ``stop``, ``seed``, ``logprobs``,
    ``top_logprobs``, and transformers' ``max_length``, ``min_length``, ``min_new_tokens``,
    ``num_return_sequences``, ``no_repeat_ngram_size``, ``length_penalty``, ``early_stopping``) may
    be given when the pipeline is built (defaults) and on each call."""

    params_cls = GenerationParams
    #: wrapper options besides generation parameters (e.g. ``system`` for chat)
    options: ClassVar[tuple[str, ...]] = ()
    #: with ``return_format="transformers"`` every input's outputs come as a list (1.0 / transformers:
    #: ``[{"generated_text": ...}]``); ``chat`` (openmind's own task) keeps its message
    listed: ClassVar[bool] = True
    backend: GenerativePipeline

    def configure(self, **options: Any) -> GenerationParams:
        for name in self.options:
            setattr(self, name, options.pop(name, getattr(type(self), name, None)))
        self.length_defaults = {k: options.pop(k) for k in LENGTH_KEYS if k in options}
        self.max_new_tokens_given = "max_new_tokens" in options
        self.min_new_tokens_given = "min_new_tokens" in options
        self._check_lengths(self.length_defaults)
        return self.make_params(None, options)

    def make_params(self, base: Any, values: dict[str, Any]) -> GenerationParams:
        if any(k in values for k in CONTROL_NAMES):
            values = dict(values)
            values["controls"] = row_controls({k: values.pop(k) for k in CONTROL_NAMES if k in values})
        unknown = [k for k in values if k not in GenerationParams.NAMES and k != "generation_seed"]
        if unknown:
            self._unknown({k: values[k] for k in unknown}, (*GenerationParams.NAMES, *LENGTH_KEYS, *self.options))
        params = GenerationParams.build(base, **values)
        used = [n for n in GenerationParams.GENERATE_OPTIONS if getattr(params, n) is not None]
        if used and not getattr(self.backend, "supports_generate_options", False):
            raise I_BAD_PARAM.error(
                f"{', '.join(used)} not supported by the {self.selection.get('backend', '')!r} backend",
                location=used[0],
                hint="Use framework='pt' for these transformers generate options.",
            )
        return params

    @staticmethod
    def _check_lengths(values: dict[str, Any]) -> None:
        for name, low in (("max_length", 1), ("min_length", 0), ("num_return_sequences", 1)):
            value = values.get(name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < low):
                raise I_BAD_PARAM.error(f"{name}={value!r}: must be an integer >= {low}", location=name)

    def stop_words(self) -> tuple[str, ...]:
        """Stop strings every call adds to the user's (e.g. the template's)."""
        return ()

    def with_stops(self, params: GenerationParams) -> GenerationParams:
        extra = self.stop_words()
        if not extra:
            return params
        from dataclasses import replace

        return replace(params, stop=tuple(dict.fromkeys((*params.stop, *extra))))

    def prompt(self, item: Any, overrides: dict[str, Any]) -> str | list[int]:
        """The backend prompt (text or token ids) of one checked input."""
        return item

    def output(self, generation: Generation, item: Any, overrides: dict[str, Any]) -> Any:
        return generation.text

    def _split_call(self, params: dict[str, Any]) -> tuple[dict[str, Any], GenerationParams]:
        overrides = {name: params.pop(name) for name in self.options if name in params}
        lengths = {k: params.pop(k) for k in LENGTH_KEYS if k in params}
        self._check_lengths(lengths)
        overrides["_lengths"] = {**self.length_defaults, **lengths}
        overrides["_max_new_given"] = self.max_new_tokens_given or "max_new_tokens" in params
        overrides["_min_new_given"] = self.min_new_tokens_given or "min_new_tokens" in params
        call = self.make_params(self.defaults, params) if params else self.defaults
        return overrides, self.with_stops(call)

    # ---- transformers' length keywords and num_return_sequences ------------------------------
    def _prompt_tokens(self, prompt: Any) -> int:
        """Tokens that ``max_length``/``min_length`` count besides the new ones."""
        if self.config.get("is_encoder_decoder"):
            return 1  # the decoder's start token (transformers counts the decoder's sequence)
        if isinstance(prompt, str):
            return len(self.backend.tokenizer(prompt)["input_ids"])
        if isinstance(prompt, (list, tuple)):
            return len(prompt)
        raise I_BAD_PARAM.error(
            f"max_length / min_length are not supported by task {self.task!r} (its prompts are not plain token ids)",
            location="max_length",
            hint="Use max_new_tokens / min_new_tokens.",
        )

    def _sampling(self, call: GenerationParams) -> bool:
        if call.do_sample is not None:
            return bool(call.do_sample)
        if call.temperature is not None:
            return call.temperature > 0
        generation_config = getattr(getattr(self.backend, "model", None), "generation_config", None)
        return bool(getattr(generation_config, "do_sample", False))

    def _expand(
        self, prompts: list[Any], call: GenerationParams, overrides: dict[str, Any]
    ) -> tuple[list[Any], list[GenerationParams] | GenerationParams, int]:
        """Prompts repeated ``num_return_sequences`` times, with per-prompt params for ``max_length`` /
        ``min_length``; returns ``(prompts, params, n)``."""
        from dataclasses import replace

        lengths = overrides.get("_lengths") or {}
        n = lengths.get("num_return_sequences") or 1
        if n > 1:
            if call.num_beams > 1:
                raise I_BAD_PARAM.error(
                    "num_return_sequences > 1 with beam search (num_beams > 1) is not supported",
                    location="num_return_sequences",
                    hint="Sample several answers instead (do_sample=True), or call once per beam setting.",
                )
            if not self._sampling(call):
                raise I_BAD_PARAM.error(
                    f"num_return_sequences={n} needs sampling: greedy decoding gives one answer",
                    location="num_return_sequences",
                    hint="Pass do_sample=True (as transformers requires).",
                )
        per_prompt: list[GenerationParams] | GenerationParams = call
        max_length, min_length = lengths.get("max_length"), lengths.get("min_length")
        use_max = max_length is not None and not overrides.get("_max_new_given")
        use_min = min_length is not None and not overrides.get("_min_new_given")
        if use_max or use_min:
            per_prompt = []
            for prompt in prompts:
                used = self._prompt_tokens(prompt)
                changes: dict[str, Any] = {}
                if use_max:
                    changes["max_new_tokens"] = max(1, max_length - used)
                if use_min:
                    changes["min_new_tokens"] = max(0, min_length - used)
                per_prompt.append(self.make_params(call, changes) if use_min else replace(call, **changes))
        if n > 1:
            prompts = [p for p in prompts for _ in range(n)]
            if isinstance(per_prompt, list):
                per_prompt = [p for p in per_prompt for _ in range(n)]
        return prompts, per_prompt, n

    def generate(self, inputs: Any, *, batch_size: int | None = None, **params: Any) -> list[Generation]:
        """Like calling the pipeline, but returns :class:`Generation` objects (token ids,
        finish reason, token counts, logprobs) for a list of inputs (``num_return_sequences``
        of them per input, one after the other)."""
        _, items = self.split(inputs)
        overrides, call = self._split_call(params)
        prompts, per_prompt, n = self._expand([self.prompt(item, overrides) for item in items], call, overrides)
        with attributed(self._component):
            return self.backend.generate(prompts, per_prompt, batch_size=n * (batch_size or self.batch_size))

    def __call__(self, inputs: Any, *, stream: bool = False, batch_size: int | None = None, **params: Any) -> Any:
        single, items = self.split(inputs)
        overrides, call = self._split_call(params)
        if stream:
            if not single:
                raise I_BAD_PARAM.error("stream=True takes one input, not a list", location="stream")
            if call.num_beams > 1:
                raise I_BAD_PARAM.error("stream=True cannot be combined with num_beams > 1", location="num_beams")
            if (overrides["_lengths"].get("num_return_sequences") or 1) > 1:
                raise I_BAD_PARAM.error("stream=True takes num_return_sequences=1", location="num_return_sequences")
            prompts, per_prompt, _ = self._expand([self.prompt(items[0], overrides)], call, overrides)
            one = per_prompt[0] if isinstance(per_prompt, list) else per_prompt
            with attributed(self._component):
                return self.backend.stream(prompts[0], one)
        prompts, per_prompt, n = self._expand([self.prompt(item, overrides) for item in items], call, overrides)
        with attributed(self._component):
            generations = self.backend.generate(prompts, per_prompt, batch_size=n * (batch_size or self.batch_size))
        answers = [
            [self.output(g, item, overrides) for g in generations[i * n : (i + 1) * n]] for i, item in enumerate(items)
        ]
        if self.return_format == "transformers" and self.listed:
            return answers[0] if single else answers
        outputs = [a[0] if n == 1 else a for a in answers]
        return outputs[0] if single else outputs

    def stream(self, inputs: Any, **params: Any) -> TextStream:
        """Text deltas of the answer to one input: ``for delta in pipe.stream(x): print(delta, end="")``."""
        return self(inputs, stream=True, **params)

    def loglikelihood(
        self, requests: list[tuple[str, str]], *, batch_size: int | None = None
    ) -> list[tuple[float, bool]]:
        """For log-likelihood evaluation: see :meth:`GenerativePipeline.loglikelihood`."""
        for i, pair in enumerate(requests):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(s, str) for s in pair)):
                from openmind.core.errors import I_BAD_INPUT

                raise I_BAD_INPUT.error(
                    f"loglikelihood takes (context, continuation) string pairs; request {i} is {pair!r}",
                    location=f"requests[{i}]",
                )
        with attributed(self._component):
            return self.backend.loglikelihood([tuple(p) for p in requests], batch_size=batch_size or self.batch_size)
