"""Per-row logits processing for one ``model.generate`` batch: logit_bias, presence/frequency
penalties, min_p and grammar-constrained decoding (xgrammar).

:func:`prepare_controls` is the hook :class:`~openmind.pt.pipelines.generation.TorchCausalLM` calls
when a batch carries :mod:`controls <openmind.nlp.pipelines.controls>`: it returns the logits
processor and the ``generate`` keyword arguments to replace. transformers applies its own sampling
warpers (temperature, top-k, top-p, min-p) *before* custom processors, which would let top-p cut
away every token a grammar allows; so for such batches the warpers are switched off in
``generate`` and applied here, after the per-row steps, with transformers' own warper classes.
Order per step (vLLM's): logit_bias, presence/frequency penalties, grammar mask, then temperature,
top-k, top-p, min-p. Rows with their own ``seed`` then draw their token here, from their own
``torch.Generator``, exactly as ``generate`` draws it for a batch of one after ``torch.manual_seed``
(``multinomial`` on the softmax), and leave ``generate`` only that token to pick.

Grammars: ``xgrammar`` (chosen for speed: the token mask of a step costs microseconds, measured in
``bench/``). A :class:`~openmind.nlp.pipelines.controls.Constraint` is a union of alternatives
``prefix + JSON(schema) + suffix``; JSON is generated compactly (no free whitespace: an untrained
model would otherwise pad it forever).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from openmind.nlp.errors import I_BAD_PARAM
from openmind.nlp.pipelines.controls import Constraint, RowControls
from openmind.pt.device import import_torch

_LOCK = threading.Lock()
_COMPILERS: dict[tuple[int, tuple[int, ...]], Any] = {}
_GRAMMARS: OrderedDict[tuple[int, tuple[int, ...], Constraint], Any] = OrderedDict()
_MAX_CACHED = 256


def _xgrammar():
    try:
        import xgrammar
    except ImportError as exc:  # pragma: no cover - the optional extra is not installed
        raise I_BAD_PARAM.error(
            "response_format json_object/json_schema and tool_choice required/named need grammar-constrained "
            "decoding, which needs the 'xgrammar' package (not installed on this server)",
            location="response_format",
            hint='pip install "openmind-pt[structured]"',
        ) from exc
    return xgrammar


def _literal(text: str):
    xgr = _xgrammar()
    return xgr.Grammar.from_ebnf("root ::= " + json.dumps(text, ensure_ascii=False))


def compile_constraint(pipeline: Any, constraint: Constraint, stop_ids: tuple[int, ...]) -> Any:
    """The compiled grammar of ``constraint`` for ``pipeline``'s tokenizer (cached); OM-I102 on a bad schema."""
    xgr = _xgrammar()
    vocab = int(pipeline.model.config.get_text_config().vocab_size)
    key = (id(pipeline), stop_ids, constraint)
    with _LOCK:
        if key in _GRAMMARS:
            _GRAMMARS.move_to_end(key)
            return _GRAMMARS[key]
        ckey = (id(pipeline), stop_ids)
        compiler = _COMPILERS.get(ckey)
        if compiler is None:
            info = xgr.TokenizerInfo.from_huggingface(
                pipeline.tokenizer, vocab_size=vocab, stop_token_ids=list(stop_ids) or None
            )
            compiler = _COMPILERS[ckey] = xgr.GrammarCompiler(info)
    parts = []
    for alt in constraint.alternatives:
        try:
            body = xgr.Grammar.from_json_schema(alt.schema, any_whitespace=False, strict_mode=True)
        except Exception as exc:  # noqa: BLE001 - xgrammar raises RuntimeError/ValueError on bad schemas
            raise I_BAD_PARAM.error(
                f"{constraint.label}: the JSON schema cannot be compiled: {exc}",
                location=constraint.label,
                hint="Use a JSON Schema (draft 2020-12) object such as "
                '{"type": "object", "properties": {...}, "required": [...]}.',
            ) from None
        pieces = [g for g in (_literal(alt.prefix) if alt.prefix else None, body) if g is not None]
        if alt.suffix:
            pieces.append(_literal(alt.suffix))
        parts.append(xgr.Grammar.concat(*pieces) if len(pieces) > 1 else pieces[0])
    grammar = xgr.Grammar.union(*parts) if len(parts) > 1 else parts[0]
    compiled = compiler.compile_grammar(grammar)
    with _LOCK:
        _GRAMMARS[key] = compiled
        while len(_GRAMMARS) > _MAX_CACHED:
            _GRAMMARS.popitem(last=False)
    return compiled


