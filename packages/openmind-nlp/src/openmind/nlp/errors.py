"""Error codes owned by openmind-nlp's inference side (pipelines, ``run``/``chat``).

``OM-I1xx``: pipeline input and generation; ``OM-M1xx``: model folders. Generic codes that core
already declares are reused, not redeclared: unknown task (OM-I001), no pipeline for a framework
(OM-I002), invalid input type (OM-I003), model not found (OM-M001), folder is not a model (OM-M002);
the codes of the generic pipeline contracts (OM-I101, OM-I102, OM-M102) moved to
:mod:`openmind.core.pipelines.errors` with their numbers and are re-exported here.
"""

from __future__ import annotations

from openmind.core.api import M_NOT_A_MODEL, M_NOT_FOUND
from openmind.core.errors import (
    I_BAD_INPUT,
    I_NO_PIPELINE,
    I_UNKNOWN_TASK,
    ModelError,
    PipelineError,
    define,
)
from openmind.core.pipelines.errors import I_BAD_INPUT_FILE, I_BAD_PARAM, M_PICKLE

__all__ = [
    "I_BAD_INPUT",
    "I_BAD_INPUT_FILE",
    "I_BAD_PARAM",
    "I_NO_PIPELINE",
    "I_PROMPT_TOO_LONG",
    "I_UNKNOWN_TASK",
    "M_ADAPTER",
    "M_LOAD",
    "M_NO_TOKENIZER",
    "M_NOT_A_MODEL",
    "M_NOT_FOUND",
    "M_PICKLE",
    "M_REMOTE_CODE",
    "M_WRONG_HEAD",
]

I_PROMPT_TOO_LONG = define(
    "OM-I103",
    "Prompt too long for the model",
    "Shorten the input or the history (/clear in `openmind chat`), or lower max_new_tokens.",
    PipelineError,
)
M_NO_TOKENIZER = define(
    "OM-M101",
    "Model folder has no tokenizer",
    "Copy the tokenizer files (tokenizer.json, tokenizer.model or vocab.txt, with tokenizer_config.json) of the "
    "base model into the folder.",
    ModelError,
)
M_ADAPTER = define(
    "OM-M103",
    "Adapter cannot be loaded",
    "An adapter folder holds adapter_config.json and adapter_model.safetensors (as saved by peft) for this base model.",
    ModelError,
)
M_LOAD = define(
    "OM-M104",
    "Model cannot be loaded",
    "The framework failed to load the folder; check that config.json and the weights belong together and that "
    "the installed transformers supports this architecture (`openmind env`).",
    ModelError,
)
M_REMOTE_CODE = define(
    "OM-M105",
    "Model needs its own code",
    "The model ships Python code (auto_map in config.json). Read it, then pass trust_remote_code=True "
    "(--trust-remote-code true) if you trust it.",
    ModelError,
)
M_WRONG_HEAD = define(
    "OM-M106",
    "Model does not fit the task",
    "The model's architecture has no head for this task; pick the task the model was trained for "
    "(`openmind run MODEL_DIR` infers it) or another model.",
    ModelError,
)
