"""Coded errors for environments where MindSpore cannot run, and the native model checks."""

from __future__ import annotations

import json
import sys
import types

import numpy as np

from openmind.nlp.testing.conformance import raises_code


def test_numpy_2_is_a_coded_error_before_importing_mindspore(monkeypatch):
    from openmind.ms import runtime

    monkeypatch.setattr(runtime, "_dist_version", lambda name: {"numpy": "2.3.1", "mindspore": "2.10.0"}.get(name))
    with raises_code("OM-MS001") as info:
        runtime.check_environment()
    assert "numpy<2" in info.value.hint and "2.3.1" in info.value.message


def test_mindnlp_torch_replacement_is_a_coded_error(monkeypatch):
    from openmind.ms import runtime

    fake = types.ModuleType("torch")
    fake.__file__ = "/site-packages/mindtorch/__init__.py"
    monkeypatch.setitem(sys.modules, "torch", fake)
    with raises_code("OM-MS002") as info:
        runtime.check_environment()
    assert "separate" in info.value.hint or "own process" in info.value.hint


def test_devices_are_parsed_and_checked():
    from openmind.ms import runtime

    assert runtime.parse_device("npu:1") == ("Ascend", 1)
    assert runtime.parse_device("cuda") == ("GPU", 0)
    assert runtime.parse_device("auto") == (None, 0)
    with raises_code("OM-MS005"):
        runtime.parse_device("tpu:0")
    assert runtime.set_device("cpu") == "CPU"
    with raises_code("OM-MS005") as info:
        runtime.set_device("npu:0")  # no Ascend here
    assert "npu:0" in info.value.message


def test_unsupported_architecture_and_rope_are_coded(tmp_path):
    from openmind.ms.models.config import LlamaConfig

    base = {
        "model_type": "llama",
        "vocab_size": 10,
        "hidden_size": 8,
        "intermediate_size": 16,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
    }
    with raises_code("OM-MS003"):
        LlamaConfig.from_dict({**base, "model_type": "gpt2"})
    with raises_code("OM-MS007") as info:
        LlamaConfig.from_dict({**base, "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e4}})
    assert "rope_parameters" in info.value.location
    cfg = LlamaConfig.from_dict({**base, "rope_scaling": {"type": "linear", "factor": 2.0}, "rope_theta": 500.0})
    assert cfg.rope_theta == 500.0 and cfg.rope_scaling["rope_type"] == "linear"


def test_checkpoint_mismatch_names_the_tensor(llama2_dir, tmp_path):
    import shutil

    from openmind.ms import runtime
    from openmind.ms.models import auto
    from openmind.ms.models.weights import read_safetensors, save_state_dict

    runtime.set_device("cpu")
    folder = tmp_path / "broken"
    shutil.copytree(llama2_dir, folder)
    state = read_safetensors(folder / "model.safetensors")
    state["model.norm.weight"] = np.ones(3, np.float32)
    save_state_dict(state, folder)
    with raises_code("OM-MS004") as info:
        auto.load(folder, "causal-lm")
    assert "model.norm.weight" in info.value.message


def test_bf16_and_sharded_checkpoints_load(llama2_dir, tmp_path):
    import struct

    from openmind.ms.models.weights import load_state_dict, read_safetensors, save_state_dict

    state = read_safetensors(llama2_dir / "model.safetensors")
    files = save_state_dict(state, tmp_path / "sharded", max_shard_bytes=3_000_000)
    assert len(files) > 1 and (tmp_path / "sharded" / "model.safetensors.index.json").is_file()
    again = load_state_dict(tmp_path / "sharded")
    assert set(again) == set(state) and all(np.array_equal(again[k], state[k]) for k in state)
    # bf16: write one tensor by hand, read it back widened to float32
    values = np.array([1.0, -2.5, 3.140625], np.float32)
    raw = (values.view(np.uint32) >> 16).astype(np.uint16).tobytes()
    header = json.dumps({"x": {"dtype": "BF16", "shape": [3], "data_offsets": [0, len(raw)]}}).encode()
    (tmp_path / "bf16.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + raw)
    assert read_safetensors(tmp_path / "bf16.safetensors")["x"].tolist() == values.tolist()
