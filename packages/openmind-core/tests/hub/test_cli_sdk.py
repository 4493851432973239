"""The verbs (pull, push, rm, cache ls/verify/clean), resolve_model / pipeline on hub ids, and
import lightness."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TOKEN, sample_files, tree

from openmind.core.cli import main

pytest.importorskip("huggingface_hub")


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_pull_ls_verify_clean_rm(hub, state, capsys, tmp_path):
    state.add_repo("org/tiny", sample_files())
    code, out, _ = run(capsys, "pull", "hf::org/tiny", "--endpoint", hub.url, "--quiet")
    assert code == 0
    folder = Path(out.strip().splitlines()[-1])
    assert tree(folder) == sample_files()

    code, out, _ = run(capsys, "cache", "ls")
    assert code == 0 and "huggingface" in out and "org/tiny" in out and "main=" in out
    code, out, _ = run(capsys, "cache", "ls", "--json")
    (entry,) = json.loads(out)
    assert entry["files"] == 5 and entry["size"] == sum(len(v) for v in sample_files().values())

    code, out, _ = run(capsys, "cache", "verify")
    assert code == 0 and "5 ok, 0 corrupt, 0 missing, 0 partial" in out
    # flip one byte of a cached blob: verify re-hashes and reports it, with a non-zero exit
    blob = Path(os.path.realpath(folder / "model.safetensors"))
    data = bytearray(blob.read_bytes())
    data[100] ^= 0xFF
    blob.write_bytes(bytes(data))
    code, out, _ = run(capsys, "cache", "verify", "hf::org/tiny")
    assert code == 1 and "CORRUPT" in out and "model.safetensors" in out and "sha256" in out

    code, out, _ = run(capsys, "cache", "clean", "--older-than", "1", "--dry-run")
    assert code == 0 and "would free 0 B" in out
    code, out, err = run(capsys, "cache", "clean")
    assert code == 2 and "OM-A004" in err
    code, out, _ = run(capsys, "rm", "hf::org/tiny")
    assert code == 0 and "removed" in out
    assert not folder.exists()
    code, out, err = run(capsys, "rm", "hf::org/tiny")
    assert code == 1 and "OM-H011" in err


def test_cache_clean_incomplete(hub, state, capsys):
    state.add_repo("org/tiny", sample_files())
    state.fault("drop", "model.safetensors", times=-1, after=50_000)
    os.environ["OPENMIND_HUB_RETRIES"] = "0"
    try:
        code, _, err = run(capsys, "pull", "hf::org/tiny", "--endpoint", hub.url, "--quiet")
    finally:
        del os.environ["OPENMIND_HUB_RETRIES"]
    assert code == 1 and "OM-H010" in err and "kept for resuming" in err
    code, out, _ = run(capsys, "cache", "verify")
    assert code == 1 and "PARTIAL" in out and "of 300000 bytes downloaded" in out
    code, out, _ = run(capsys, "cache", "clean", "--incomplete")
    assert code == 0 and "removed" in out
    code, out, _ = run(capsys, "cache", "verify")
    assert "0 partial" in out and "MISSING" in out


def test_push_and_remote_rm_verbs(hub, state, capsys, tmp_path):
    src = tmp_path / "out"
    src.mkdir()
    (src / "config.json").write_text("{}")
    code, out, _ = run(capsys, "push", str(src), "hf::me/model", "--endpoint", hub.url, "--token", TOKEN, "-m", "hi")
    assert code == 0 and "pushed" in out and set(state.repos["me/model"].files) == {"config.json"}
    code, _, err = run(capsys, "rm", "hf::me/model", "--remote", "--endpoint", hub.url, "--token", TOKEN)
    assert code == 2 and "--yes" in err  # no terminal to confirm on
    code, out, _ = run(capsys, "rm", "hf::me/model", "--remote", "--yes", "--endpoint", hub.url, "--token", TOKEN)
    assert code == 0 and "deleted huggingface:me/model" in out and "me/model" not in state.repos


def test_help_lists_the_verbs_and_pull_help_explains_ids(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for verb in ("pull", "push", "rm", "cache"):
        assert verb in out
    with pytest.raises(SystemExit):
        main(["pull", "--help"])
    out = capsys.readouterr().out
    assert "hf::org/name" in out and "OPENMIND_OFFLINE" in out and "--local-dir" in out


def test_resolve_model_pulls_hub_ids_and_honours_offline(hub, state, monkeypatch, tmp_path):
    from openmind.core.api import M_NOT_FOUND, resolve_model
    from openmind.core.errors import OpenMindError

    state.add_repo("org/tiny", sample_files())
    monkeypatch.setenv("HF_ENDPOINT", hub.url)  # the client's own variable
    folder = resolve_model("hf::org/tiny")
    assert tree(Path(folder)) == sample_files()
    local = tmp_path / "model"
    local.mkdir()
    assert resolve_model(str(local)) == str(local)
    with pytest.raises(OpenMindError) as err:
        resolve_model(str(tmp_path / "missing" / "deep" / "folder"))
    assert err.value.code == M_NOT_FOUND.code
    monkeypatch.setenv("OPENMIND_OFFLINE", "1")
    hub.stop()
    assert resolve_model("hf::org/tiny") == folder
    with pytest.raises(OpenMindError) as err:
        resolve_model("hf::org/other")
    assert err.value.code == "OM-H011"


def test_importing_the_hub_imports_no_client():
    code = (
        "import sys, openmind.core.hub, openmind.core.hub.plugin, openmind.core.hub.cli\n"
        "from openmind.core.plugins import get_registry; get_registry().all('hub')\n"
        "bad = [m for m in ('huggingface_hub', 'openmind_hub', 'modelscope', 'modelscope_hub', 'requests', 'httpx',"
        " 'torch', 'transformers') if m in sys.modules]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
