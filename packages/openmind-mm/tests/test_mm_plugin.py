"""openmind-mm registers its tasks and the multimodal dataset format, consistently on its own."""

import pytest

from openmind.core import plugins


@pytest.fixture(autouse=True)
def _only_mm(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENMIND_PLUGINS", "mm")
    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path))
    plugins.reset()
    yield
    plugins.reset()


def test_mm_alone_gives_a_valid_registry():
    registry = plugins.get_registry()
    assert registry.problems == []
    assert {p.name for p in registry.plugin_infos} == set(plugins.DEFAULT_PLUGINS) | {"mm"}


def test_tasks_and_dataset_format():
    registry = plugins.get_registry()
    assert registry.task("text-to-image").name == "text2image"
    assert registry.task("image-captioning").name == "image-to-text"
    mm_sft = registry.task("multimodal-sft")
    assert mm_sft.name == "mm-sft" and mm_sft.kind_of == "training" and mm_sft.domain == "mm"
    fmt = registry.dataset_for("mm-sft")
    assert fmt.name == "multimodal-sft" and "images" in fmt.columns
    assert fmt.component.distribution == "openmind-mm"


def test_plugin_module_imports_no_framework():
    import subprocess
    import sys

    code = "import sys, openmind.mm.plugin; print([m for m in ('torch','transformers','diffusers','numpy') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
