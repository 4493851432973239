"""MindSpore checkpoints and resume: a run SIGKILLed mid-training and resumed with ``--resume true``
ends bit-for-bit where an uninterrupted run ends (same losses, same weights), and a checkpoint
left half-written by a kill is never picked. The PyTorch suite holds its trainer to the same test
(openmind-pt/tests/training/test_resume_ddp.py)."""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

from openmind.nlp.testing.resume import kill_after_checkpoint, plant_partial_checkpoint, resume, train_command
from openmind.nlp.testing.synthetic import reversal_rows, write_jsonl


def _cli(model, data, out, *extra: str) -> list[str]:
    return train_command(model, data, out, "--framework", "ms", *extra)


def _weights(out):
    from safetensors.numpy import load_file

    return load_file(str(out / "model.safetensors"))


def _losses(out):
    return [json.loads(line)["loss"] for line in (out / "train_log.jsonl").read_text().splitlines()]


def test_sigkill_then_resume_is_exact(tmp_path):
    from openmind.pt.testing import tiny_llama

    model = tiny_llama(tmp_path / "model", hidden_size=64, layers=2, heads=4, intermediate_size=256)
    # 64 rows / 8 per step = 8 steps per epoch: the resumed part crosses an epoch boundary
    data = write_jsonl(tmp_path / "data" / "sft.jsonl", reversal_rows(64, seed=1))
    args = ["--max-steps", "12", "--per-device-train-batch-size", "8", "--save-steps", "3", "--seed", "5"]
    env = dict(os.environ, OPENMIND_CACHE=str(tmp_path / "cache"), OMP_NUM_THREADS="1", GLOG_v="3")

    ref = tmp_path / "ref"
    done = subprocess.run(_cli(model, data, ref, *args), env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]

    run = tmp_path / "run"
    kill_after_checkpoint(_cli(model, data, run, *args), env, run, step=3)
    partial = plant_partial_checkpoint(run, step=9)
    resume(_cli(model, data, run, *args), env)
    summary = json.loads((run / "train_summary.json").read_text())
    reference = json.loads((ref / "train_summary.json").read_text())
    assert summary["resumed_from"].endswith(("checkpoint-3", "checkpoint-6"))
    assert summary["global_step"] == reference["global_step"] == 12
    assert _losses(run) == pytest.approx(_losses(ref), abs=1e-6)
    assert summary["final_loss"] == pytest.approx(reference["final_loss"], abs=1e-6)
    got, want = _weights(run), _weights(ref)
    assert set(got) == set(want)
    for name, value in want.items():
        assert np.abs(got[name].astype(np.float32) - value.astype(np.float32)).max() <= 1e-6, name
    assert partial.is_file()  # rewritten, complete this time
