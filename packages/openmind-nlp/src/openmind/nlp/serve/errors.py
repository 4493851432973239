"""Error codes of `openmind deploy` (``OM-S0xx``)."""

from __future__ import annotations

from openmind.core.errors import ServingError, define

S_BACKEND_MISSING = define(
    "OM-S001",
    "Serving backend not installed",
    "Install the backend named in the message on a machine with its accelerator (vllm: CUDA GPU; "
    "lmdeploy: CUDA GPU; mindie: Ascend NPU), or use --backend native.",
    ServingError,
)
S_BACKEND_START = define(
    "OM-S002",
    "Serving backend failed to start",
    "The backend process exited or did not answer its health check in time; read its log (path in the "
    "message), raise --request-timeout, or use --backend native.",
    ServingError,
)
S_BAD_ADAPTER = define(
    "OM-S003",
    "Invalid LoRA adapter",
    "Pass adapters as --lora-adapters name=FOLDER where FOLDER holds adapter_config.json and "
    "adapter_model.safetensors.",
    ServingError,
)
S_NOT_SERVABLE = define(
    "OM-S004",
    "Model cannot be served",
    "Serve a causal language model (chat / completions), a sentence encoder (embeddings) or a model of a task "
    "a registered route serves (a diffusers text-to-image folder with openmind-mm: /v1/images/generations); "
    "pass --model-group or --template when the chat template cannot be found.",
    ServingError,
)
S_BIND = define(
    "OM-S005",
    "Cannot bind the server address",
    "Pick a free port (--port) or stop the process using it; --host 0.0.0.0 exposes the server beyond "
    "this machine, use it only behind a firewall and with --api-key.",
    ServingError,
)
S_BAD_LIMIT = define(
    "OM-S006",
    "Invalid serving limit",
    "max_batch_size, max_queue, max_n, max_tokens_cap and max_prompt_tokens must be positive; "
    "batch_wait_ms and request_timeout must not be negative.",
    ServingError,
)