class RowControlsProcessor:
    """A transformers ``LogitsProcessor`` applying each row's :class:`RowControls` (see module doc)."""

    def __init__(
        self,
        pipeline: Any,
        controls: tuple[RowControls | None, ...],
        *,
        start: int,
        stop_ids: tuple[int, ...],
        warpers: list[Any],
    ) -> None:
        self.torch = import_torch()
        self.controls = [c or RowControls() for c in controls]
        self.start = start
        self.warpers = warpers
        self.matchers: list[Any] = [None] * len(self.controls)
        xgr = None
        for r, c in enumerate(self.controls):
            if c.constraint is not None:
                xgr = xgr or _xgrammar()
                self.matchers[r] = xgr.GrammarMatcher(compile_constraint(pipeline, c.constraint, stop_ids))
        self.xgr = xgr
        self.vocab = int(pipeline.model.config.get_text_config().vocab_size)
        self.bitmask = xgr.allocate_token_bitmask(len(self.controls), self.vocab) if xgr is not None else None
        #: rows whose grammar rejected a token (cannot happen unless generation ran past the grammar)
        self.broken = [False] * len(self.controls)
        self.min_p_warpers: dict[float, Any] = {}
        #: per-row generators (rows with a ``seed``), made on the device of the first scores
        self.generators: dict[int, Any] | None = None
        self.steps = 0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        torch = self.torch
        generated = input_ids[:, self.start :]
        n_gen = generated.shape[1]
        for r, c in enumerate(self.controls):
            if c.logit_bias:
                ids = torch.tensor([t for t, _ in c.logit_bias], device=scores.device)
                bias = torch.tensor([b for _, b in c.logit_bias], dtype=scores.dtype, device=scores.device)
                scores[r].index_add_(0, ids, bias)
            if (c.presence_penalty or c.frequency_penalty) and n_gen:
                counts = torch.bincount(generated[r], minlength=scores.shape[1])[: scores.shape[1]].to(scores.dtype)
                scores[r] -= c.frequency_penalty * counts + c.presence_penalty * (counts > 0).to(scores.dtype)
        if self.bitmask is not None:
            rows = []
            for r, matcher in enumerate(self.matchers):
                if matcher is None or self.broken[r]:
                    continue
                if n_gen and not matcher.is_terminated() and not matcher.accept_token(int(generated[r, -1])):
                    self.broken[r] = True
                    continue
                if matcher.is_terminated():  # it accepted a stop token: the row has ended
                    continue
                # once the grammar is complete the mask allows only its stop tokens
                matcher.fill_next_token_bitmask(self.bitmask, r)
                rows.append(r)
            if rows:
                self.xgr.apply_token_bitmask_inplace(
                    scores, self.bitmask.to(scores.device), vocab_size=self.vocab, indices=rows
                )
        for warper in self.warpers:
            scores = warper(input_ids, scores)
        for r, c in enumerate(self.controls):
            if c.min_p and self.sampling:
                warper = self.min_p_warpers.get(c.min_p)
                if warper is None:
                    from transformers import MinPLogitsWarper

                    warper = self.min_p_warpers[c.min_p] = MinPLogitsWarper(min_p=c.min_p)
                scores[r : r + 1] = warper(input_ids[r : r + 1], scores[r : r + 1])
        if self.sampling:
            self._draw_seeded(scores)
        self.steps += 1
        return scores

    def _draw_seeded(self, scores: Any) -> None:
        torch = self.torch
        if self.generators is None:
            self.generators = {
                r: torch.Generator(device=scores.device).manual_seed(c.seed)
                for r, c in enumerate(self.controls)
                if c.seed is not None
            }
        for r, generator in self.generators.items():
            probs = torch.softmax(scores[r : r + 1], dim=-1)
            token = int(torch.multinomial(probs, num_samples=1, generator=generator))
            scores[r] = -float("inf")
            scores[r, token] = 0.0

    sampling = False


def prepare_controls(pipeline: Any, params: Any, kwargs: dict[str, Any], start: int, stop_ids: tuple[int, ...]):
    """Replace ``generate`` kwargs for a batch with per-row controls; returns the processor."""
    from transformers import (
        LogitsProcessorList,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    # the values generate would use: the call's, the model's generation_config, then transformers'
    # global defaults (top_k=50 when nothing sets it) -- as a batch without controls samples
    gen = pipeline.decoder.config_for(kwargs)
    sampling = bool(gen.do_sample)
    warpers: list[Any] = []
    if sampling:
        temperature, top_k, top_p = gen.temperature, gen.top_k, gen.top_p
        if temperature is not None and temperature != 1.0:
            warpers.append(TemperatureLogitsWarper(temperature))
        if top_k:
            warpers.append(TopKLogitsWarper(top_k=top_k))
        if top_p is not None and top_p < 1.0:
            warpers.append(TopPLogitsWarper(top_p=top_p))
        # applied by the processor instead of generate
        kwargs.update(temperature=1.0, top_k=0, top_p=1.0, min_p=None)
    processor = RowControlsProcessor(pipeline, params.controls, start=start, stop_ids=stop_ids, warpers=warpers)
    processor.sampling = sampling
    kwargs["logits_processor"] = LogitsProcessorList([processor])
    return processor


def check_constraint(pipeline: Any, constraint: Constraint, stop_ids: tuple[int, ...]) -> None:
    """Compile ``constraint`` now (a bad schema is OM-I102 before the request is queued)."""
    compile_constraint(pipeline, constraint, stop_ids)
