"""PyTorch <-> MindSpore on the same checkpoints, in one process (both frameworks installed).

* the chat pipeline gives identical greedy tokens on pt and ms (tiny Llama, real 32k tokenizers);
* the real MiniLM embeds within 1e-4 cosine of PyTorch;
* Qwen2-style (qkv bias, grouped-query attention) logits equal transformers';
* LoRA adapters cross over in PEFT's format both ways; ``framework="auto"`` is deterministic.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import openmind
from openmind.nlp.testing.conformance import CONVERSATIONS


@pytest.mark.parametrize("name", ["llama2", "mistral"])
def test_chat_greedy_tokens_identical_on_pt_and_ms(name, request):
    folder = str(request.getfixturevalue(f"{name}_dir"))
    pt = openmind.pipeline("chat", model=folder, framework="pt", max_new_tokens=16, temperature=0)
    ms = openmind.pipeline("chat", model=folder, framework="ms", max_new_tokens=16, temperature=0)
    assert ms.backend.describe()["framework"] == "ms" and pt.backend.describe()["framework"] == "pt"
    for conversation in CONVERSATIONS:
        assert ms.prompt(conversation, {}) == pt.prompt(conversation, {})
        got, want = ms.generate([conversation])[0], pt.generate([conversation])[0]
        assert got.token_ids == want.token_ids and len(got.token_ids) > 0
        assert got.text == want.text and got.finish_reason == want.finish_reason
    batched = [g.token_ids for g in ms.generate(CONVERSATIONS, batch_size=5)]
    assert batched == [g.token_ids for g in pt.generate(CONVERSATIONS, batch_size=5)]


def test_minilm_embeddings_match_pytorch(minilm_dir):
    sentences = ["A man is eating food.", "The new movie is awesome.", "short", "A monkey is playing drums today."]
    pt = openmind.pipeline("text2emb", model=str(minilm_dir), framework="pt")(sentences, batch_size=4)
    ms = openmind.pipeline("text2emb", model=str(minilm_dir), framework="ms")(sentences, batch_size=4)
    for a, b in zip(pt, ms, strict=True):
        a, b = np.array(a), np.array(b)
        cosine = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
        assert cosine == pytest.approx(1.0, abs=1e-4)
        assert np.abs(a - b).max() < 1e-4


def test_qwen2_layout_logits_match_transformers(tmp_path):
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from openmind.ms import runtime

    runtime.set_device("cpu")
    from mindspore import Tensor

    from openmind.ms.models import auto

    cfg = Qwen2Config(
        vocab_size=500,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=True,
    )
    torch.manual_seed(3)
    reference = Qwen2ForCausalLM(cfg).eval()
    reference.save_pretrained(tmp_path, safe_serialization=True)
    model, _ = auto.load(tmp_path, "causal-lm")
    ids = np.array([[5, 17, 42, 99, 3, 7, 250, 11]], np.int32)
    cos, sin, mask = model.prepare(np.ones_like(ids), ids.shape[1])
    got = model(Tensor(ids), cos, sin, mask)[0].asnumpy()
    with torch.no_grad():
        want = reference(torch.tensor(ids, dtype=torch.long)).logits.numpy()
    assert np.abs(got - want).max() < 1e-4


def test_peft_adapter_from_pytorch_applies_on_mindspore(llama2_dir, tmp_path):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(str(llama2_dir))
    peft_model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "down_proj"]))
    torch.manual_seed(1)
    with torch.no_grad():
        for name, param in peft_model.named_parameters():
            if "lora_B" in name:
                param.normal_(0, 0.5)  # a non-trivial adapter (B starts at zero)
    peft_model.save_pretrained(tmp_path / "adapter")
    conversation = CONVERSATIONS[1]
    ms = openmind.pipeline(
        "chat",
        model=str(llama2_dir),
        framework="ms",
        adapter=str(tmp_path / "adapter"),
        max_new_tokens=8,
        temperature=0,
    )
    ids = ms.prompt(conversation, {})
    with torch.no_grad():
        want = peft_model.eval().generate(torch.tensor([ids]), max_new_tokens=8, do_sample=False)[0, len(ids) :]
    plain = openmind.pipeline("chat", model=str(llama2_dir), framework="ms", max_new_tokens=8, temperature=0)
    got = ms.generate([conversation])[0].token_ids
    assert got == [t for t in want.tolist() if t != 2][: len(got)]
    assert got != plain.generate([conversation])[0].token_ids


def test_auto_framework_is_deterministic_and_says_which(llama2_dir, caplog):
    from openmind.core.frameworks import resolve_framework

    framework, reason = resolve_framework("auto", ["pt", "ms"])
    assert (framework, reason) == ("pt", "framework pt (auto: first installed of pt, ms)")
    assert resolve_framework("auto", ["ms"])[0] == "ms"
    chat = openmind.pipeline("chat", model=str(llama2_dir), max_new_tokens=2)
    assert chat.backend.describe()["framework"] == "pt"


def test_ms_runs_beside_an_imported_torch(llama2_dir):
    import sys

    assert "torch" in sys.modules and "mindspore" in sys.modules  # both loaded in this process
    chat = openmind.pipeline("chat", model=str(llama2_dir), framework="ms", max_new_tokens=3, temperature=0)
    assert chat.generate(["Hi"])[0].completion_tokens == 3
    info = json.loads(json.dumps(chat.backend.describe()))
    assert info["backend"] == "native" and info["device"] == "CPU"
