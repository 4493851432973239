"""openMind 1.0 / transformers ``pipeline()`` keywords and attributes on openmind's ``pipeline()``."""

from __future__ import annotations

import pytest

from openmind.core.errors import OpenMindError


def test_transformers_keywords_and_attributes(llama2_dir):
    import torch
    import transformers

    from openmind import pipeline

    pipe = pipeline(
        "text-generation",
        model=str(llama2_dir),
        torch_dtype=torch.bfloat16,
        device_map="cpu",
        model_kwargs={"trust_remote_code": False},
        backend="transformers",
        framework="pytorch",
    )
    assert pipe.task == "text-generation"
    assert isinstance(pipe.model, transformers.LlamaForCausalLM) and pipe.model.dtype == torch.bfloat16
    assert pipe.model.device.type == "cpu"
    assert pipe.tokenizer("Hello")["input_ids"] == [1, 15043]
    pipe = pipeline("text-generation", model=str(llama2_dir), dtype="float32", device=-1)
    assert pipe.model.dtype == torch.float32


def test_model_and_tokenizer_objects_give_the_same_output_as_the_folder(llama2_dir):
    import transformers

    from openmind import pipeline

    model = transformers.AutoModelForCausalLM.from_pretrained(str(llama2_dir))
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(llama2_dir))
    from_objects = pipeline("text-generation", model=model, tokenizer=tokenizer, device="cpu", dtype=model.dtype)
    from_folder = pipeline("text-generation", model=str(llama2_dir), device="cpu", dtype="float32")
    a = from_objects("Hello there", max_new_tokens=6, do_sample=False)
    b = from_folder("Hello there", max_new_tokens=6, do_sample=False)
    assert a == b
    # and the same greedy tokens as transformers' own generate on the same weights
    ids = tokenizer("Hello there", return_tensors="pt")
    ref = model.generate(**ids, max_new_tokens=6, do_sample=False)
    assert a == [{"generated_text": tokenizer.decode(ref[0], skip_special_tokens=True)}]


def test_config_must_be_the_models_own_and_bad_keywords_are_coded(llama2_dir, tmp_path):
    import json

    from openmind import pipeline

    pipeline("text-generation", model=str(llama2_dir), config=str(llama2_dir), device="cpu")
    other = json.loads((llama2_dir / "config.json").read_text())
    other["hidden_size"] = 128
    (tmp_path / "config.json").write_text(json.dumps(other))
    for kwargs, where in (
        ({"config": str(tmp_path)}, "config"),
        ({"backend": "vllm"}, "backend"),
        ({"torch_dtype": "int3"}, "dtype"),
        ({"model_kwargs": {"attn_implementation": "eager"}}, "model_kwargs"),
        ({"device_map": {"": 0}}, "device_map"),
    ):
        with pytest.raises(OpenMindError) as info:
            pipeline("text-generation", model=str(llama2_dir), **kwargs)
        assert info.value.code == "OM-A002" and info.value.location == where, kwargs
