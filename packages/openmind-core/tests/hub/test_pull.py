"""pull through the real clients against the loopback hub: content, cache layout, resume,
verification, atomicity, path safety and the coded errors — for every HTTP hub."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import TOKEN, all_files, content, sample_files, tree
from server import HubState

from openmind.core.errors import OpenMindError
from openmind.core.hub import cache as C
from openmind.core.hub import pull

pytest.importorskip("huggingface_hub")


@dataclass
class Remote:
    name: str
    prefix: str
    endpoint: str
    state: HubState
    branch: str

    def add(self, files, repo="org/tiny", **kw):
        return self.state.add_repo(repo, files, branch=self.branch, **kw)

    def id(self, repo="org/tiny") -> str:
        return f"{self.prefix}::{repo}"

    def pull(self, repo="org/tiny", **kw) -> Path:
        kw.setdefault("progress", False)
        return pull(self.id(repo), endpoint=self.endpoint, **kw)


HUBS = {
    "huggingface": ("hf", "hub", "main", "huggingface_hub"),
    "modelers": ("om", "tls_hub", "main", "openmind_hub"),
    "modelscope": ("ms", "hub", "master", "modelscope_hub"),
}


@pytest.fixture(params=sorted(HUBS))
def remote(request, state) -> Remote:
    prefix, fixture, branch, client = HUBS[request.param]
    pytest.importorskip(client)
    server = request.getfixturevalue(fixture)
    return Remote(request.param, prefix, server.url, state, branch)


def _repo_cache(remote: Remote, repo="org/tiny") -> C.CachedRepo:
    return next(r for r in C.scan() if r.hub == remote.name and r.repo_id == repo)


# ---- the happy path ---------------------------------------------------------------------------------


def test_pull_gets_every_file_into_the_shared_cache_layout(remote):
    remote.add(sample_files())
    folder = remote.pull()
    assert tree(folder) == sample_files()
    repo_dir = Path(os.environ["OPENMIND_CACHE"]) / "hub" / remote.name / "models--org--tiny"
    assert folder.parent == repo_dir / "snapshots"
    # snapshot entries are links into blobs/ named by the hub's checksums
    link = folder / "model.safetensors"
    assert link.is_symlink()
    import hashlib

    assert Path(os.path.realpath(link)).name == hashlib.sha256(sample_files()["model.safetensors"]).hexdigest()
    assert (repo_dir / "refs" / remote.branch).read_text() == folder.name
    assert [c.state for c in C.verify(_repo_cache(remote))] == ["ok"] * len(sample_files())


def test_second_pull_downloads_nothing(remote):
    remote.add(sample_files())
    first = remote.pull()
    before = len(remote.state.ranges("model.safetensors"))
    assert remote.pull() == first
    assert len(remote.state.ranges("model.safetensors")) == before


def test_include_exclude_and_local_dir(remote, tmp_path):
    remote.add(sample_files())
    folder = remote.pull(include=["*.json"], exclude=["tokenizer.json"])
    assert tree(folder) == {"config.json": sample_files()["config.json"]}
    target = remote.pull(local_dir=tmp_path / "plain", include="sub/")
    assert target == tmp_path / "plain"
    assert tree(target) == {"sub/extra.bin": sample_files()["sub/extra.bin"]}
    assert not (target / "sub" / "extra.bin").is_symlink()
    with pytest.raises(OpenMindError) as err:
        remote.pull(include=["*.gguf"])
    assert err.value.code == "OM-H007"


def test_transient_errors_are_retried(remote):
    remote.add(sample_files())
    remote.state.fault("status", "model.safetensors", times=2, status=503)
    folder = remote.pull()
    assert tree(folder) == sample_files()
    assert len(remote.state.ranges("model.safetensors")) == 3


# ---- fault tests -----------------------------------------------------------------------------------


def test_dropped_connection_resumes_and_the_hash_is_right(remote):
    remote.add(sample_files())
    remote.state.fault("drop", "model.safetensors", after=100_000)
    folder = remote.pull()
    assert (folder / "model.safetensors").read_bytes() == sample_files()["model.safetensors"]
    ranges = remote.state.ranges("model.safetensors")
    assert len(ranges) == 2 and ranges[0] is None
    start = int(ranges[1].removeprefix("bytes=").rstrip("-"))
    assert 0 < start <= 100_000  # resumed from the bytes already on disk, not from zero


@pytest.mark.parametrize("name", ["model.safetensors", "tokenizer.json"])  # sha256 (LFS) and git-sha1 files
def test_corrupted_byte_is_detected_and_refetched(remote, name):
    remote.add(sample_files())
    remote.state.fault("corrupt", name, after=1234)
    folder = remote.pull()
    assert (folder / name).read_bytes() == sample_files()[name]
    assert remote.state.ranges(name) == [None, None]


def test_persistent_corruption_is_a_coded_error_and_nothing_is_placed(remote):
    remote.add(sample_files())
    remote.state.fault("corrupt", "model.safetensors", times=-1, after=10)
    with pytest.raises(OpenMindError) as err:
        remote.pull(include="model.safetensors")
    assert err.value.code == "OM-H009"
    repo = _repo_cache(remote)
    snap = repo.path / "snapshots" / repo.commits[0]
    assert not (snap / "model.safetensors").exists()
    assert not list((repo.path / "blobs").glob("*[!k]"))  # no blob, no partial (only the lock file)


@pytest.mark.parametrize("bad", ["../evil.txt", "/tmp/evil-abs.txt", "sub/../../evil.txt", "..\\evil.txt"])
def test_malicious_file_names_are_refused_and_nothing_is_written_outside(remote, tmp_path, bad):
    files = dict(sample_files())
    files[bad] = b"pwned"
    remote.add(files)
    before = all_files(tmp_path)
    for kwargs in ({}, {"local_dir": tmp_path / "plain"}):
        with pytest.raises(OpenMindError) as err:
            remote.pull(**kwargs)
        assert err.value.code == "OM-H008"
        assert repr(bad) in err.value.message
    written = all_files(tmp_path) - before
    assert not [p for p in written if "evil" in p or "pwned" in p]
    assert not Path("/tmp/evil-abs.txt").exists()
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path.parent / "evil.txt").exists()
    # nothing was downloaded at all: the pull is refused before the first byte
    assert remote.state.ranges("config.json") == []


def test_interrupted_pull_is_reported_by_verify_then_resumed(remote):
    remote.add(sample_files())
    remote.state.fault("drop", "model.safetensors", times=-1, after=50_000)
    with pytest.raises(OpenMindError) as err:
        remote.pull(retries=1)
    assert err.value.code == "OM-H010"
    checks = {c.path: c for c in C.verify(_repo_cache(remote))}
    partial = checks["model.safetensors"]
    assert partial.state == "partial"
    have = int(partial.detail.split()[0])
    assert 0 < have <= 100_000 and "of 300000 bytes" in partial.detail
    assert not list(_repo_cache(remote).path.glob("snapshots/*/model.safetensors"))  # never under its final name
    assert {c.state for c in checks.values()} <= {"ok", "missing", "partial"}
    # the hub recovers: the same pull resumes from the partial file
    remote.state.faults.clear()
    folder = remote.pull()
    assert tree(folder) == sample_files()
    last = remote.state.ranges("model.safetensors")[-1]
    assert last == f"bytes={have}-"
    assert {c.state for c in C.verify(_repo_cache(remote))} == {"ok"}


# ---- coded errors ------------------------------------------------------------------------------------


def test_not_found_and_missing_revision(remote):
    with pytest.raises(OpenMindError) as err:
        remote.pull("org/nothing")
    assert err.value.code == "OM-H003"
    remote.add(sample_files())
    with pytest.raises(OpenMindError) as err:
        remote.pull(revision="v9")
    assert err.value.code == "OM-H004"


def test_gated_and_private_repositories(remote):
    if remote.name == "modelscope":
        pytest.skip("the ModelScope dialect of the test hub has no gated repositories")
    remote.add(sample_files(), repo="org/gated", gated=True)
    with pytest.raises(OpenMindError) as err:
        remote.pull("org/gated")
    assert err.value.code == "OM-H005"
    assert tree(remote.pull("org/gated", token=TOKEN)) == sample_files()
    remote.add({"config.json": b"{}"}, repo="org/private", private=True)
    with pytest.raises(OpenMindError) as err:
        remote.pull("org/private")
    assert err.value.code == "OM-H003"  # a private repository looks missing without a token
    assert tree(remote.pull("org/private", token=TOKEN)) == {"config.json": b"{}"}


# ---- offline ----------------------------------------------------------------------------------------------


def test_offline_mode_resolves_from_the_cache_only(remote, monkeypatch):
    remote.add(sample_files())
    folder = remote.pull()
    requests_before = len(remote.state.log)
    monkeypatch.setenv("OPENMIND_OFFLINE", "1")
    assert remote.pull() == folder
    assert remote.pull(include="*.json") == folder
    assert len(remote.state.log) == requests_before
    with pytest.raises(OpenMindError) as err:
        remote.pull("org/other")
    assert err.value.code == "OM-H011"


def test_unreachable_hub_falls_back_to_a_complete_cached_copy(remote):
    remote.add(sample_files())
    folder = remote.pull()
    dead = remote.endpoint.rsplit(":", 1)[0] + ":9"  # discard port: connection refused
    assert pull(remote.id(), endpoint=dead, retries=0, progress=False) == folder
    with pytest.raises(OpenMindError) as err:
        pull(remote.id("org/never"), endpoint=dead, retries=0, progress=False)
    assert err.value.code == "OM-H010"


def test_large_file_streams_in_pieces(remote, tmp_path):
    big = tmp_path / "big.bin"
    big.write_bytes(content("big", 3_000_000))
    remote.add({"big.bin": big})
    folder = remote.pull(workers=2)
    assert (folder / "big.bin").read_bytes() == big.read_bytes()
