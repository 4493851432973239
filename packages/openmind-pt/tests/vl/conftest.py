"""Tiny vision-language folders (random weights, real Llama-2 BPE + the family's special tokens,
the official chat templates stored in openmind-mm's test data)."""

from __future__ import annotations

from pathlib import Path

import pytest

TEMPLATES = Path(__file__).parents[3] / "openmind-mm" / "tests" / "data" / "chat_templates"


def template(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def qwen2_vl_dir(tmp_path_factory):
    from openmind.pt.testing import tiny_qwen2_vl

    return str(tiny_qwen2_vl(tmp_path_factory.mktemp("vl") / "tiny-qwen2-vl", template("qwen2-vl.jinja")))


@pytest.fixture(scope="session")
def qwen25_vl_dir(tmp_path_factory):
    from openmind.pt.testing import tiny_qwen2_vl

    folder = tmp_path_factory.mktemp("vl") / "tiny-qwen2.5-vl"
    return str(tiny_qwen2_vl(folder, template("qwen2-vl.jinja"), variant="qwen2.5-vl", seed=1))


@pytest.fixture(scope="session")
def llava_dir(tmp_path_factory):
    from openmind.pt.testing import tiny_llava

    return str(tiny_llava(tmp_path_factory.mktemp("vl") / "tiny-llava", template("llava-1.5.jinja")))


@pytest.fixture(scope="session")
def vl_dirs(qwen2_vl_dir, qwen25_vl_dir, llava_dir):
    return {"qwen2-vl": qwen2_vl_dir, "qwen2.5-vl": qwen25_vl_dir, "llava-1.5": llava_dir}


@pytest.fixture(scope="session")
def vl_pipes(vl_dirs):
    from openmind import pipeline

    return {name: pipeline("chat", model=path, max_new_tokens=8) for name, path in vl_dirs.items()}


@pytest.fixture(scope="session")
def images():
    from PIL import Image

    return {
        "red": Image.new("RGB", (56, 56), (255, 0, 0)),
        "blue": Image.new("RGB", (84, 56), (0, 0, 255)),
        "green": Image.new("RGB", (56, 84), (0, 200, 0)),
    }
