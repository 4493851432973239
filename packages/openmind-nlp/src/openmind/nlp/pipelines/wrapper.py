"""openmind-nlp's pipeline-wrapper base: the generic :class:`openmind.core.pipelines.wrapper.PipelineWrapper`
plus NLP's model-folder requirement (a tokenizer, OM-M101)."""

from __future__ import annotations

import os

from openmind.core.pipelines.model import ModelFolder
from openmind.core.pipelines.wrapper import PipelineWrapper as BasePipelineWrapper
from openmind.core.pipelines.wrapper import type_name
from openmind.nlp.pipelines.model import resolve_model_dir

__all__ = ["BasePipelineWrapper", "PipelineWrapper", "type_name"]


class PipelineWrapper(BasePipelineWrapper):
    __doc__ = BasePipelineWrapper.__doc__

    def check_model(
        self,
        model: str | os.PathLike | None,
        *,
        allow_pickle: bool = False,
        tokenizer: str | os.PathLike | None = None,
        revision: str | None = None,
        hub: str | None = None,
    ) -> ModelFolder:
        """The generic check, plus a tokenizer (in the folder or given as ``tokenizer``)."""
        return resolve_model_dir(model, allow_pickle=allow_pickle, tokenizer=tokenizer, revision=revision, hub=hub)
