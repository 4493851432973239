"""Multi-process training tests (gloo on CPU): FSDP2, DeepSpeed ZeRO, multi-node torchrun.

Run by ``nox -s distributed`` (not part of ``tests(framework='pt')``): each test starts several
training processes, so they are kept few and short (10 steps of a tiny model)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("dist")


@pytest.fixture(scope="session")
def env(work) -> dict[str, str]:
    out = dict(os.environ)
    out.update(
        OMP_NUM_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
        HF_HUB_OFFLINE="1",
        OPENMIND_LOG_DIR=str(work / "logs"),
        OPENMIND_CACHE=str(work / "cache"),
        PYTHONUNBUFFERED="1",
        TRL_EXPERIMENTAL_SILENCE="1",
    )
    return out


@pytest.fixture(scope="session")
def tiny_dir(work):
    from openmind.pt.testing import tiny_llama

    return tiny_llama(work / "model", hidden_size=64, layers=2, heads=4)


@pytest.fixture(scope="session")
def sft_file(work):
    from openmind.nlp.testing.synthetic import reversal_rows, write_jsonl

    return write_jsonl(work / "sft.jsonl", reversal_rows(160, seed=0))
