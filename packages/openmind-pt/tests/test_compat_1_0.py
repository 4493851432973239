"""openMind 1.0 compatibility: the names importable from ``openmind`` and how they behave."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from openmind.core.errors import OpenMindError


def test_import_openmind_is_lazy():
    code = (
        "import sys, openmind\n"
        "from openmind import is_torch_available, is_mindspore_available, pipeline\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'eager import'\n"
        "print(is_torch_available(), is_mindspore_available())\n"
        "from openmind import AutoTokenizer\n"
        "assert 'transformers' in sys.modules\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "True"


def test_auto_classes_load_a_model_folder(llama2_dir, seq_cls_model_dir):
    import torch
    import transformers

    from openmind import (
        AutoConfig,
        AutoModel,
        AutoModelForCausalLM,
        AutoModelForSequenceClassification,
        AutoTokenizer,
        Trainer,
        TrainingArguments,
    )

    assert Trainer is transformers.Trainer and TrainingArguments is transformers.TrainingArguments
    config = AutoConfig.from_pretrained(str(llama2_dir))
    assert config.model_type == "llama" and config.hidden_size == 64
    tokenizer = AutoTokenizer.from_pretrained(str(llama2_dir))
    assert tokenizer("Hello")["input_ids"] == [1, 15043]
    model = AutoModelForCausalLM.from_pretrained(str(llama2_dir))
    assert isinstance(model, transformers.LlamaForCausalLM)
    reference = transformers.AutoModelForCausalLM.from_pretrained(str(llama2_dir))
    ids = torch.tensor([[1, 15043]])
    assert torch.equal(model(ids).logits, reference(ids).logits)
    assert isinstance(AutoModel.from_pretrained(str(llama2_dir)), transformers.LlamaModel)
    classifier = AutoModelForSequenceClassification.from_pretrained(str(seq_cls_model_dir))
    assert classifier.config.id2label[2] == "positive"


def test_pickle_refused_unless_allowed(llama2_dir, tmp_path):
    import torch
    from safetensors.torch import load_file

    from openmind import AutoModelForCausalLM

    folder = tmp_path / "pickled"
    shutil.copytree(llama2_dir, folder)
    torch.save(load_file(folder / "model.safetensors"), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    with pytest.raises(OpenMindError) as info:
        AutoModelForCausalLM.from_pretrained(str(folder))
    assert info.value.code == "OM-M102" and "allow_pickle" in info.value.hint
    with pytest.raises(OpenMindError):
        AutoModelForCausalLM.from_pretrained(str(llama2_dir), use_safetensors=False)
    model = AutoModelForCausalLM.from_pretrained(str(folder), allow_pickle=True)
    assert model.config.hidden_size == 64
    from openmind import pipeline

    chat = pipeline("chat", model=str(folder), allow_pickle=True, max_new_tokens=3, temperature=0)
    reference = pipeline("chat", model=str(llama2_dir), max_new_tokens=3, temperature=0)
    assert chat("Hi") == reference("Hi")


def test_remote_code_is_off_by_default(llama2_dir, tmp_path):
    import json

    from openmind import AutoConfig

    folder = tmp_path / "remote"
    shutil.copytree(llama2_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    config["model_type"] = "my_custom_arch"
    config["auto_map"] = {"AutoConfig": "configuration_custom.CustomConfig"}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "configuration_custom.py").write_text("raise SystemExit('remote code ran')\n")
    with pytest.raises((ValueError, OSError)) as info:
        AutoConfig.from_pretrained(str(folder))
    assert "trust_remote_code" in str(info.value)


def test_pipeline_as_in_1_0(llama2_dir):
    from openmind import pipeline

    generator = pipeline("text-generation", model=str(llama2_dir), framework="pt", max_new_tokens=4, temperature=0)
    (out,) = generator("Hello")  # 1.0: a list of one {"generated_text"} per prompt
    assert out["generated_text"].startswith("Hello") and len(out["generated_text"]) > len("Hello")
