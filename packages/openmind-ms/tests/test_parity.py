"""The MindSpore trainer against the PyTorch trainer on the same checkpoint and data: ``freeze`` and
``--packing`` runs give the same loss curve within 1e-4 over 5 steps, and the same weights.

Each step takes the whole (tiny) training set as one batch: the frameworks draw batches in their
own random order (PyTorch's sampler vs a numpy permutation), so whole-set batches are what makes
the two curves comparable step by step; everything else -- masking, packing boundaries, rotary
positions, the loss, clipping, AdamW -- must then agree to float precision.
"""

from __future__ import annotations

import numpy as np
import pytest

import openmind
from openmind.core.plugins import reset
from openmind.nlp.testing.synthetic import reversal_rows, write_jsonl

STEPS = 5


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
def sft_file(tmp_path_factory):
    # reversal rows of 3..12 digits: samples of different lengths, so packing mixes them
    return write_jsonl(tmp_path_factory.mktemp("data") / "sft.jsonl", reversal_rows(24, seed=3, lo=3, hi=12))


@pytest.fixture(scope="module")
def pt_file(tmp_path_factory):
    """Pre-training text of varied lengths (some longer than the cutoff: split into chunks first)."""
    import random

    rng = random.Random(4)
    words = ["alpha", "beta", "gamma", "delta", "seven", "nine", "river", "stone", "light", "open"]
    rows = [{"text": " ".join(rng.choice(words) for _ in range(rng.randint(3, 40)))} for _ in range(20)]
    return write_jsonl(tmp_path_factory.mktemp("data") / "pt.jsonl", rows)


def _train(framework: str, model, data, out, **extra):
    args = dict(
        model=str(model),
        dataset=[str(data)],
        framework=framework,
        output_dir=str(out),
        max_steps=STEPS,
        per_device_train_batch_size=24,  # the whole set (packed: fewer rows) in every step
        learning_rate=2e-3,
        lr_scheduler_type="constant",
        warmup_ratio=0.0,
        weight_decay=0.01,
        max_grad_norm=1.0,
        logging_steps=1,
        save_steps=1000,
        seed=7,
        report_to=["none"],
        plot_loss=False,
    )
    args.setdefault("stage", "sft")
    args.update(extra)
    result = openmind.train(None, **args)
    losses = [e["loss"] for e in result.history if "loss" in e]
    assert len(losses) == STEPS, result.history
    return result, losses


def _weights(folder):
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def _same_run(tiny_dir, data, tmp_path, **extra):
    pt, pt_losses = _train("pt", tiny_dir, data, tmp_path / "pt", **extra)
    ms, ms_losses = _train("ms", tiny_dir, data, tmp_path / "ms", **extra)
    assert np.abs(np.array(ms_losses) - np.array(pt_losses)).max() < 1e-4, (pt_losses, ms_losses)
    assert pt_losses[-1] < pt_losses[0] - 0.05  # it trained: the curves are not flat
    got, want, base = _weights(tmp_path / "ms"), _weights(tmp_path / "pt"), _weights(tiny_dir)
    assert set(got) == set(want)
    for name in want:
        assert np.abs(got[name] - want[name]).max() < 1e-4, name
    return got, base, pt, ms


def test_freeze_equals_pytorch(tiny_dir, sft_file, tmp_path):
    got, base, pt, ms = _same_run(tiny_dir, sft_file, tmp_path, finetuning_type="freeze", freeze_trainable_layers=1)
    changed = {name for name in base if not np.array_equal(got[name], base[name])}
    assert changed and all(name.startswith("model.layers.2.") for name in changed), sorted(changed)
    assert ms.metrics["trainable_params"] < ms.metrics["total_params"] / 4


@pytest.mark.parametrize("stage", ["sft", "pt"])
def test_packing_equals_pytorch(stage, tiny_dir, sft_file, pt_file, tmp_path):
    data = sft_file if stage == "sft" else pt_file
    _, _, pt, ms = _same_run(tiny_dir, data, tmp_path, stage=stage, finetuning_type="full", packing=True, cutoff_len=96)
    rows = ms.metrics["data"]["train_rows"]
    assert 1 < rows < (24 if stage == "sft" else 20)  # fewer rows than samples: several samples each
    assert ms.tokens == pt.tokens  # the same real tokens counted (no padding) on both frameworks


def test_packed_row_scores_each_sample_as_alone(tiny_dir):
    """A packed row gives every sample the logits it gets alone (native forward, padding included)."""
    from mindspore import Tensor

    from openmind.ms import runtime
    from openmind.ms.models.layers import MASK_VALUE
    from openmind.ms.models.llama import rope_tables
    from openmind.ms.training.packing import block_causal_mask, mask_boundaries, padded_positions

    labels = mask_boundaries(np.array([5, 6, 7, 8, 9, 10]), np.array([0, 1, 2, 0, 1, 2]))
    assert labels.tolist() == [-100, 6, 7, -100, 9, 10]
    runtime.set_device("cpu")
    from openmind.ms.models import auto

    model, _ = auto.load(str(tiny_dir), "causal-lm")
    samples = [[1, 518, 25580, 29962], [1, 830, 3901], [1, 29871, 29896, 29906, 29941]]
    ids = np.array([sum(samples, []) + [2, 2]], np.int32)  # two padding slots
    pos = padded_positions(np.concatenate([np.arange(len(s)) for s in samples]), ids.shape[1])[None]
    assert pos[0].tolist() == [0, 1, 2, 3, 0, 1, 2, 0, 1, 2, 3, 4, 0, 1]
    cos, sin = rope_tables(model.inv_freq, pos)
    mask = block_causal_mask(pos, MASK_VALUE)
    packed = model(Tensor(ids), Tensor(cos), Tensor(sin), Tensor(mask))[0].asnumpy()[0]
    start = 0
    for sample in samples:
        x = np.array([sample], np.int32)
        alone = model(Tensor(x), *model.prepare(np.ones_like(x), x.shape[1]))[0].asnumpy()[0]
        assert np.abs(packed[start : start + len(sample)] - alone).max() < 1e-5
        start += len(sample)
