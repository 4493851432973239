"""Export (LoRA merged into the base: same logits), DPO and reward-model stages."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import quick

import openmind
from openmind.core.cli.main import main


@pytest.fixture(scope="module")
def lora_run(tiny_dir, sft_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("lora") / "run"
    openmind.train(
        None,
        model=str(tiny_dir),
        dataset=[str(sft_file)],
        finetuning_type="lora",
        lora_rank=8,
        output_dir=str(out),
        **quick(max_steps=4, learning_rate=2e-2),
    )
    return out


def test_export_merges_lora_faithfully(tiny_dir, lora_run, tmp_path, monkeypatch):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    monkeypatch.setenv("OPENMIND_LOCAL_HUB", str(mirror))
    out = tmp_path / "merged"
    # the base model comes from the run's saved arguments; small shards to exercise sharding
    code = main(
        ["export", "--adapter", str(lora_run), "--out", str(out), "--max-shard-size", "5MB", "--push", "local::me/m"]
    )
    assert code == 0
    shards = sorted(out.glob("model-*.safetensors"))
    assert len(shards) >= 2 and (out / "model.safetensors.index.json").is_file()
    assert (out / "tokenizer.json").is_file() and (out / "chat_template.jinja").is_file()
    assert not (out / "adapter_config.json").exists()
    ids = torch.tensor([[1, 518, 25580, 29962, 830, 3901, 29871, 29896, 29906, 29941]])
    base = AutoModelForCausalLM.from_pretrained(tiny_dir)
    adapted = PeftModel.from_pretrained(base, str(lora_run)).eval()
    merged = AutoModelForCausalLM.from_pretrained(out).eval()
    with torch.no_grad():
        a, m = adapted(input_ids=ids).logits, merged(input_ids=ids).logits
        plain = AutoModelForCausalLM.from_pretrained(tiny_dir)(input_ids=ids).logits
    assert (a - plain).abs().max() > 1e-3  # the adapter does change the model
    assert torch.allclose(a, m, atol=1e-4)
    tok = AutoTokenizer.from_pretrained(out)
    assert tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False) == "<s>[INST] hi [/INST]"
    # --push went through the hub plugin (the local hub here)
    assert sorted(p.name for p in (mirror / "me" / "m").iterdir()) == sorted(p.name for p in out.iterdir())


def test_export_refuses_a_non_adapter(tiny_dir, tmp_path):
    from openmind.core.args import parse
    from openmind.core.errors import OpenMindError
    from openmind.nlp.training.cli import run_export

    ns = parse(
        ("model", "export"), overrides={"model": str(tiny_dir), "adapter": str(tiny_dir), "out": str(tmp_path / "o")}
    )
    with pytest.raises(OpenMindError) as info:
        run_export(ns)
    assert info.value.code == "OM-T010"


def _margin(model_dir, tok_dir, adapter, rows):
    """Mean log-prob(chosen) - log-prob(rejected) of the answers under the model."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tok_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    if adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(adapter)).eval()
    total = 0.0
    for row in rows:
        prompt = tok.apply_chat_template(row["messages"], tokenize=False, add_generation_prompt=True)
        scores = []
        for answer in (row["chosen"], row["rejected"]):
            full = tok.apply_chat_template(row["messages"] + [{"role": "assistant", "content": answer}], tokenize=False)
            p = tok(prompt, add_special_tokens=False)["input_ids"]
            ids = torch.tensor([tok(full, add_special_tokens=False)["input_ids"]])
            with torch.no_grad():
                logp = model(input_ids=ids).logits.log_softmax(-1)[0, :-1]
            target = ids[0, 1:]
            scores.append(logp[len(p) - 1 :].gather(-1, target[len(p) - 1 :, None]).sum().item())
        total += scores[0] - scores[1]
    return total / len(rows)


@pytest.mark.parametrize("loss", ["sigmoid", "ipo"])
def test_dpo_raises_the_chosen_rejected_margin(tiny_dir, pref_file, tmp_path, loss):
    rows = [json.loads(line) for line in pref_file.read_text().splitlines()][:24]
    before = _margin(tiny_dir, tiny_dir, None, rows)
    out = tmp_path / "dpo"
    result = openmind.train(
        None,
        stage="dpo",
        model=str(tiny_dir),
        dataset=[str(pref_file)],
        finetuning_type="lora",
        pref_loss=loss,
        pref_beta=0.1,
        output_dir=str(out),
        **quick(max_steps=8, learning_rate=1e-2),
    )
    after = _margin(tiny_dir, tiny_dir, out, rows)
    assert result.stage == "dpo" and (out / "adapter_config.json").is_file()
    assert after > before + 1.0, (before, after)
    margins = [h["rewards/margins"] for h in result.history if "rewards/margins" in h]
    assert len(margins) == 8 and margins[-1] > margins[0] + 0.2  # trl's own reward margin, beta-scaled


def test_reward_model_learns_to_rank(tiny_dir, pref_file, tmp_path):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    out = tmp_path / "rm"
    openmind.train(
        None,
        stage="rm",
        model=str(tiny_dir),
        dataset=[str(pref_file)],
        finetuning_type="full",
        output_dir=str(out),
        **quick(max_steps=12, learning_rate=3e-3),
    )
    tok = AutoTokenizer.from_pretrained(out)
    model = AutoModelForSequenceClassification.from_pretrained(out).eval()
    rows = [json.loads(line) for line in pref_file.read_text().splitlines()][:32]
    right = 0
    for row in rows:
        scores = []
        for answer in (row["chosen"], row["rejected"]):
            text = tok.apply_chat_template(row["messages"] + [{"role": "assistant", "content": answer}], tokenize=False)
            with torch.no_grad():
                scores.append(model(**tok(text, return_tensors="pt", add_special_tokens=False)).logits[0, 0].item())
        right += scores[0] > scores[1]
    assert right / len(rows) >= 0.8
