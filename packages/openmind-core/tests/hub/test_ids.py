"""Hub ids, hub choice and the path-safety rules (no network)."""

from __future__ import annotations

import os

import pytest

from openmind.core.errors import OpenMindError
from openmind.core.hub.ids import contained, looks_like_hub_id, parse, safe_relpath


def test_prefixes_pick_the_hub():
    assert parse("hf::org/name").hub == "huggingface"
    assert parse("om::org/name").hub == "modelers"
    assert parse("ms::org/name").hub == "modelscope"
    assert parse("local::org/name").hub == "local"
    assert parse("file:///mnt/mirror/org/name") == parse("file:///mnt/mirror/org/name", hub="local")
    assert parse("hf::org/name").repo_id == "org/name"


def test_precedence_flag_then_prefix_then_env_then_default(monkeypatch):
    assert parse("org/name").hub == "modelers"
    monkeypatch.setenv("OPENMIND_HUB", "hf")
    assert parse("org/name").hub == "huggingface"
    assert parse("org/name", hub="modelscope").hub == "modelscope"
    assert parse("om::org/name").hub == "modelers"  # the prefix beats OPENMIND_HUB
    with pytest.raises(OpenMindError) as err:
        parse("om::org/name", hub="huggingface")
    assert err.value.code == "OM-H002"


@pytest.mark.parametrize("bad", ["org/name/extra", "../x", "org/..", "", "hf::", "org/na me"])
def test_bad_ids(bad):
    with pytest.raises(OpenMindError) as err:
        parse(bad)
    assert err.value.code == "OM-H002"


def test_unknown_hub():
    with pytest.raises(OpenMindError) as err:
        parse("zz::org/name")
    assert err.value.code == "OM-H001"
    assert "hf::" in err.value.message


def test_looks_like_hub_id():
    assert looks_like_hub_id("org/name") and looks_like_hub_id("gpt2") and looks_like_hub_id("hf::a/b")
    assert not looks_like_hub_id("./out/run") and not looks_like_hub_id("/abs/path") and not looks_like_hub_id("a/b/c")


@pytest.mark.parametrize(
    "bad", ["", "/etc/passwd", "../x", "a/../../x", "a/./b", "a//b", "..\\x", "C:\\x", "c:x", "a\x00b", "a\nb", "."]
)
def test_unsafe_names_are_refused(bad):
    with pytest.raises(OpenMindError) as err:
        safe_relpath(bad)
    assert err.value.code == "OM-H008"


def test_safe_names_pass():
    assert safe_relpath("a/b/c.json") == "a/b/c.json"
    assert safe_relpath("..hidden/x") == "..hidden/x"


def test_contained_refuses_a_symlinked_folder_pointing_out(tmp_path):
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    os.symlink(outside, root / "sub")
    assert contained(root, "ok/file") == root / "ok" / "file"
    with pytest.raises(OpenMindError) as err:
        contained(root, "sub/file")
    assert err.value.code == "OM-H008"
