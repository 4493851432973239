"""Error codes owned by openmind-pt's MindSpeed backend (``OM-PT0xx``). Imports no framework."""

from __future__ import annotations

from openmind.core.errors import DependencyError, ModelError, TrainingError, define

PT_MINDSPEED = define(
    "OM-PT001",
    "MindSpeed backend not usable here (needs Ascend)",
    "The MindSpeed backend needs Ascend NPUs with CANN, torch_npu, MindSpeed (`pip install -e MindSpeed`) and a "
    "MindSpeed-LLM checkout with Megatron-LM's `megatron/` copied in (--mindspeed-home PATH or MINDSPEED_LLM_HOME); "
    "elsewhere train with the default PyTorch backend (OPENMIND_DISABLE_PLUGINS=pt-mindspeed selects it).",
    DependencyError,
)
PT_UNMAPPED = define(
    "OM-PT002",
    "Training argument has no MindSpeed-LLM equivalent",
    "MindSpeed-LLM cannot do what this argument asks; drop or change the field named in the message "
    "(docs/mindspeed.md lists every mapping), or train with the default PyTorch backend "
    "(OPENMIND_DISABLE_PLUGINS=pt-mindspeed).",
    TrainingError,
)
PT_MODEL = define(
    "OM-PT003",
    "Model architecture not supported by the MindSpeed translation",
    "The MindSpeed backend translates dense Llama-family configs (llama, qwen2, qwen3); train other models with the "
    "default PyTorch backend (OPENMIND_DISABLE_PLUGINS=pt-mindspeed).",
    ModelError,
)
