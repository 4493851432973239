"""Error codes owned by openmind-ms (``OM-MS0xx``).

Where the contract of a shared wrapper names a code (no tokenizer OM-M101, pickle refused
OM-M102, wrong head OM-M106, LoRA target OM-T004, ...), openmind-ms raises that code; the codes
here are the MindSpore-specific failures.
"""

from __future__ import annotations

from openmind.core.errors import DependencyError, DeviceError, ModelError, define

MS_UNUSABLE = define(
    "OM-MS001",
    "MindSpore cannot be used in this environment",
    'MindSpore 2.x needs numpy<2 (pip install "numpy<2" mindspore); run `openmind env` to see what it reports.',
    DependencyError,
)
MS_CONFLICT = define(
    "OM-MS002",
    "MindSpore backend cannot share this process",
    "mindnlp replaces `torch` by mindtorch in the process it is imported in; run the MindSpore side in its own "
    "process (a separate `openmind` command or venv); openmind-ms's native backend itself needs no mindnlp.",
    DependencyError,
)
MS_UNSUPPORTED_MODEL = define(
    "OM-MS003",
    "Model architecture not supported by the MindSpore backend",
    "The native MindSpore backend runs the Llama family (llama, mistral, qwen2, qwen3, yi, ...) and BERT encoders; "
    "use framework='pt' for other architectures.",
    ModelError,
)
MS_CHECKPOINT = define(
    "OM-MS004",
    "Checkpoint does not match the model",
    "The safetensors files miss tensors the config requires, or a tensor has the wrong shape; check that "
    "config.json and the weights come from the same model.",
    ModelError,
)
MS_DEVICE = define(
    "OM-MS005",
    "Device not available to MindSpore",
    "Pass device='cpu', or install the MindSpore build for the device (Ascend: CANN + mindspore; GPU: CUDA build).",
    DeviceError,
)
MS_MINDFORMERS = define(
    "OM-MS006",
    "mindformers backend not usable here",
    "The mindformers backend needs Ascend NPUs with CANN and `pip install mindformers`; on CPU use the native "
    "backend (the default for framework='ms').",
    DependencyError,
)
MS_CONFIG = define(
    "OM-MS007",
    "Model config value not supported",
    "The native MindSpore backend does not implement this config option; use framework='pt' for this model.",
    ModelError,
)
MS_ADAPTER = define(
    "OM-MS008",
    "Adapter does not fit the model",
    "The adapter was trained on another base model; pass the base it was trained from.",
    ModelError,
)
