"""The run folder: one home for every name a training run writes (and the train result).

A run folder (``args.training.output_dir``) is the hand-over point between ``openmind train`` and
``chat`` / ``eval`` / ``deploy`` / ``export``; every framework's trainer writes the same layout::

    RUN/
      openmind_args.yaml            ARGS_FILE: the resolved arguments (written before step 1)
      config.json, *.safetensors    the full model (full/freeze) ...
      adapter_config.json, ...      ... or the LoRA adapter (lora/qlora), + tokenizer + template
      checkpoint-N/                 checkpoint_dir(N); complete once CHECKPOINT_MARKER is in it
      train_summary.json            SUMMARY_FILE: TrainResult.to_dict()
      loss.png                      PLOT_FILE (when plot_loss)
      runs/                         TensorBoard logs

Framework neutral: no torch, no MindSpore, no domain package is imported here.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from openmind.core.args import ARGS_FILE

__all__ = [
    "ARGS_FILE",
    "CHECKPOINT_MARKER",
    "CHECKPOINT_PREFIX",
    "IGNORE_INDEX",
    "PLOT_FILE",
    "SUMMARY_FILE",
    "TrainResult",
    "checkpoint_dir",
    "checkpoint_step",
    "default_output_dir",
    "is_main_process",
    "is_worker_process",
]

#: written at the end of a run, in the run folder
SUMMARY_FILE = "train_summary.json"
#: the loss curve, in the run folder
PLOT_FILE = "loss.png"
#: marks a checkpoint folder as complete (written last, atomically)
CHECKPOINT_MARKER = "openmind_checkpoint.json"
#: checkpoint folders are ``checkpoint-<global step>`` (transformers' own naming, kept on every framework)
CHECKPOINT_PREFIX = "checkpoint-"
#: the label of a token that carries no loss (prompt, padding); the value torch's and MindSpore's
#: cross-entropy ignore by default
IGNORE_INDEX = -100

_CHECKPOINT_RE = re.compile(rf"^{re.escape(CHECKPOINT_PREFIX)}(\d+)$")


def checkpoint_dir(run_dir: str | os.PathLike, step: int) -> Path:
    """``RUN/checkpoint-<step>``."""
    return Path(run_dir) / f"{CHECKPOINT_PREFIX}{int(step)}"


def checkpoint_step(path: str | os.PathLike) -> int | None:
    """The step of a ``checkpoint-<step>`` folder name; None for any other name."""
    found = _CHECKPOINT_RE.match(Path(path).name)
    return int(found.group(1)) if found else None


@dataclass
class TrainResult:
    """What a training run returns (also written to ``SUMMARY_FILE``)."""

    output_dir: str
    stage: str
    finetuning_type: str
    global_step: int = 0
    train_loss: float | None = None
    final_loss: float | None = None
    eval_loss: float | None = None
    tokens: int = 0
    seconds: float = 0.0
    tokens_per_second: float = 0.0
    peak_memory_mb: float | None = None
    resumed_from: str | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    #: what the trainer logged, step by step (loss, learning rate, eval loss, stage metrics)
    history: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def default_output_dir(stage: str) -> str:
    return os.path.join("runs", f"{stage}-{time.strftime('%Y%m%d-%H%M%S')}")


def is_worker_process() -> bool:
    """True inside a process started by a distributed launcher (torchrun, msrun...)."""
    return "LOCAL_RANK" in os.environ or "RANK_ID" in os.environ


def is_main_process() -> bool:
    """True outside a distributed job and in its global rank 0 (never in msrun's scheduler process,
    which runs the same command with ``RANK_ID=0`` and only serves the cluster)."""
    if os.environ.get("MS_ROLE") == "MS_SCHED":
        return False
    return os.environ.get("RANK", os.environ.get("RANK_ID", "0")) in ("0", "")
