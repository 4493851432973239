"""DPO on the native MindSpore trainer against PyTorch's (trl's ``DPOTrainer``) on the same checkpoint and
preference rows: the loss per step equal within 1e-4, the same weights, and a chosen-rejected margin that
rises. As in ``test_parity.py``, every step takes the whole (tiny) set as one batch, so that the two
frameworks' different sampling orders do not matter.
"""

from __future__ import annotations

import numpy as np
import pytest

import openmind
from openmind.core.errors import OpenMindError
from openmind.core.plugins import reset
from openmind.nlp.testing.synthetic import preference_rows, write_jsonl

STEPS = 4
PAIRS = 8


@pytest.fixture(autouse=True)
def _fresh_plugins(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path / "cache"))
    reset()
    yield
    reset()


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    from openmind.pt.testing import tiny_llama

    return tiny_llama(
        tmp_path_factory.mktemp("tiny") / "model", hidden_size=64, layers=3, heads=4, intermediate_size=128
    )


@pytest.fixture(scope="module")
def pref_file(tmp_path_factory):
    return write_jsonl(tmp_path_factory.mktemp("data") / "pref.jsonl", preference_rows(PAIRS, seed=3))


def _args(framework: str, model, data, out, **extra):
    args = dict(
        model=str(model),
        dataset=[str(data)],
        framework=framework,
        stage="dpo",
        output_dir=str(out),
        max_steps=STEPS,
        per_device_train_batch_size=PAIRS,  # the whole set in every step
        learning_rate=2e-3,
        lr_scheduler_type="constant",
        warmup_ratio=0.0,
        weight_decay=0.01,
        max_grad_norm=1.0,
        logging_steps=1,
        save_steps=1000,
        seed=7,
        pref_beta=0.1,
        report_to=["none"],
        plot_loss=False,
    )
    args.update(extra)
    return args


def _train(framework: str, model, data, out, **extra):
    result = openmind.train(None, **_args(framework, model, data, out, **extra))
    steps = [e for e in result.history if "loss" in e]
    assert len(steps) == STEPS, result.history
    return result, steps


def _weights(folder):
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


@pytest.mark.parametrize(
    "extra",
    [{"finetuning_type": "full"}, {"finetuning_type": "freeze", "freeze_trainable_layers": 1}],
    ids=["full", "freeze"],
)
def test_dpo_equals_trl(extra, tiny_dir, pref_file, tmp_path):
    _, pt = _train("pt", tiny_dir, pref_file, tmp_path / "pt", **extra)
    ms, got = _train("ms", tiny_dir, pref_file, tmp_path / "ms", **extra)
    pt_losses, ms_losses = [e["loss"] for e in pt], [e["loss"] for e in got]
    assert np.abs(np.array(ms_losses) - np.array(pt_losses)).max() < 1e-4, (pt_losses, ms_losses)
    assert abs(ms_losses[0] - np.log(2)) < 1e-5  # the reference is the start weights
    assert ms_losses[-1] < ms_losses[0] - 0.1
    margins = [e["rewards/margins"] for e in got]
    assert np.abs(np.array(margins) - np.array([e["rewards/margins"] for e in pt])).max() < 1e-4
    assert all(b > a for a, b in zip(margins, margins[1:])), margins  # the margin rises every step
    want, have, base = _weights(tmp_path / "pt"), _weights(tmp_path / "ms"), _weights(tiny_dir)
    assert set(have) == set(want)
    for name in want:
        assert np.abs(have[name] - want[name]).max() < 1e-4, name
    assert any(not np.array_equal(have[n], base[n]) for n in base)
    assert ms.tokens == sum(e["tokens"] for e in got[:1]) * STEPS  # chosen + rejected tokens of every pair


