"""Error codes of training and export (``OM-T0xx``), shared by every framework's trainers and
every domain's training stages (declared in openmind-core: the trainer wrapper base raises them).

They are raised before the first training step wherever the problem can be seen up front
(arguments, data, template, model, device), so a bad run fails in seconds, not after hours.
"""

from __future__ import annotations

from openmind.core.errors import TrainingError, define

T_NO_DATASET = define(
    "OM-T001",
    "No training dataset",
    "Pass --dataset FILE_OR_NAME (or `dataset:` in the YAML file); `openmind data` checks a dataset on its own.",
    TrainingError,
)
T_TEMPLATE_MISMATCH = define(
    "OM-T002",
    "Template does not match the tokenizer",
    "The template's special tokens are not single tokens of this tokenizer, so the model would be trained on "
    "a format it cannot produce; pass the model's own template (--template NAME, or omit it to use the "
    "model group's / the tokenizer's chat_template).",
    TrainingError,
)
T_CUTOFF = define(
    "OM-T003",
    "cutoff_len shorter than the prompt",
    "Raise --cutoff-len above the longest prompt, shorten the prompts, or pass --truncation drop to leave "
    "such samples out (counted in the report).",
    TrainingError,
)
T_LORA_TARGET = define(
    "OM-T004",
    "LoRA target not in the model",
    "Name modules the model has (the message lists its linear layers), or omit --lora-target to use the "
    "model group's default (all linear layers when the group has none).",
    TrainingError,
)
T_QLORA = define(
    "OM-T005",
    "QLoRA needs CUDA and bitsandbytes",
    "Run on a CUDA device with `pip install bitsandbytes`, or use --finetuning-type lora (no quantisation).",
    TrainingError,
)
T_OUTPUT_EXISTS = define(
    "OM-T006",
    "Output folder is not empty",
    "Pass --resume to continue the run in it, --overwrite-output-dir to start over in it, or another --output-dir.",
    TrainingError,
)
T_NO_CHECKPOINT = define(
    "OM-T007",
    "Nothing to resume from",
    "--resume continues from the latest complete checkpoint-N/ in --output-dir; none was found there "
    "(incomplete ones, e.g. from a kill during saving, are ignored). Drop --resume to start afresh.",
    TrainingError,
)
T_BAD_SETUP = define(
    "OM-T008",
    "Invalid training setup",
    "Check the combination of stage, finetuning type and training arguments named in the message.",
    TrainingError,
)
T_LAUNCH = define(
    "OM-T009",
    "Distributed launch failed",
    "Check that torchrun (PyTorch) is installed and that --nproc does not exceed the devices/cores available; "
    "the log of the failing process is printed above.",
    TrainingError,
)
T_EXPORT = define(
    "OM-T010",
    "Cannot export",
    "--model is the base model folder, --adapter a LoRA adapter or training run folder trained on that base, "
    "--out an empty or new folder.",
    TrainingError,
)
T_NOT_FINITE = define(
    "OM-T011",
    "Loss is not finite",
    "Lower --learning-rate, enable gradient clipping (--max-grad-norm 1.0) or use --mixed-precision bf16/no.",
    TrainingError,
)
T_NOT_TRAINABLE = define(
    "OM-T012",
    "Training task has no trainer",
    "The task is registered but nothing can train it yet: the message names what is missing (a trainer wrapper "
    "for the task, or a framework trainer). `openmind list trainers` shows what each framework trains; pick one "
    "of those stages, or install the package that adds the missing trainer.",
    TrainingError,
)
T_REWARD = define(
    "OM-T013",
    "Unknown or unusable reward function",
    "--reward-funcs takes registered rewards (`openmind list rewards`: exact_match, regex:PATTERN, length:N ...) "
    "or an importable module:function with trl's signature reward(prompts, completions, **columns) -> list[float].",
    TrainingError,
)
T_DISTRIBUTED = define(
    "OM-T014",
    "Distributed setup cannot work",
    "The message names the combination (engine, stage, finetuning type, framework, device) that cannot run; "
    "docs/distributed.md lists what each engine supports.",
    TrainingError,
)
