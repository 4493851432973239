"""Error codes of the generic pipeline contracts (wrapper arguments, input files, model weights).

The codes keep the numbers users know from openmind-nlp, which re-exports them.
"""

from __future__ import annotations

from openmind.core.errors import ModelError, PipelineError, define

I_BAD_INPUT_FILE = define(
    "OM-I101",
    "Unreadable input file",
    "An input file is .txt (one input per line) or .jsonl (one JSON value per line: a string, a list of "
    'messages, or an object with "input", "text", "prompt" or "messages").',
    PipelineError,
)
I_BAD_PARAM = define(
    "OM-I102",
    "Invalid generation or pipeline parameter",
    "Check the value against `openmind run --help` (e.g. max_new_tokens > 0, temperature >= 0, 0 < top_p <= 1).",
    PipelineError,
)
M_PICKLE = define(
    "OM-M102",
    "Pickle weights refused",
    "The folder only has pickle weights (*.bin, *.pt), which can run code when loaded. Convert them to "
    "safetensors, or pass allow_pickle=True (--allow-pickle true) if you trust the source.",
    ModelError,
)
