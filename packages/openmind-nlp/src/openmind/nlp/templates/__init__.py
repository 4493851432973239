"""Prompt templates and model groups (framework neutral).

* :class:`Template` — the contract (:mod:`openmind.nlp.templates.base`): ``render``, ``segments``, ``encode``;
* native renderers per family (``llama``, ``chatml``, ``mistral``, ``glm``, ``gemma``, ``phi``,
  ``deepseek``, ``baichuan``) and :class:`JinjaTemplate` for a tokenizer's own ``chat_template``;
* :func:`match_model_group` — ``config.json`` to a registered model group;
* :func:`resolve_template` — ``--template`` / ``--model-group`` / model folder / tokenizer to a template.
"""

from openmind.nlp.templates.base import IGNORE_INDEX, Encoded, JinjaTemplate, Template
from openmind.nlp.templates.matching import match_model_dir, match_model_group, model_group
from openmind.nlp.templates.native import NativeTemplate
from openmind.nlp.templates.resolve import load_template, resolve_template

__all__ = [
    "IGNORE_INDEX",
    "Encoded",
    "JinjaTemplate",
    "NativeTemplate",
    "Template",
    "load_template",
    "match_model_dir",
    "match_model_group",
    "model_group",
    "resolve_template",
]
