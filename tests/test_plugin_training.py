"""The out-of-tree test plugin extends data and training through the public contracts only: its
dataset format ``poems`` (with a converter) is used by ``openmind data validate`` and by training,
and its training stage ``poem-sft`` is a ``--stage`` choice that ``openmind train`` runs for a few
steps on openmind-pt's SFT trainer (reused through the FrameworkTrainer contract)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

POEMS = [{"topic": f"the number {i}", "poem": f"{i} is a fine number, {i} plus one is {i + 1}."} for i in range(24)]


def openmind(*args, env=None, timeout=600):
    e = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "openmind.core.cli.main", *args],
        capture_output=True,
        text=True,
        env=e,
        cwd=ROOT,
        timeout=timeout,
    )


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_plugin_dataset_format_is_used_by_data_validate(tmp_path):
    good = write_jsonl(tmp_path / "poems.jsonl", POEMS[:3])
    for extra in ([], ["--formatting", "poems"]):  # recognised by its columns, or named
        done = openmind("data", "validate", str(good), "--json", *extra)
        assert done.returncode == 0, done.stderr[-2000:]
        report = json.loads(done.stdout)
        assert (report["read"], report["rejected"]) == (3, 0)
    converted = tmp_path / "std.jsonl"
    done = openmind("data", "convert", str(good), "--formatting", "poems", "--out", str(converted))
    assert done.returncode == 0, done.stderr[-2000:]
    first = json.loads(converted.read_text().splitlines()[0])
    assert first["messages"] == [
        {"role": "user", "content": "Write a poem about the number 0."},
        {"role": "assistant", "content": POEMS[0]["poem"]},
    ]
    bad = write_jsonl(tmp_path / "bad.jsonl", [POEMS[0], {"topic": "rain", "poem": ""}])
    done = openmind("data", "validate", str(bad), "--formatting", "poems")
    assert done.returncode == 1
    assert f"{bad}:2 field 'poem': must be a non-empty string (poems converter)" in done.stdout
    listed = openmind("list", "formats").stdout
    assert "poems" in listed and "openmind-testplugin" in listed and "alpaca" in listed
    choices = openmind("data", "validate", "--help").stdout
    assert "poems" in choices


def test_plugin_training_stage_runs_through_openmind_train(tmp_path):
    pytest.importorskip("torch")
    from openmind.pt.testing import tiny_llama

    model = tiny_llama(tmp_path / "model", hidden_size=32, layers=1, heads=2)
    data = write_jsonl(tmp_path / "poems.jsonl", POEMS)
    assert "poem-sft" in openmind("train", "--help").stdout  # a stage choice, from the registry
    out = tmp_path / "run"
    done = openmind(
        "train",
        "--stage",
        "poem-sft",
        "--model",
        str(model),
        "--dataset",
        str(data),
        "--finetuning-type",
        "full",
        "--max-steps",
        "3",
        "--per-device-train-batch-size",
        "4",
        "--logging-steps",
        "1",
        "--save-steps",
        "3",
        "--report-to",
        "none",
        "--plot-loss",
        "false",
        "--output-dir",
        str(out),
        env={"OPENMIND_CACHE": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["stage"] == "poem-sft" and summary["global_step"] == 3
    assert summary["metrics"]["data"]["kept"] == len(POEMS)
    assert (out / "checkpoint-3" / "openmind_checkpoint.json").is_file() and (out / "model.safetensors").is_file()
    args = (out / "openmind_args.yaml").read_text()
    assert "stage: poem-sft" in args


def test_registered_training_task_without_trainer_is_an_honest_coded_error(tmp_path):
    """mm-sft is registered by openmind-mm's task plugin and trained through its ``mm-training``
    plugin: with that plugin disabled, OM-T012 names what is missing (before anything is read), and
    the support matrix shows its trainer wrapper as MISSING."""
    off = {"OPENMIND_DISABLE_PLUGINS": "mm-training"}
    done = openmind("train", "--stage", "mm-sft", "--model", "m", "--dataset", "d.jsonl", env=off)
    assert done.returncode != 0
    assert "OM-T012" in done.stderr and "no trainer wrapper (TrainerWrapperSpec(task='mm-sft'))" in done.stderr
    assert "framework trainer" in done.stderr  # the hint names the other half
    row = [line for line in openmind("list", "tasks", env=off).stdout.splitlines() if line.startswith("mm-sft ")][0]
    assert "MISSING" in row
    row = [line for line in openmind("list", "tasks").stdout.splitlines() if line.startswith("mm-sft ")][0]
    assert "MISSING" not in row  # with it: trainable
