"""openMind 1.0's ``openmind.trainers``: ``Trainer`` and ``TrainingArguments`` (transformers', as in
1.0); ``PreTrainer`` / ``PreTrainingArguments`` raise OM-C001 naming their 2.x replacement."""

from __future__ import annotations


def __getattr__(name: str):
    import openmind

    if name in ("Trainer", "TrainingArguments", "PreTrainer", "PreTrainingArguments"):
        return getattr(openmind, name)
    raise AttributeError(f"module 'openmind.trainers' has no attribute {name!r}")
