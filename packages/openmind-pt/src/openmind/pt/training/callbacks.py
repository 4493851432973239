"""What openmind adds to transformers' Trainer loop: a progress bar with loss / lr / tokens per
second / ETA, the run summary (JSON) and the loss curve (PNG), a stop on non-finite losses."""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from openmind.core.training.layout import PLOT_FILE, SUMMARY_FILE


def peak_memory_mb(device: str) -> float | None:
    import torch

    if device.startswith("cuda") and torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**20
    if device.startswith("npu"):
        try:
            return torch.npu.max_memory_allocated() / 2**20  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - best effort
            return None
    try:
        import resource

        # ru_maxrss is KiB on Linux: the process' peak resident memory (CPU training)
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    except Exception:  # noqa: BLE001 - not on every platform
        return None


class ProgressBar(TrainerCallback):
    """tqdm bar over optimizer steps; postfix: loss, lr, effective tokens/s (ETA is tqdm's)."""

    def __init__(self, counter: Any) -> None:
        self.counter = counter
        self.bar = None
        self.start = 0.0
        self.tokens0 = 0
        self.fields: dict[str, str] = {}

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=state.max_steps, initial=state.global_step, desc="train", dynamic_ncols=True)
        self.start = time.perf_counter()
        self.tokens0 = self.counter.tokens

    def on_step_end(self, args, state, control, **kwargs):
        if self.bar is None:
            return
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        self.fields["tok/s"] = f"{(self.counter.tokens - self.tokens0) / elapsed:.0f}"
        self.bar.set_postfix(self.fields, refresh=False)
        self.bar.update(state.global_step - self.bar.n)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self.bar is None or not logs:
            return
        if "loss" in logs:
            self.fields["loss"] = f"{logs['loss']:.4f}"
        if "learning_rate" in logs:
            self.fields["lr"] = f"{logs['learning_rate']:.2e}"
        if "eval_loss" in logs:
            self.fields["eval_loss"] = f"{logs['eval_loss']:.4f}"
        self.bar.set_postfix(self.fields)

    def on_train_end(self, args, state, control, **kwargs):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class StopOnNonFinite(TrainerCallback):
    """Stop (and record why) when the logged training loss is NaN or infinite."""

    def __init__(self) -> None:
        self.bad_step: int | None = None

    def on_log(self, args, state, control, logs=None, **kwargs):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(loss):
            self.bad_step = state.global_step
            control.should_training_stop = True


def loss_curve(log_history: list[dict[str, Any]]) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    train = [(h["step"], h["loss"]) for h in log_history if "loss" in h and "step" in h]
    evals = [(h["step"], h["eval_loss"]) for h in log_history if "eval_loss" in h and "step" in h]
    return train, evals


def plot_loss(log_history: list[dict[str, Any]], path: str | os.PathLike, title: str = "") -> Path | None:
    """Write the training (and eval) loss curve as a PNG; None when there is nothing to plot."""
    train, evals = loss_curve(log_history)
    if not train and not evals:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        # an optional extra: the run is complete without its plot (never a crash after training)
        from openmind.core.logs import logger

        logger.warning(
            'plot_loss: matplotlib is not installed, no %s written (pip install "openmind-pt[plot]")', Path(path).name
        )
        return None

    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    if train:
        ax.plot([s for s, _ in train], [v for _, v in train], label="train loss")
    if evals:
        ax.plot([s for s, _ in evals], [v for _, v in evals], marker="o", label="eval loss")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title(title or "loss")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def write_summary(folder: str | os.PathLike, summary: dict[str, Any]) -> Path:
    path = Path(folder) / SUMMARY_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary, indent=2, sort_keys=True, default=str), encoding="utf-8")
    os.replace(tmp, path)
    return path


def plot_path(folder: str | os.PathLike) -> Path:
    return Path(folder) / PLOT_FILE
