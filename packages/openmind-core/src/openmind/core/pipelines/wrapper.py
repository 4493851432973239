"""The framework-neutral base of every pipeline wrapper (what ``openmind.pipeline(...)`` returns).

Domain neutral: a domain subclasses :class:`PipelineWrapper` per task, sets :attr:`params_cls`
to its parameter dataclass and overrides :meth:`PipelineWrapper.check_model` to add what its
models need (openmind-nlp: a tokenizer). See ``docs/EXTENDING.md``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import fields
from typing import Any, ClassVar

from openmind.core.api import select
from openmind.core.errors import I_BAD_INPUT
from openmind.core.logs import logger
from openmind.core.pipelines.base import LoadOptions, Pipeline
from openmind.core.pipelines.errors import I_BAD_INPUT_FILE, I_BAD_PARAM
from openmind.core.pipelines.model import ModelFolder, resolve_model_dir
from openmind.core.plugins import attributed
from openmind.core.registry import suggest

#: ``return_format`` values: 1.0's / transformers' output shapes, or openmind 2.x's structured outputs
RETURN_FORMATS = ("transformers", "openmind")


def check_return_format(value: Any) -> str:
    """``value`` if it is one of :data:`RETURN_FORMATS` (OM-I102 otherwise)."""
    if value not in RETURN_FORMATS:
        raise I_BAD_PARAM.error(
            f"return_format={value!r}: use 'transformers' (1.0 / transformers output shapes, the default) "
            "or 'openmind' (2.x structured outputs)",
            location="return_format",
        )
    return value


def type_name(value: Any) -> str:
    if isinstance(value, list):
        inner = sorted({type(v).__name__ for v in value})
        return f"list[{' | '.join(inner)}]" if inner else "empty list"
    return type(value).__name__


class PipelineWrapper:
    """Loads a model folder with the task's pipeline for the chosen framework and runs it.

    :param task: registered task name (set by :func:`openmind.pipeline`).
    :param model: a local model folder or a hub id.
    :param framework: ``auto`` | ``pt`` | ``ms``.
    :param device: ``auto`` | ``cpu`` | ``cuda:N`` | ``npu:N``.
    :param dtype: ``auto`` | ``float32`` | ``float16`` | ``bfloat16``.
    :param batch_size: inputs per forward pass when called with a list.
    :param adapter: a LoRA adapter folder to apply on top of the model.
    :param tokenizer: a tokenizer folder, when the model folder has none.
    :param trust_remote_code: allow code shipped with the model to run (off by default).
    :param allow_pickle: allow pickle (``.bin``) weights (refused by default).
    :param return_format: ``"transformers"`` (the default: the output shapes of openMind 1.0 and
        transformers' pipeline of the task, e.g. ``[{"generated_text": ...}]`` for one prompt) or
        ``"openmind"`` (openmind 2.x's structured outputs: one item per input, ``{"generated_text"}``
        for one prompt). Tasks where both agree return the same either way.

    Task-specific keyword arguments (e.g. ``system=`` for chat, ``pooling=`` for text2emb) set
    the defaults of every call; each call may override them.
    """

    task: str = ""
    #: what one input is, for error messages
    accepts: ClassVar[str] = "a string"
    #: the params dataclass of the task (a dataclass with a ``check()`` method)
    params_cls: ClassVar[type | None] = None
    #: keys an input record (a JSON object from a .jsonl file) may carry the input under
    record_keys: ClassVar[tuple[str, ...]] = ("input", "text", "prompt")

    def __init__(
        self,
        task: str | None = None,
        model: str | os.PathLike | None = None,
        framework: str | None = "auto",
        device: str | None = "auto",
        dtype: str | None = "auto",
        batch_size: int = 1,
        *,
        adapter: str | None = None,
        tokenizer: str | None = None,
        trust_remote_code: bool = False,
        allow_pickle: bool = False,
        revision: str | None = None,
        hub: str | None = None,
        return_format: str = "transformers",
        **options: Any,
    ) -> None:
        self.task = task or type(self).task
        self.return_format = check_return_format(return_format)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise I_BAD_PARAM.error(f"batch_size={batch_size!r}: must be an integer >= 1", location="batch_size")
        self.batch_size = batch_size
        folder = self.check_model(model, allow_pickle=allow_pickle, tokenizer=tokenizer, revision=revision, hub=hub)
        self.model_dir = folder.path
        self.config = folder.config
        spec, reason = select("pipeline", self.task, framework or "auto")
        self._component = spec.component
        cls = spec.load()
        load_options = LoadOptions(
            task=self.task,
            device=device or "auto",
            dtype=dtype or "auto",
            adapter=adapter,
            tokenizer=str(tokenizer) if tokenizer else None,
            trust_remote_code=trust_remote_code,
            allow_pickle=allow_pickle,
        )
        with attributed(self._component):
            self.backend: Pipeline = cls.load(self.model_dir, load_options)
        info = self.backend.describe()
        logger.info(
            "%s pipeline: %s, %s on %s (%s)",
            self.task,
            reason,
            f"{spec.impl}",
            info["device"],
            info["dtype"],
        )
        self.selection = {"reason": reason, "impl": spec.impl, **info}
        self.defaults = self.configure(**options)

    # ---- openMind 1.0 / transformers attributes ------------------------------------------------
    @property
    def model(self) -> Any:
        """The loaded framework model (1.0 / transformers ``pipe.model``); ``None`` if the backend has none."""
        return getattr(self.backend, "model", None)

    @property
    def tokenizer(self) -> Any:
        """The loaded tokenizer (1.0 / transformers ``pipe.tokenizer``); ``None`` if the backend has none."""
        return getattr(self.backend, "tokenizer", None)

    # ---- subclass hooks ----------------------------------------------------------------------
    def check_model(
        self,
        model: str | os.PathLike | None,
        *,
        allow_pickle: bool = False,
        tokenizer: str | os.PathLike | None = None,
        revision: str | None = None,
        hub: str | None = None,
    ) -> ModelFolder:
        """Resolve and check the model folder (:func:`openmind.core.pipelines.model.resolve_model_dir`:
        transformers, diffusers, sentence-transformers and processor folders). A task or domain
        overrides this to require more (or accept other layouts)."""
        return resolve_model_dir(model, allow_pickle=allow_pickle, revision=revision, hub=hub)

    def configure(self, **options: Any) -> Any:
        """Take task-specific options; returns the default params of every call."""
        return self.make_params(None, options)

    def make_params(self, base: Any, values: dict[str, Any]) -> Any:
        """``base`` params updated with ``values`` (unknown names are OM-I102 with a suggestion)."""
        cls = self.params_cls
        if cls is None:
            if values:
                self._unknown(values, ())
            return None
        names = [f.name for f in fields(cls)]
        unknown = [k for k in values if k not in names]
        if unknown:
            self._unknown({k: values[k] for k in unknown}, names)
        merged = {n: getattr(base, n) for n in names} if base is not None else {}
        merged.update(values)  # an explicit None is a value here (e.g. top_k=None: every label)
        params = cls(**merged)
        params.check()
        return params

    def _unknown(self, values: dict[str, Any], allowed: Sequence[str]) -> None:
        first = next(iter(values))
        raise I_BAD_PARAM.error(
            f"unknown option(s) for task {self.task!r}: {', '.join(values)}.{suggest(first, allowed)}",
            location=first,
            hint=f"Options of {self.task!r}: {', '.join(allowed) or 'none'}.",
        )

    def check_item(self, item: Any, index: int | None) -> Any:
        """Validate one input; return it in the form the backend takes."""
        if not isinstance(item, str):
            where = f"input[{index}]" if index is not None else "input"
            raise I_BAD_INPUT.error(
                f"task {self.task!r} takes {self.accepts} or a list of them; got {type_name(item)} at {where}",
                location=where,
            )
        return item

    def split(self, inputs: Any) -> tuple[bool, list[Any]]:
        """``(single, items)``: one input or a list of inputs, each checked."""
        if isinstance(inputs, (list, tuple)):
            return False, [self.check_item(item, i) for i, item in enumerate(inputs)]
        return True, [self.check_item(inputs, None)]

    def postprocess(self, output: Any, item: Any) -> Any:
        return output

    def shape(self, outputs: list[Any], single: bool, params: dict[str, Any]) -> Any:
        """The value a call returns from its per-input outputs (openmind's items, in order):
        :meth:`transformers_shape` when :attr:`return_format` is ``"transformers"``, else the
        item of a single input / the list of items. ``params`` are the call's own keywords."""
        if self.return_format == "transformers":
            return self.transformers_shape(outputs, single, params)
        return outputs[0] if single else outputs

    def transformers_shape(self, outputs: list[Any], single: bool, params: dict[str, Any]) -> Any:
        """openMind 1.0's / transformers' return value of the task (a task overrides this where
        its openmind items differ from transformers' shapes)."""
        return outputs[0] if single else outputs

    def to_text(self, output: Any) -> str:
        """One output as a line of text (``openmind run`` without ``--json``)."""
        import json

        return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)

    def from_record(self, record: Any, where: str) -> Any:
        """An input from a JSON value of an input file (``openmind run --input file.jsonl``)."""
        if isinstance(record, dict):
            for key in self.record_keys:
                if key in record:
                    return record[key]
            raise I_BAD_INPUT_FILE.error(
                f"a row of task {self.task!r} needs one of the keys {', '.join(self.record_keys)}; "
                f"got {', '.join(record) or 'none'}",
                location=where,
            )
        return record

    # ---- calling -----------------------------------------------------------------------------
    def __call__(self, inputs: Any, *, batch_size: int | None = None, **params: Any) -> Any:
        single, items = self.split(inputs)
        call_params = self.make_params(self.defaults, params) if params else self.defaults
        with attributed(self._component):
            outputs = self.backend.run(items, call_params, batch_size or self.batch_size)
        outputs = [self.postprocess(o, item) for o, item in zip(outputs, items, strict=True)]
        return self.shape(outputs, single, params)

    def __repr__(self) -> str:
        info = self.selection
        return (
            f"<{type(self).__name__} task={self.task!r} model={self.model_dir!r} "
            f"framework={info['framework']} backend={info['backend']} device={info['device']} dtype={info['dtype']}>"
        )
