"""Framework- and domain-neutral training contracts.

* :mod:`~openmind.core.training.layout`: the run folder (file names, checkpoint naming,
  :class:`TrainResult`, ``IGNORE_INDEX``);
* :mod:`~openmind.core.training.contract`: :class:`FrameworkTrainer` (the typed per-framework
  trainer), :class:`TrainPlan` (what the wrapper hands it), the LoRA alpha default;
* :mod:`~openmind.core.training.wrapper`: :class:`TrainerWrapper`, the base of every training stage;
* :mod:`~openmind.core.training.errors`: the ``OM-T0xx`` codes.

Imports no framework and no domain package.
"""

from __future__ import annotations

from openmind.core.training.contract import FrameworkTrainer, PreparedData, TrainPlan, default_lora_alpha
from openmind.core.training.layout import (
    ARGS_FILE,
    CHECKPOINT_MARKER,
    CHECKPOINT_PREFIX,
    IGNORE_INDEX,
    PLOT_FILE,
    SUMMARY_FILE,
    TrainResult,
    checkpoint_dir,
    checkpoint_step,
    default_output_dir,
    is_main_process,
    is_worker_process,
)
from openmind.core.training.wrapper import GROUPS, TrainerWrapper, training_stages

__all__ = [
    "ARGS_FILE",
    "CHECKPOINT_MARKER",
    "CHECKPOINT_PREFIX",
    "GROUPS",
    "IGNORE_INDEX",
    "PLOT_FILE",
    "SUMMARY_FILE",
    "FrameworkTrainer",
    "PreparedData",
    "TrainPlan",
    "TrainResult",
    "TrainerWrapper",
    "checkpoint_dir",
    "checkpoint_step",
    "default_lora_alpha",
    "default_output_dir",
    "is_main_process",
    "is_worker_process",
    "training_stages",
]
