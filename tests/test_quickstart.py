"""The README's quickstart wiring, on a short run (the full run learns to 100%; see README)."""

import json
import os
import subprocess
import sys
from pathlib import Path


def test_quickstart_short_run(tmp_path):
    exe = Path(sys.executable).with_name("openmind")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENMIND_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    out = subprocess.run(
        [
            str(exe),
            "quickstart",
            "--output-dir",
            str(tmp_path / "qs"),
            "--steps",
            "12",
            "--train-rows",
            "64",
            "--min-accuracy",
            "0",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    for n in range(1, 7):
        assert f"[{n}/6]" in out.stdout
    assert "exact match: before 0% -> after" in out.stdout
    run = tmp_path / "qs" / "run"
    summary = json.loads((run / "train_summary.json").read_text())
    assert summary["global_step"] == 12 and summary["final_loss"] < 10.4
    assert (run / "loss.png").read_bytes()[:4] == b"\x89PNG"
    assert "/v1  user: Reverse" in out.stdout  # served and answered through the openai client
