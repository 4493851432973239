"""PyTorch-specific behaviour: devices, dtypes, LoRA adapters, pipeline selection."""

from __future__ import annotations

import pytest
import torch

from openmind.core.errors import OpenMindError


@pytest.fixture(scope="module")
def adapter_dir(llama2_dir, tmp_path_factory):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(str(llama2_dir))
    torch.manual_seed(3)
    config = LoraConfig(r=4, lora_alpha=64, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    model = get_peft_model(base, config)
    folder = tmp_path_factory.mktemp("adapter")
    model.save_pretrained(folder)
    return folder


def test_lora_adapter_matches_peft(llama2_dir, adapter_dir):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from openmind import pipeline

    chat = pipeline("chat", model=str(llama2_dir), adapter=str(adapter_dir), max_new_tokens=8, temperature=0)
    ids = chat.prompt([{"role": "user", "content": "Hi"}], {})
    ours = chat.generate("Hi")[0].token_ids
    peft_model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(str(llama2_dir)), str(adapter_dir))
    with torch.inference_mode():
        reference = peft_model.generate(torch.tensor([ids]), max_new_tokens=8, do_sample=False)[0, len(ids) :]
    assert ours == reference.tolist()[: len(ours)]
    base = pipeline("chat", model=str(llama2_dir), max_new_tokens=8, temperature=0).generate("Hi")[0].token_ids
    assert base != ours
    # the base model without the adapter, and the same adapter loaded again under a name
    assert chat.backend.generate([ids], chat.defaults, adapter="")[0].token_ids == base
    chat.backend.add_adapter("again", str(adapter_dir))
    assert chat.backend.generate([ids], chat.defaults, adapter="again")[0].token_ids == ours
    with pytest.raises(OpenMindError) as info:
        chat.backend.generate([ids], chat.defaults, adapter="nope")
    assert info.value.code == "OM-I102"


def test_bad_adapter_folder(llama2_dir, tmp_path):
    from openmind import pipeline

    with pytest.raises(OpenMindError) as info:
        pipeline("chat", model=str(llama2_dir), adapter=str(tmp_path))
    assert info.value.code == "OM-M103"


def test_device_and_dtype(llama2_dir):
    from openmind import pipeline
    from openmind.pt.device import resolve_device, resolve_dtype

    assert resolve_dtype("auto", "cpu") == torch.float32
    assert resolve_dtype("bfloat16", "cpu") == torch.bfloat16
    chat = pipeline("chat", model=str(llama2_dir), device="cpu", dtype="bfloat16", max_new_tokens=3, temperature=0)
    assert chat.backend.model.dtype == torch.bfloat16 and chat.selection["dtype"] == "bfloat16"
    assert isinstance(chat("Hi")["content"], str)
    if not torch.cuda.is_available():
        with pytest.raises(OpenMindError) as info:
            resolve_device("cuda:0")
        assert info.value.code == "OM-V001"
    with pytest.raises(OpenMindError) as info:
        resolve_device("tpu")
    assert info.value.code == "OM-V001"


def test_framework_selection_is_reported(llama2_dir, caplog):
    import logging

    from openmind import pipeline

    with caplog.at_level(logging.INFO, logger="openmind"):
        chat = pipeline("chat", model=str(llama2_dir), framework="pt")
    assert chat.selection["framework"] == "pt" and chat.selection["backend"] == "transformers"
    assert "framework pt" in caplog.text
    with pytest.raises(OpenMindError) as info:
        pipeline("chat", model=str(llama2_dir), framework="tensorflow")
    assert info.value.code == "OM-A002"


def test_prompt_longer_than_the_model(llama2_dir):
    from openmind import pipeline

    chat = pipeline("chat", model=str(llama2_dir), max_new_tokens=2)
    with pytest.raises(OpenMindError) as info:
        chat("word " * 2100)
    assert info.value.code == "OM-I103"


def test_every_nlp_inference_task_has_a_pt_pipeline():
    from openmind.core.plugins import get_registry
    from openmind.core.specs import PipelineSpec

    registry = get_registry()
    inference = {t.name for t in registry.tasks() if t.kind_of == "inference" and t.component.plugin == "nlp"}
    pt = {p.task: p for p in registry.all(PipelineSpec) if p.framework == "pt"}
    assert len(inference) >= 8 and inference <= set(pt)
    for task in inference:
        assert pt[task].load().framework == "pt"
