"""Fixtures of the training tests: a tiny Llama with the real 32k Llama-2 tokenizer, synthetic data.

Tiny models train much faster on one intra-op thread: with two threads on a shared 2-core
machine, OpenMP synchronisation makes a 64-wide matmul ~30x slower. Subprocesses get
``OMP_NUM_THREADS=1`` for the same reason (see :func:`cli_env`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from openmind.nlp.testing.synthetic import (  # noqa: E402
    preference_rows,
    reversal_rows,
    reversal_text_rows,
    write_jsonl,
)


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _fresh_plugins(monkeypatch, tmp_path):
    from openmind.core import plugins

    monkeypatch.setenv("OPENMIND_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path / "cache"))
    plugins.reset()
    yield
    plugins.reset()


def cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        OMP_NUM_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
        HF_HUB_OFFLINE="1",
        OPENMIND_LOG_DIR=str(tmp_path / "logs"),
        OPENMIND_CACHE=str(tmp_path / "cache"),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory):
    """A random tiny LlamaForCausalLM (hidden 64, 2 layers) with the real Llama-2 tokenizer."""
    from openmind.pt.testing import tiny_llama

    return tiny_llama(tmp_path_factory.mktemp("tiny") / "model", hidden_size=64, layers=2, heads=4)


@pytest.fixture(scope="session")
def sft_file(tmp_path_factory):
    return write_jsonl(tmp_path_factory.mktemp("data") / "sft.jsonl", reversal_rows(160, seed=0))


@pytest.fixture(scope="session")
def pt_file(tmp_path_factory):
    return write_jsonl(tmp_path_factory.mktemp("data") / "pt.jsonl", reversal_text_rows(80, seed=0))


@pytest.fixture(scope="session")
def pref_file(tmp_path_factory):
    return write_jsonl(tmp_path_factory.mktemp("data") / "pref.jsonl", preference_rows(96, seed=0))


def quick(**overrides):
    """Arguments of a short CPU run (no TensorBoard, no plot unless asked)."""
    base = dict(
        max_steps=6,
        per_device_train_batch_size=8,
        learning_rate=3e-3,
        logging_steps=1,
        save_steps=1000,
        report_to=["none"],
        plot_loss=False,
        lr_scheduler_type="constant",
    )
    base.update(overrides)
    return base
