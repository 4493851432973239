"""Multi-process MindSpore training (msrun on CPU): run by ``nox -s distributed_ms``, not by
``tests(framework='ms')``, because every test starts several MindSpore processes."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("mindspore", reason="the msrun tests run in nox -s distributed_ms")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("GLOG_v", "3")
