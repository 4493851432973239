"""Cross-package: the installed test plugin extends openmind without touching it; docs stay fresh."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def openmind(*args, env=None):
    e = dict(os.environ, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "openmind.core.cli.main", *args], capture_output=True, text=True, env=e, cwd=ROOT
    )


def test_third_party_plugin_shows_up_in_list():
    out = openmind("list", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["problems"] == []
    poem = [t for t in data["tasks"] if t["name"] == "poem"][0]
    assert poem["component"]["distribution"] == "openmind-testplugin"
    group = [g for g in data["models"] if g["name"] == "tinypoet"][0]
    assert group["template"] == "poet" and group["tasks"] == ["poem"]
    assert [d for d in data["datasets"] if d["name"] == "poems"][0]["task"] == "poem-sft"
    assert [t for t in data["templates"] if t["name"] == "poet"][0]["component"]["plugin"] == "testplugin"
    text = openmind("list", "models").stdout
    assert "tinypoet" in text and "openmind-testplugin 0.0.1" in text


def test_block_and_allow_lists():
    blocked = json.loads(openmind("list", "--json", env={"OPENMIND_DISABLE_PLUGINS": "testplugin"}).stdout)
    assert "poem" not in {t["name"] for t in blocked["tasks"]}
    only = json.loads(openmind("list", "--json", env={"OPENMIND_PLUGINS": "testplugin,nlp"}).stdout)
    assert {p["name"] for p in only["plugins"]} == {"core", "core-hub", "testplugin", "nlp"}


def test_template_of_plugin_resolves_lazily():
    from openmind.core.plugins import get_registry

    template = get_registry().template("poet").load()()
    assert template.render([{"role": "user", "content": "sea"}]) == "<user>sea<end><assistant>"


def test_every_shipped_package_is_a_plugin():
    data = json.loads(openmind("list", "plugins", "--json").stdout)
    names = {p["name"]: p for p in data["plugins"]}
    expected = {
        "core": "openmind",
        "core-hub": "openmind",
        "nlp": "openmind-nlp",
        "nlp-templates": "openmind-nlp",
        "nlp-training": "openmind-nlp",
        "nlp-serve": "openmind-nlp",
        "nlp-eval": "openmind-nlp",
        "data": "openmind-data",
        "mm": "openmind-mm",
        "mm-serve": "openmind-mm",
        "pt": "openmind-pt",
        "pt-training": "openmind-pt",
        "ms": "openmind-ms",
    }
    for name, dist in expected.items():
        assert names[name]["loaded"], names[name]
        assert names[name]["distribution"] == dist


def test_generated_docs_are_not_stale():
    out = openmind("docs", "--out", str(ROOT / "docs"), "--check", env={"OPENMIND_DISABLE_PLUGINS": "testplugin"})
    assert out.returncode == 0, out.stdout + out.stderr + "\nregenerate: nox -s docs"


def test_only_core_ships_namespace_init():
    inits = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("packages/*/src/openmind/__init__.py"))
    assert inits == ["packages/openmind-core/src/openmind/__init__.py"]
