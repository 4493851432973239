"""openMind 1.0's ``openmind.utils.hub.snapshot_download`` (what LLaMA-Factory's USE_OPENMIND_HUB=1
mode calls) against the loopback test hub, through the real clients."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import sample_files, tree

from openmind.utils.hub import om_hub_download, snapshot_download

pytest.importorskip("huggingface_hub")


def test_snapshot_download_equals_pull(state, hub, tmp_path):
    state.add_repo("org/tiny", sample_files(), branch="main")
    folder = snapshot_download("hf::org/tiny", revision="main", endpoint=hub.url)
    assert tree(Path(folder)) == sample_files()
    # 1.0's cache_dir: plain files under cache_dir/<org>--<name>
    folder = snapshot_download("hf::org/tiny", cache_dir=tmp_path / "c", endpoint=hub.url, allow_patterns="config.json")
    assert Path(folder) == tmp_path / "c" / "org--tiny"
    assert set(tree(Path(folder))) == {"config.json"}


def test_om_hub_download_one_file(state, hub):
    state.add_repo("org/tiny", sample_files(), branch="main")
    path = om_hub_download("hf::org/tiny", "config.json", endpoint=hub.url)
    assert Path(path).read_bytes() == sample_files()["config.json"]


def test_modelers_hub_by_default(state, tls_hub, monkeypatch):
    pytest.importorskip("openmind_hub")
    state.add_repo("org/tiny", sample_files(), branch="main")
    folder = snapshot_download("org/tiny", endpoint=tls_hub.url)  # a bare id: the Modelers hub, as in 1.0
    assert tree(Path(folder)) == sample_files()