def test_lora_dpo_trains_the_adapter_against_the_start_weights(tiny_dir, pref_file, tmp_path):
    """LoRA: the reference is the start weights (trl's "adapter disabled": the new adapter starts as the
    identity, so step 1 scores log 2), the margin rises and only the adapter is written. The curve is not
    compared with PyTorch's step by step: peft draws the new adapter's A with torch's generator, the native
    LoRA with numpy's, so the two runs start from different adapters (the DPO loss itself is compared by
    the full and freeze tests above)."""
    import json

    _, got = _train("ms", tiny_dir, pref_file, tmp_path / "ms", finetuning_type="lora", learning_rate=1e-2)
    losses, margins = [e["loss"] for e in got], [e["rewards/margins"] for e in got]
    assert abs(losses[0] - np.log(2)) < 1e-5
    assert losses[-1] < losses[0] - 0.1
    assert all(b > a for a, b in zip(margins, margins[1:])), margins
    assert [e["rewards/accuracies"] for e in got][-1] == 1.0
    config = json.loads((tmp_path / "ms" / "adapter_config.json").read_text())
    assert config["peft_type"] == "LORA"
    assert not (tmp_path / "ms" / "model.safetensors").exists()


def test_dpo_resume_is_exact_and_evaluates(tiny_dir, pref_file, tmp_path):
    """A run resumed from its step-2 checkpoint ends where the uninterrupted run ends (the reference
    log-probs come from the start weights again, not from the checkpoint); the held-out pairs get the DPO loss."""
    common = dict(finetuning_type="lora", learning_rate=1e-2, val_size=2, per_device_train_batch_size=6)
    whole, steps = _train("ms", tiny_dir, pref_file, tmp_path / "a", **common)
    out = tmp_path / "b"
    openmind.train(None, **_args("ms", tiny_dir, pref_file, out, **common, max_steps=2))
    resumed = openmind.train(None, **_args("ms", tiny_dir, pref_file, out, **common, resume=True))
    assert resumed.resumed_from and resumed.resumed_from.endswith("checkpoint-2")
    want = [e["loss"] for e in steps]
    got = [e["loss"] for e in resumed.history if "loss" in e]
    assert np.abs(np.array(got) - np.array(want)).max() < 1e-5, (want, got)
    assert whole.eval_loss is not None and abs(resumed.eval_loss - whole.eval_loss) < 1e-5
    assert whole.eval_loss < np.log(2)  # the held-out pairs moved the same way


@pytest.mark.parametrize(
    ("extra", "field", "code"),
    [
        ({"pref_loss": "ipo"}, "pref_loss", "OM-T008"),
        ({"pref_loss": "hinge"}, "pref_loss", "OM-T008"),
        ({"packing": True}, "packing", "OM-T008"),
        ({"nproc": 2}, "nproc", "OM-T014"),
    ],
)
def test_what_native_dpo_does_not_do_is_a_coded_error(extra, field, code, tiny_dir, pref_file, tmp_path):
    with pytest.raises(OpenMindError) as info:
        openmind.train(
            None,
            framework="ms",
            model=str(tiny_dir),
            dataset=[str(pref_file)],
            stage="dpo",
            output_dir=str(tmp_path / "out"),
            **extra,
        )
    assert info.value.code == code, info.value
    assert field in str(info.value), info.value
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_cli_refuses_msrun_for_dpo_before_launching(tiny_dir, pref_file, tmp_path):
    """``openmind train --stage dpo --nproc 2 --framework ms``: OM-T014 at ``nproc`` before msrun starts."""
    import os
    import subprocess

    from openmind.nlp.testing.resume import train_command

    out = tmp_path / "out"
    cmd = train_command(tiny_dir, pref_file, out, "--framework", "ms", "--stage", "dpo", "--nproc", "2")
    env = dict(os.environ, OPENMIND_CACHE=str(tmp_path / "cache"))
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "OM-T014" in done.stderr and "at: nproc" in done.stderr, done.stderr[-2000:]
    assert not (out / "msrun_log").exists()
