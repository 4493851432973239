"""Data-parallel training on MindSpore through msrun (CPU, 2 processes): the loss curve of one
process on the whole global batch, token-weighted gradients summed by MindSpore's
``DistributedGradReducer``; only rank 0 writes the run folder; a run whose launcher, msrun, scheduler
and workers are SIGKILLed resumes under msrun; the export equals the trained weights."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from openmind.nlp.testing.resume import kill_after_checkpoint, train_command
from openmind.nlp.testing.synthetic import reversal_rows, write_jsonl

STEPS = 6


def _cli(model, data, out, *extra: str) -> list[str]:
    return train_command(
        model, data, out, "--framework", "ms", "--max-steps", str(STEPS), "--seed", "3", "--save-steps", "3", *extra
    )


def _weights(folder):
    from safetensors.numpy import load_file

    return {k: v.astype(np.float32) for k, v in load_file(str(folder / "model.safetensors")).items()}


def _losses(out):
    return [json.loads(line)["loss"] for line in (out / "train_log.jsonl").read_text().splitlines()]


def test_two_processes_equal_one_and_resume_after_sigkill(tmp_path, monkeypatch):
    from openmind.core.cli.main import main
    from openmind.pt.testing import tiny_llama

    model = tiny_llama(tmp_path / "model", hidden_size=64, layers=2, heads=4, intermediate_size=128)
    # 18 rows, a global batch of 4: the last batch of each epoch has 2 rows, all on rank 0 (rank 1
    # trains on none of them and still takes part in the AllReduce)
    data = write_jsonl(tmp_path / "data" / "sft.jsonl", reversal_rows(18, seed=2))
    started = time.perf_counter()
    env = dict(os.environ, OPENMIND_CACHE=str(tmp_path / "cache"), OMP_NUM_THREADS="1", GLOG_v="3")
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if p != os.path.dirname(sys.executable)
    )

    one = tmp_path / "one"
    monkeypatch.setenv("OPENMIND_CACHE", env["OPENMIND_CACHE"])
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    # the reference: one process, in this one (the same CLI code path, without another interpreter's start)
    assert main(_cli(model, data, one, "--per-device-train-batch-size", "4")[3:]) == 0
    print(f"1 process: {time.perf_counter() - started:.1f} s")

    two = tmp_path / "two"
    cmd = _cli(model, data, two, "--per-device-train-batch-size", "2", "--nproc", "2")
    # the launcher, msrun, its scheduler and both workers SIGKILLed once checkpoint-3 is complete
    started = time.perf_counter()
    kill_after_checkpoint(cmd, env, two, step=3, timeout=600, group=True)
    print(f"2 processes to checkpoint-3: {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    assert not (two / "train_summary.json").exists()
    resumed = subprocess.run([*cmd, "--resume", "true"], env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert "resuming from" in resumed.stdout  # rank 0's log, which msrun shows on the console
    print(f"2 processes resumed: {time.perf_counter() - started:.1f} s")
    assert "mindspore.parallel.cluster.run" in resumed.stderr  # launched through msrun

    summary = json.loads((two / "train_summary.json").read_text())
    assert summary["metrics"]["world_size"] == 2
    assert summary["resumed_from"].endswith("checkpoint-3")
    assert summary["global_step"] == STEPS
    reference = json.loads((one / "train_summary.json").read_text())
    assert summary["tokens"] == reference["tokens"]  # the same rows, summed over the ranks
    # the loss per step: the token mean over both ranks == one process on the whole batch
    assert _losses(two) == pytest.approx(_losses(one), abs=1e-4)
    assert len(_losses(two)) == STEPS
    got, want = _weights(two), _weights(one)
    assert set(got) == set(want)
    for name, value in want.items():
        assert np.abs(got[name] - value).max() <= 1e-4, name
    # msrun's logs: its scheduler and one per worker; rank 0 is the main process, rank 1 is not
    logs = two / "msrun_log"
    assert sorted(p.name for p in logs.iterdir()) == ["scheduler.log", "worker_0.log", "worker_1.log"]
    assert "training done" in (logs / "worker_0.log").read_text()
    assert "training done" not in (logs / "worker_1.log").read_text()
    assert sorted(p.name for p in two.glob("checkpoint-*")) == ["checkpoint-3", "checkpoint-6"]

    exported = tmp_path / "exported"
    assert main(["export", "--model", str(two), "--framework", "ms", "--out", str(exported)]) == 0
    for name, value in _weights(exported).items():
        assert np.array_equal(value, got[name]), name
    assert set(_weights(exported)) == set(got)
