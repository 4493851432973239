from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    from openmind.pt.testing import tiny_llama

    return str(tiny_llama(tmp_path_factory.mktemp("serve") / "tiny-llama", seed=1))


@pytest.fixture(scope="session")
def lora_adapter(tiny_model, tmp_path_factory):
    """A LoRA adapter with non-zero weights (so it changes the output), saved as safetensors."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(3)
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    peft_model = get_peft_model(
        model, LoraConfig(r=4, lora_alpha=64, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    )
    folder = tmp_path_factory.mktemp("adapter") / "lora-a"
    peft_model.save_pretrained(folder, safe_serialization=True)
    return str(folder)


def build(model: str, **deploy):
    from openmind.core.args import parse
    from openmind.nlp.serve.pipeline_engine import build_engine

    overrides = {"model": model, "framework": "pt", "device": "cpu", **deploy}
    return build_engine(parse(["model", "template", "deploy"], overrides=overrides))
