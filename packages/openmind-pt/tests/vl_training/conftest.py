"""Fixtures of the vision-language training tests: a tiny random Qwen2-VL (real Llama-2 tokenizer
plus Qwen2-VL's special tokens and official chat template) and coloured-square data.

One intra-op thread: tiny models on a shared 2-core machine train much faster that way (see
tests/training/conftest.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


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
    monkeypatch.setenv("OPENMIND_QUIET", "1")
    plugins.reset()
    yield
    plugins.reset()


@pytest.fixture(scope="session")
def vl_dir(tmp_path_factory):
    from vl_helpers import tiny_qwen2_vl_trainable

    return tiny_qwen2_vl_trainable(tmp_path_factory.mktemp("vl") / "qwen2vl")


@pytest.fixture(scope="session")
def squares(tmp_path_factory):
    """16 training rows of coloured squares (LLaMA-Factory's mllm_demo layout)."""
    from vl_helpers import square_rows

    folder = tmp_path_factory.mktemp("squares")
    data, _ = square_rows(folder, 16, seed=1)
    return data
