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


def _train(framework: str, model, data, out, **extra):
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
    result = openmind.train(None, **args)
    steps = [e for e in result.history if "loss" in e]
    assert len(steps) == STEPS, result.history
    return result, steps


def _weights(folder):
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def test_full_dpo_equals_trl(tiny_dir, pref_file, tmp_path):
    _, pt = _train("pt", tiny_dir, pref_file, tmp_path / "pt", finetuning_type="full")
    ms, got = _train("ms", tiny_dir, pref_file, tmp_path / "ms", finetuning_type="full")
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


def test_lora_dpo_trains_the_adapter_against_the_base(tiny_dir, pref_file, tmp_path):
    """LoRA: the reference is the base model (the new adapter starts as the identity: loss log 2 at step 1),
    the margin rises and only the adapter is written. (The step-by-step curve differs from PyTorch's only
    by the adapter's random start: peft draws A with torch's generator.)"""
    import json

    _, got = _train("ms", tiny_dir, pref_file, tmp_path / "ms", finetuning_type="lora", learning_rate=1e-2)
    losses, margins = [e["loss"] for e in got], [e["rewards/margins"] for e in got]
    assert abs(losses[0] - np.log(2)) < 1e-5
    assert losses[-1] < losses[0] - 0.1
    assert all(b > a for a, b in zip(margins, margins[1:])), margins
    config = json.loads((tmp_path / "ms" / "adapter_config.json").read_text())
    assert config["peft_type"] == "LORA"
    assert not (tmp_path / "ms" / "model.safetensors").exists()


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
