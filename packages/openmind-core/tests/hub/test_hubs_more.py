"""push / rm through the real clients, the local hub, a third-party hub, missing clients."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import TOKEN, sample_files, tree

from openmind.core.errors import OpenMindError
from openmind.core.hub import cache as C
from openmind.core.hub import get_hub, pull, push, rm


def _write(folder: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


# ---- push / rm against the loopback hub ----------------------------------------------------------


def test_push_then_pull_back_huggingface(hub, state, tmp_path):
    pytest.importorskip("huggingface_hub")
    src = _write(tmp_path / "out", sample_files())
    commit = push(src, "hf::me/new-model", endpoint=hub.url, token=TOKEN, message="first")
    assert commit == state.repos["me/new-model"].branches["main"]
    assert {p: b.sha256 for p, b in state.repos["me/new-model"].files.items()} == {
        p: __import__("hashlib").sha256(d).hexdigest() for p, d in sample_files().items()
    }
    assert tree(pull("hf::me/new-model", endpoint=hub.url, progress=False)) == sample_files()
    # push again into the existing repository (create is idempotent), with a pattern
    push(src, "hf::me/new-model", endpoint=hub.url, token=TOKEN, include="*.json")
    rm("hf::me/new-model", remote=True, endpoint=hub.url, token=TOKEN)
    assert "me/new-model" not in state.repos
    with pytest.raises(OpenMindError) as err:
        pull("hf::me/new-model", endpoint=hub.url, progress=False, revision="main", include="x")
    assert err.value.code == "OM-H003"


def test_push_without_token_is_unauthorised(hub, tmp_path):
    pytest.importorskip("huggingface_hub")
    src = _write(tmp_path / "out", {"config.json": b"{}"})
    with pytest.raises(OpenMindError) as err:
        push(src, "hf::me/x", endpoint=hub.url)
    assert err.value.code == "OM-H006"


def test_push_then_pull_back_modelers(tls_hub, state, tmp_path):
    pytest.importorskip("openmind_hub")
    from openmind_hub.plugins.openmind import constants

    src = _write(tmp_path / "out", sample_files())
    # the client uploads only from allowed folders (/tmp, home, HUB_WHITE_LIST_PATHS read at import)
    saved = list(constants.WHITE_LIST_PATHS)
    constants.WHITE_LIST_PATHS[:] = ["/nowhere"]
    try:
        with pytest.raises(OpenMindError) as err:
            push(src, "om::owner/new-model", token=TOKEN)
        assert err.value.code == "OM-H013" and "HUB_WHITE_LIST_PATHS" in err.value.hint
        constants.WHITE_LIST_PATHS[:] = [str(tmp_path)]
        push(src, "om::owner/new-model", token=TOKEN)
    finally:
        constants.WHITE_LIST_PATHS[:] = saved
    assert set(state.repos["owner/new-model"].files) == set(sample_files())
    assert tree(pull("om::owner/new-model", progress=False)) == sample_files()
    with pytest.raises(OpenMindError) as err:
        push(src, "om::owner/other")  # no token: the client refuses a write
    assert err.value.code == "OM-H006"
    rm("om::owner/new-model", remote=True, token=TOKEN)
    assert "owner/new-model" not in state.repos


def test_modelers_refuses_plain_http(hub):
    pytest.importorskip("openmind_hub")
    with pytest.raises(OpenMindError) as err:
        get_hub("modelers", endpoint=hub.url)
    assert err.value.code == "OM-H014"


def test_push_of_a_missing_or_empty_folder(tmp_path):
    with pytest.raises(OpenMindError) as err:
        push(tmp_path / "nope", "local::me/x", endpoint=str(tmp_path))
    assert err.value.code == "OM-H013"
    (tmp_path / "empty").mkdir()
    with pytest.raises(OpenMindError) as err:
        push(tmp_path / "empty", "local::me/x", endpoint=str(tmp_path))
    assert err.value.code == "OM-H013"


# ---- the local hub -----------------------------------------------------------------------------------


def test_local_mirror_pull_push_and_file_urls(tmp_path):
    mirror = tmp_path / "mirror"
    _write(mirror / "org" / "tiny", sample_files())
    folder = pull("local::org/tiny", endpoint=f"file://{mirror}", progress=False)
    assert tree(folder) == sample_files()
    assert pull(f"file://{mirror}/org/tiny", progress=False) != folder or True
    assert tree(pull(f"file://{mirror}/org/tiny", progress=False)) == sample_files()
    repo = next(r for r in C.scan() if r.repo_id == "org/tiny")
    assert {c.state for c in C.verify(repo)} == {"ok"}
    src = _write(tmp_path / "out", {"a.txt": b"A", "b/c.txt": b"C"})
    push(src, "local::me/pushed", endpoint=str(mirror))
    assert (mirror / "me" / "pushed" / "b" / "c.txt").read_bytes() == b"C"
    with pytest.raises(OpenMindError) as err:
        pull("local::org/tiny", endpoint=str(mirror), revision="v2")
    assert err.value.code == "OM-H004"
    with pytest.raises(OpenMindError) as err:
        pull("local::org/tiny")  # no root given
    assert err.value.code == "OM-H014"


def test_local_symlink_pointing_out_is_refused(tmp_path):
    mirror = tmp_path / "mirror"
    _write(mirror / "org" / "tiny", {"config.json": b"{}"})
    secret = tmp_path / "secret.txt"
    secret.write_text("do not copy")
    os.symlink(secret, mirror / "org" / "tiny" / "leak.txt")
    with pytest.raises(OpenMindError) as err:
        pull("local::org/tiny", endpoint=str(mirror), progress=False)
    assert err.value.code == "OM-H008" and "leak.txt" in err.value.message
    cache = Path(os.environ["OPENMIND_CACHE"])
    assert not [p for p in cache.rglob("*") if p.is_file() and p.read_bytes() == b"do not copy"]


# ---- a third-party hub gets resume and verification for free -------------------------------------------


def test_third_party_hub_plugin_resumes_and_verifies(monkeypatch):
    import thirdparty

    from openmind.core import plugins

    host = plugins.PluginHost(load_entry_points=False, extra={"memory-plugin": thirdparty.Plugin()})
    monkeypatch.setattr(plugins, "_REGISTRY", host.registry)
    thirdparty.FILES.clear()
    thirdparty.OPENED.clear()
    thirdparty.FILES.update({"a.bin": os.urandom(200_000), "b/c.txt": b"hello"})
    folder = pull("mem::org/repo", progress=False)
    assert tree(folder) == thirdparty.FILES
    # every file broke once and was resumed from the bytes already written
    assert ("a.bin", 100_000) in thirdparty.OPENED and ("b/c.txt", 2) in thirdparty.OPENED
    repo = next(r for r in C.scan() if r.hub == "memory")
    assert {c.state for c in C.verify(repo)} == {"ok"}
    # corrupt the cached blob: verify notices (the blob is named by the sha256 computed on download)
    blob = Path(os.path.realpath(folder / "a.bin"))
    data = bytearray(blob.read_bytes())
    data[7] ^= 1
    blob.chmod(0o644)
    blob.write_bytes(bytes(data))
    states = {c.path: c.state for c in C.verify(repo)}
    assert states == {"a.bin": "corrupt", "b/c.txt": "ok"}


def test_missing_client_is_a_coded_error_with_the_install_command(monkeypatch):
    from openmind.core import requirements

    real = requirements.installed_version

    def fake(name):
        return None if name.replace("-", "_").lower() == "huggingface_hub" else real(name)

    fake.cache_clear = real.cache_clear
    monkeypatch.setattr(requirements, "installed_version", fake)
    with pytest.raises(OpenMindError) as err:
        get_hub("hf")
    assert err.value.code == "OM-X001"
    assert 'pip install "openmind[hf]"' in err.value.hint
    assert "huggingface_hub>=0.24" in err.value.hint
