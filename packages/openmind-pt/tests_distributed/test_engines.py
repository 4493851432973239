"""FSDP2 and DeepSpeed ZeRO-2 on 2 gloo processes give the 1-process loss curve (10 steps, 1e-4) and
weights; a run of either engine SIGKILLed after a checkpoint and resumed ends exactly where the
uninterrupted run ends; the consolidated safetensors are what `openmind export` writes; a 2-"node"
torchrun run (two agents, nnodes=2) equals the 1-node 2-process run; impossible combinations fail
before any step."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time

import pytest
import torch
from safetensors.torch import load_file

from openmind.nlp.testing.resume import kill_after_checkpoint, plant_partial_checkpoint, resume, train_command

STEPS = ["--max-steps", "10", "--save-steps", "10", "--seed", "3"]
#: the engines' runs: 2 processes of 4 rows each (the 1-process reference takes 8 per step)
ENGINES = {
    "fsdp": ["--per-device-train-batch-size", "4", "--nproc", "2", "--fsdp", "full_shard"],
    "z2": ["--per-device-train-batch-size", "4", "--nproc", "2", "--deepspeed", "z2"],
}
needs_deepspeed = pytest.mark.skipif(importlib.util.find_spec("deepspeed") is None, reason="deepspeed is not installed")


def _run(cmd, env, timeout=600):
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-4000:]
    return done, time.perf_counter() - start


def _losses(out):
    history = json.loads((out / "checkpoint-10" / "trainer_state.json").read_text())["log_history"]
    return [h["loss"] for h in history if "loss" in h]


def _same_weights(a, b, atol=1e-5):
    wa, wb = load_file(a / "model.safetensors"), load_file(b / "model.safetensors")
    assert set(wa) == set(wb)
    for name, value in wa.items():
        assert torch.allclose(wb[name], value, atol=atol, rtol=0), name


@pytest.fixture(scope="module")
def one_process(tiny_dir, sft_file, work, env):
    out = work / "one"
    _run(train_command(tiny_dir, sft_file, out, *STEPS, "--per-device-train-batch-size", "8"), env)
    return out


@pytest.fixture(scope="module")
def engine_runs(tiny_dir, sft_file, work, env):
    """The uninterrupted 10-step run of each engine, made once (the equality and resume tests share it)."""
    runs: dict[str, tuple] = {}

    def get(engine: str):
        if engine not in runs:
            out = work / engine
            done, _ = _run(train_command(tiny_dir, sft_file, out, *STEPS, *ENGINES[engine]), env)
            runs[engine] = (out, done)
        return runs[engine]

    return get


def test_fsdp_full_shard_equals_one_process_and_exports_what_it_trained(
    tiny_dir, sft_file, work, env, one_process, engine_runs, tmp_path
):
    out, done = engine_runs("fsdp")
    assert "launching 2 processes" in done.stderr
    args = json.loads(json.dumps(torch.load(out / "training_args.bin", weights_only=False).to_dict()))
    assert args["fsdp_config"]["version"] == 2 and args["fsdp_config"]["reshard_after_forward"] is True
    assert (out / "checkpoint-10" / "rng_state_1.pth").is_file()  # a second rank really ran
    assert _losses(out) == pytest.approx(_losses(one_process), abs=1e-4)
    assert len(_losses(out)) == 10
    _same_weights(one_process, out)
    # the consolidated safetensors are a model folder: export reads it back unchanged
    exported = tmp_path / "exported"
    subprocess.run(
        [sys.executable, "-m", "openmind.core.cli.main", "export", "--model", str(out), "--out", str(exported)],
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    shards = sorted(exported.glob("*.safetensors"))
    trained = load_file(out / "model.safetensors")
    merged = {k: v for s in shards for k, v in load_file(s).items()}
    assert set(merged) == set(trained)
    for name, value in trained.items():
        assert torch.equal(merged[name], value), name


@needs_deepspeed
def test_deepspeed_zero2_equals_one_process(one_process, engine_runs):
    out, _ = engine_runs("z2")
    assert (out / "checkpoint-10" / "global_step10").is_dir()  # DeepSpeed's own (ZeRO-partitioned) checkpoint
    assert _losses(out) == pytest.approx(_losses(one_process), abs=1e-4)
    _same_weights(one_process, out)


@pytest.mark.parametrize("engine", ["fsdp", pytest.param("z2", marks=needs_deepspeed)])
def test_sigkill_then_resume_is_exact(engine, tiny_dir, sft_file, work, env, engine_runs):
    """Killed once checkpoint-4 is complete (a half-written checkpoint-8 planted), resumed with
    --resume true: the same losses, weights and final checkpoint as the uninterrupted run."""
    ref, _ = engine_runs(engine)
    run = work / f"{engine}-killed"
    cmd = train_command(
        tiny_dir, sft_file, run, "--max-steps", "10", "--save-steps", "4", "--seed", "3", *ENGINES[engine]
    )
    kill_after_checkpoint(cmd, env, run, step=4, timeout=600, group=True)  # launcher and workers
    partial = plant_partial_checkpoint(run, step=8)
    done = resume(cmd, env, timeout=600)
    summary = json.loads((run / "train_summary.json").read_text())
    assert summary["resumed_from"].endswith("checkpoint-4"), done.stderr[-2000:]
    assert summary["global_step"] == 10
    assert _losses(run) == pytest.approx(_losses(ref), abs=1e-6)
    assert len(_losses(run)) == 10  # the log of the killed part is carried over
    _same_weights(ref, run, atol=1e-6)
    assert partial.is_file()  # rewritten, complete this time


def test_killing_the_launcher_stops_the_workers(tiny_dir, sft_file, work, env):
    """SIGKILL of `openmind train --nproc 2` alone (not its process tree): torchrun, told by the kernel
    that its parent died, stops both workers; nothing goes on training into the run folder."""
    import signal

    from openmind.core.training.layout import CHECKPOINT_MARKER
    from openmind.nlp.testing.resume import descendants, is_alive

    run = work / "orphans"
    cmd = train_command(
        tiny_dir, sft_file, run, "--max-steps", "400", "--save-steps", "2", "--seed", "3", *ENGINES["fsdp"][:4]
    )
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 600
    while not (run / "checkpoint-2" / CHECKPOINT_MARKER).exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    job = descendants(proc.pid)
    assert len(job) >= 3, job  # torchrun and its 2 workers
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    deadline = time.time() + 90
    while any(is_alive(pid) for pid in job) and time.time() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in job if is_alive(pid)]
    assert not (run / "train_summary.json").exists()


def test_two_nodes_equal_one_node_two_processes(tiny_dir, sft_file, work, env):
    from openmind.pt.training.launch import free_port

    one_node = work / "one-node"
    common = [*STEPS[:2], "--save-steps", "6", "--max-steps", "6", "--seed", "3", "--per-device-train-batch-size", "4"]
    _run(train_command(tiny_dir, sft_file, one_node, *common, "--nproc", "2"), env)
    two_nodes = work / "two-nodes"
    port = str(free_port())
    agents = [
        subprocess.Popen(
            train_command(
                tiny_dir,
                sft_file,
                two_nodes,
                *common,
                "--nnodes",
                "2",
                "--node-rank",
                str(rank),
                "--master-addr",
                "127.0.0.1",
                "--master-port",
                port,
            ),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in (0, 1)
    ]
    errors = [a.communicate(timeout=600)[1] for a in agents]
    assert [a.returncode for a in agents] == [0, 0], errors[0][-3000:] + errors[1][-3000:]
    assert "launching 1 processes on node 1 of 2" in errors[1]
    state = json.loads((two_nodes / "checkpoint-6" / "trainer_state.json").read_text())
    ref = json.loads((one_node / "checkpoint-6" / "trainer_state.json").read_text())
    losses = [h["loss"] for h in state["log_history"] if "loss" in h]
    assert losses == pytest.approx([h["loss"] for h in ref["log_history"] if "loss" in h], abs=1e-6)
    assert (two_nodes / "checkpoint-6" / "rng_state_1.pth").is_file()
    _same_weights(one_node, two_nodes, atol=1e-6)


@pytest.mark.parametrize(
    ("extra", "code", "words"),
    [
        ({"deepspeed": "z3", "finetuning_type": "qlora", "quantization_bit": 4}, "OM-T014", "ZeRO-3"),
        ({"fsdp": "full_shard", "finetuning_type": "qlora", "quantization_bit": 4}, "OM-T014", "FSDP"),
        ({"fsdp": "full_shard", "deepspeed": "z2"}, "OM-T014", "one of them"),
        ({"fsdp": "half_shard"}, "OM-T008", "preset"),
        ({"deepspeed": "z9"}, "OM-T008", "preset"),
    ],
)
def test_impossible_combinations_fail_before_any_step(tiny_dir, sft_file, work, extra, code, words, monkeypatch):
    import openmind
    from openmind.core.errors import OpenMindError

    monkeypatch.setenv("OPENMIND_CACHE", str(work / "cache"))
    with pytest.raises(OpenMindError) as info:
        openmind.train(
            None,
            model=str(tiny_dir),
            dataset=[str(sft_file)],
            output_dir=str(work / f"bad-{code}-{len(extra)}"),
            overwrite_output_dir=True,
            report_to=["none"],
            **extra,
        )
    assert info.value.code == code and words in info.value.message, info.value.message
