"""Error codes of `openmind eval` (``OM-E0xx``)."""

from __future__ import annotations

from openmind.core.errors import EvalError, define

E_UNKNOWN_TASK = define(
    "OM-E001",
    "Unknown evaluation task",
    "Pass a folder in the MMLU / C-Eval / CMMLU layout, a task YAML, a JSON/JSONL/CSV file, or (with "
    "--eval-backend lm-eval) an lm-eval task name; --task-dir sets where relative names are looked up.",
    EvalError,
)
E_BAD_ITEM = define(
    "OM-E002",
    "Invalid evaluation item",
    "Multiple-choice rows hold a question, options A-D (or more) and an answer letter; generation rows "
    "hold an input and a target. Fix the row named in the message.",
    EvalError,
)
E_BAD_TASK_FILE = define(
    "OM-E003",
    "Invalid evaluation task file",
    "A task YAML holds name, type (multiple_choice | generation), data (file or folder) and, for "
    "generation, metric (exact_match | regex | rouge) and regex where needed.",
    EvalError,
)
E_LM_EVAL_MISSING = define(
    "OM-E004",
    "lm-eval is not installed",
    'Install it: pip install "lm-eval>=0.4", or use --eval-backend native.',
    EvalError,
)
E_MODEL_CANNOT_SCORE = define(
    "OM-E005",
    "Model cannot be evaluated",
    "Multiple-choice evaluation needs a causal language model whose pipeline computes log-likelihoods "
    "(the chat / text-generation pipelines of openmind-pt and openmind-ms).",
    EvalError,
)
E_NO_ITEMS = define(
    "OM-E006",
    "Evaluation task has no items",
    "Check the split files (test/, val/, dev/) and --limit; a task needs at least one item.",
    EvalError,
)
