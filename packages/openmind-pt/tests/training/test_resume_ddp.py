"""Checkpoints and resume (SIGKILL mid-training, then --resume), and DDP across 2 gloo processes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from conftest import cli_env
from safetensors.torch import load_file

from openmind.nlp.testing.resume import kill_after_checkpoint, plant_partial_checkpoint, resume, train_command


def _cli(tiny_dir, sft_file, out, *extra: str) -> list[str]:
    return train_command(tiny_dir, sft_file, out, *extra)


def _final(out):
    summary = json.loads((out / "train_summary.json").read_text())
    return summary, load_file(out / "model.safetensors")


def _losses(out, step):
    history = json.loads((out / f"checkpoint-{step}" / "trainer_state.json").read_text())["log_history"]
    return [h["loss"] for h in history if "loss" in h]


@pytest.mark.slow
def test_sigkill_then_resume_is_exact(tiny_dir, sft_file, tmp_path):
    # 160 rows / 16 per step = 10 steps per epoch: the resumed part crosses an epoch boundary
    args = ["--max-steps", "14", "--per-device-train-batch-size", "16", "--save-steps", "4", "--seed", "7"]
    env = cli_env(tmp_path)
    ref = tmp_path / "ref"
    done = subprocess.run(_cli(tiny_dir, sft_file, ref, *args), env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    run = tmp_path / "run"
    kill_after_checkpoint(_cli(tiny_dir, sft_file, run, *args), env, run, step=4, timeout=600)
    partial = plant_partial_checkpoint(run, step=12)
    resume(_cli(tiny_dir, sft_file, run, *args), env, timeout=600)
    ref_summary, ref_weights = _final(ref)
    run_summary, run_weights = _final(run)
    assert run_summary["resumed_from"].endswith(("checkpoint-4", "checkpoint-8"))
    assert run_summary["global_step"] == ref_summary["global_step"] == 14
    assert run_summary["final_loss"] == pytest.approx(ref_summary["final_loss"], abs=1e-6)
    assert _losses(run, 14) == pytest.approx(_losses(ref, 14), abs=1e-6)
    for name, value in ref_weights.items():
        assert torch.allclose(run_weights[name], value, atol=1e-6, rtol=0), name
    assert partial.is_file()  # rewritten, complete this time


@pytest.mark.slow
def test_ddp_two_gloo_processes_match_one_process(tiny_dir, sft_file, tmp_path):
    env = cli_env(tmp_path)
    common = ["--max-steps", "6", "--save-steps", "6", "--seed", "3"]
    one = tmp_path / "one"
    done = subprocess.run(
        _cli(tiny_dir, sft_file, one, *common, "--per-device-train-batch-size", "8"),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    two = tmp_path / "two"
    done = subprocess.run(
        _cli(tiny_dir, sft_file, two, *common, "--per-device-train-batch-size", "4", "--nproc", "2"),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "launching 2 processes" in done.stderr and "torch.distributed.run" in done.stderr
    state = json.loads((two / "checkpoint-6" / "trainer_state.json").read_text())
    assert state["train_batch_size"] == 4
    assert (two / "checkpoint-6" / "rng_state_1.pth").is_file()  # a second rank really ran
    one_losses, two_losses = _losses(one, 6), _losses(two, 6)
    assert len(one_losses) == 6
    assert two_losses == pytest.approx(one_losses, abs=1e-5)
    a, b = load_file(one / "model.safetensors"), load_file(two / "model.safetensors")
    for name, value in a.items():
        assert torch.allclose(b[name], value, atol=1e-5), name
    summary = json.loads((two / "train_summary.json").read_text())
    assert summary["tokens"] == json.loads((one / "train_summary.json").read_text())["tokens"]


def test_process_group_destroyed_at_exit_while_interpreter_is_whole(tmp_path):
    # a torchrun worker that exits with its gloo group alive can die of SIGABRT in teardown
    # ("terminate called without an active exception"); openmind destroys the group in an atexit hook
    # and, as the group's threads live while the model holds it, asks the CLI to skip the teardown
    code = f"""
import atexit, sys
import torch.distributed as dist
from openmind.pt.training.distributed import end_process_group_at_exit
atexit.register(lambda: print("initialized at exit:", dist.is_initialized(), flush=True))  # runs last
dist.init_process_group("gloo", init_method="file://{tmp_path / "store"}", rank=0, world_size=1)
end_process_group_at_exit()
end_process_group_at_exit()  # registered once
assert dist.is_initialized()
held = dist.group.WORLD  # as FSDP's mesh and DDP's reducer hold it: its gloo threads outlive destroy
from openmind.core.exiting import exit_process, prompt_exit_reasons
print("trained", len(prompt_exit_reasons()), flush=True)
exit_process(0)  # how `python -m openmind.core.cli.main` ends: the atexit hooks, then os._exit
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == "trained 1 initialized at exit: False".split()
