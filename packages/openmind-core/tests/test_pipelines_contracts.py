"""openmind.core.pipelines: the generic model-folder check recognises every model layout, and a
registered argument group joins the unified arguments."""

import json
import textwrap
from types import SimpleNamespace

import pytest

from openmind.core.errors import OpenMindError
from openmind.core.hookspecs import hookimpl
from openmind.core.pipelines.model import check_model_folder, recognise, resolve_model_dir
from openmind.core.plugins import PluginHost
from openmind.core.specs import ArgumentGroupSpec


def touch(path, text="{}"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def code_of(fn, *args, **kw):
    with pytest.raises(OpenMindError) as info:
        fn(*args, **kw)
    return info.value


def test_every_model_layout_is_a_model(tmp_path):
    diffusers = tmp_path / "sd"
    touch(diffusers / "model_index.json", json.dumps({"_class_name": "StableDiffusionPipeline"}))
    touch(diffusers / "unet" / "config.json")
    touch(diffusers / "unet" / "diffusion_pytorch_model.safetensors", "")
    folder = check_model_folder(diffusers)
    assert (folder.layout, folder.weights) == ("diffusers", "safetensors")
    assert folder.config["_class_name"] == "StableDiffusionPipeline"

    st = tmp_path / "st"
    touch(st / "modules.json", "[]")
    touch(st / "config.json", json.dumps({"model_type": "bert"}))
    touch(st / "model.safetensors", "")
    assert check_model_folder(st).layout == "sentence-transformers"
    assert check_model_folder(st).config["model_type"] == "bert"

    proc = tmp_path / "proc"
    touch(proc / "preprocessor_config.json")
    touch(proc / "model.safetensors", "")
    assert (check_model_folder(proc).layout, check_model_folder(proc).config) == ("processor", {})

    plain = tmp_path / "plain"
    touch(plain / "config.json", json.dumps({"architectures": ["LlamaForCausalLM"]}))
    touch(plain / "model.safetensors", "")
    assert resolve_model_dir(plain).layout == "transformers"
    assert recognise(tmp_path) is None


def test_bad_folders_are_coded(tmp_path):
    assert code_of(resolve_model_dir, None).code == "OM-A004"
    assert code_of(check_model_folder, touch(tmp_path / "f.txt", "x")).code == "OM-M002"
    (tmp_path / "empty").mkdir()
    assert code_of(check_model_folder, tmp_path / "empty").code == "OM-M002"
    adapter = tmp_path / "adapter"
    touch(adapter / "adapter_config.json")
    assert "adapter=" in code_of(check_model_folder, adapter).hint
    sd = tmp_path / "sd"
    touch(sd / "model_index.json")
    err = code_of(check_model_folder, sd)  # a diffusers folder without weights
    assert err.code == "OM-M002" and err.location.endswith("model_index.json")
    pickled = tmp_path / "pickled"
    touch(pickled / "config.json")
    touch(pickled / "pytorch_model.bin", "")
    assert code_of(check_model_folder, pickled).code == "OM-M102"
    assert check_model_folder(pickled, allow_pickle=True).weights == "pickle"
    # a transformers folder's sub-folders (checkpoints) do not count as its weights
    nested = tmp_path / "nested"
    touch(nested / "config.json")
    touch(nested / "checkpoint-1" / "model.safetensors", "")
    assert code_of(check_model_folder, nested).code == "OM-M002"


def test_registered_argument_group_joins_the_unified_arguments(tmp_path, monkeypatch):
    from openmind.core import args as A
    from openmind.core import plugins

    module = tmp_path / "poemargs_mod.py"
    module.write_text(
        textwrap.dedent(
            """
            from dataclasses import dataclass
            from openmind.core.args import arg

            @dataclass
            class PoemArguments:
                rhyme_scheme: str = arg("AABB", "Rhyme scheme.", ("AABB", "ABAB"))

            @dataclass
            class Clash:
                port: int = arg(1, "clashes with the deploy group")
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    specs = (
        ArgumentGroupSpec(name="poem", impl="poemargs_mod:PoemArguments", verbs=("list",)),
        ArgumentGroupSpec(name="clash", impl="poemargs_mod:Clash", verbs=("list",)),
    )
    h = PluginHost(
        load_entry_points=False,
        extra={
            "p": SimpleNamespace(
                openmind_register_argument_groups=hookimpl(lambda register: [register(s) for s in specs])
            )
        },
    )
    assert h.registry.problems == []
    monkeypatch.setattr(plugins, "_REGISTRY", h.registry)
    ns = A.parse(["model", "poem"], overrides=["--rhyme-scheme", "ABAB", "--device", "cpu"])
    assert ns.poem.rhyme_scheme == "ABAB" and ns.model.device == "cpu" and "rhyme_scheme" in ns.explicit
    err = code_of(A.parse, ["poem"], overrides=["--rhyme-scheme", "XYZ"])
    assert err.code == "OM-A002" and "AABB, ABAB" in err.message
    err = code_of(A.parse, ["clash"], overrides={})
    assert err.code == "OM-A002" and "'deploy'" in err.message and "'clash'" in err.message
    assert code_of(A.group_class, "nosuch").code == "OM-R004"

    import argparse

    parser = argparse.ArgumentParser()
    A.add_to_parser(parser, ["poem"])
    assert "--rhyme-scheme" in parser.format_help()
