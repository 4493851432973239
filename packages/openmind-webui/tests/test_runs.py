"""Runs started from the CLI show up on the page; jobs run detached and stop on request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from openmind.webui import jobs as J
from openmind.webui import runs as R

pytestmark = pytest.mark.timeout(600)


def test_tail_keeps_the_last_state_of_a_progress_bar(tmp_path):
    log = tmp_path / "out.log"
    log.write_text(
        "start\ntrain:  10%|#   | 1/10 [00:01<00:09]\rtrain:  20%|##  | 2/10 [00:02<00:08]\n\x1b[1mdone\x1b[0m\n"
    )
    assert J.tail(log, 3) == "start\ntrain:  20%|##  | 2/10 [00:02<00:08]\ndone"


def test_a_run_started_from_the_cli_is_found_with_its_loss_curve(tmp_path, tiny_model, chat_data):
    root = tmp_path / "runs"
    run_dir = root / "team" / "cli-run"
    cmd = [
        str(Path(sys.executable).with_name("openmind")),
        "train",
        "--model", str(tiny_model),
        "--dataset", str(chat_data),
        "--output-dir", str(run_dir),
        "--max-steps", "6",
        "--logging-steps", "2",
        "--save-steps", "3",
        "--cutoff-len", "64",
    ]  # fmt: skip
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    subprocess.run(cmd, check=True, env=env, capture_output=True, timeout=500)
    found = R.discover(root)
    assert [r.path for r in found] == [run_dir.resolve()]
    run = found[0]
    assert run.status == "finished" and run.job is None
    summary = json.loads((run_dir / "train_summary.json").read_text())
    expected = [(h["step"], h["loss"]) for h in summary["history"] if "loss" in h]
    assert R.loss_points(run) == expected and len(expected) == 3
    # while it trained, the same points were in its TensorBoard events (what the live plot reads)
    live = R._tensorboard_scalars(run_dir, ("train/loss",))
    assert [step for step, _ in live] == [step for step, _ in expected]
    assert [loss for _, loss in live] == pytest.approx([loss for _, loss in expected], rel=1e-6)  # float32 there
    progress = R.progress(run, expected)
    assert (progress.step, progress.total) == (6, 6)


def test_a_job_runs_in_its_own_session_and_stops(tmp_path):
    job = J.start(tmp_path, "serve", ["deploy", "--model", str(tmp_path / "missing"), "--port", "1"])
    assert os.getsid(job.pid) == job.pid  # its own session: closing the page's terminal does not reach it
    assert J.jobs(tmp_path, "serve")[0].id == job.id
    deadline = time.time() + 120
    while job.alive() and time.time() < deadline:
        time.sleep(0.2)
    assert not job.alive()
    assert "OM-" in J.tail(job.log)  # the coded error of `openmind deploy` for a missing model


def test_stop_ends_a_running_job(tmp_path):
    job = J.start(tmp_path, "eval", ["webui", "--port", "0", "--output-root", str(tmp_path / "x")])
    time.sleep(1.0)
    assert job.alive()
    assert J.stop(job, timeout=30)
    assert not job.alive()
