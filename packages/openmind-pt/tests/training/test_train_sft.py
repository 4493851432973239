"""sft / pt on the tiny model: outputs of a run, finetuning types, accumulation, packing, early stop."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import quick
from safetensors.torch import load_file

import openmind
from openmind.core import args as A


def test_full_sft_run_folder_has_everything(tiny_dir, sft_file, tmp_path):
    out = tmp_path / "run"
    result = openmind.train(
        None,
        stage="sft",
        model=str(tiny_dir),
        dataset=[str(sft_file)],
        finetuning_type="full",
        output_dir=str(out),
        val_size=16,
        **quick(max_steps=8, report_to=["tensorboard"], plot_loss=True, logging_steps=2, eval_steps=4, save_steps=4),
    )
    # it learns something: the loss goes down from ln(32000) ~ 10.4
    history = json.loads((out / "checkpoint-8" / "trainer_state.json").read_text())["log_history"]
    losses = [h["loss"] for h in history if "loss" in h]
    assert losses[0] > 9.0 and losses[-1] < losses[0] - 1.5, losses
    evals = [h["eval_loss"] for h in history if "eval_loss" in h]
    assert len(evals) == 2 and evals[1] < evals[0]
    # summary JSON: steps, tokens, time, final loss, peak memory
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["global_step"] == 8 and result.global_step == 8
    assert summary["final_loss"] == pytest.approx(losses[-1])
    assert summary["eval_loss"] == pytest.approx(result.eval_loss) and summary["eval_loss"] < 9.0
    assert summary["tokens"] > 8 * 8 * 15 and summary["seconds"] > 0 and summary["tokens_per_second"] > 0
    assert summary["peak_memory_mb"] > 0
    assert summary["metrics"]["data"]["train_rows"] == 144
    # loss-curve PNG, TensorBoard events, resolved arguments, two complete checkpoints
    assert (out / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert list((out / "runs").rglob("events.out.tfevents.*"))
    saved = A.load_run(out)
    assert saved["stage"] == "sft" and saved["model"] == str(tiny_dir) and saved["learning_rate"] == 3e-3
    assert (out / "checkpoint-4" / "openmind_checkpoint.json").is_file()
    assert (out / "checkpoint-8" / "openmind_checkpoint.json").is_file()
    # the run folder is a model: config, safetensors weights, tokenizer, chat template
    assert (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file()
    assert (out / "chat_template.jinja").is_file()
    assert not list(out.glob("pytorch_model*.bin"))


def test_tokens_counted_are_the_non_padding_tokens(tiny_dir, sft_file, tmp_path):
    from datasets import load_dataset

    out = tmp_path / "run"
    result = openmind.train(
        None,
        model=str(tiny_dir),
        dataset=[str(sft_file)],
        finetuning_type="full",
        output_dir=str(out),
        **quick(max_steps=20, per_device_train_batch_size=16),  # 20 x 16 = 320 rows = 2 epochs of 160
    )
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_dir)
    rows = load_dataset("json", data_files=str(sft_file), split="train")
    expected = sum(len(tok.apply_chat_template(r["messages"], tokenize=True)["input_ids"]) for r in rows)
    assert result.tokens == 2 * expected


def test_freeze_trains_only_the_last_layers(tiny_dir, sft_file, tmp_path):
    out = tmp_path / "run"
    openmind.train(
        None,
        model=str(tiny_dir),
        dataset=[str(sft_file)],
        finetuning_type="freeze",
        freeze_trainable_layers=1,
        output_dir=str(out),
        **quick(max_steps=2),
    )
    before, after = load_file(tiny_dir / "model.safetensors"), load_file(out / "model.safetensors")
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and all(k.startswith("model.layers.1.") for k in changed), changed
    assert any("model.layers.1.self_attn.q_proj" in k for k in changed)


@pytest.mark.parametrize("switches", [{}, {"use_dora": True}, {"use_rslora": True}])
def test_lora_writes_an_adapter_with_group_targets(tiny_dir, sft_file, tmp_path, switches):
    out = tmp_path / "run"
    result = openmind.train(
        None,
        model=str(tiny_dir),
        dataset=[str(sft_file)],
        finetuning_type="lora",
        lora_rank=4,
        output_dir=str(out),
        **quick(max_steps=3),
        **switches,
    )
    config = json.loads((out / "adapter_config.json").read_text())
    assert config["r"] == 4 and config["lora_alpha"] == 8
    assert config["use_dora"] is bool(switches.get("use_dora"))
    assert config["use_rslora"] is bool(switches.get("use_rslora"))
    assert set(config["target_modules"]) >= {"q_proj", "v_proj"}
    weights = load_file(out / "adapter_model.safetensors")
    assert any("lora_B" in k and v.abs().sum() > 0 for k, v in weights.items())  # B starts at 0: it moved
    assert not (out / "model.safetensors").exists()
    assert result.metrics["trainable_params"] < result.metrics["total_params"] / 10


def test_lora_runs_are_reproducible_whatever_ran_before(tiny_dir, sft_file, tmp_path):
    # LoRA matrices are initialised before the Trainer seeds: they must not depend on how much of
    # the global random stream the process used before (it made "it learns" pass or fail by history)
    adapters = []
    for name, noise in (("a", 0), ("b", 1000)):
        torch.rand(noise)
        out = tmp_path / name
        openmind.train(
            None,
            model=str(tiny_dir),
            dataset=[str(sft_file)],
            finetuning_type="lora",
            lora_rank=4,
            output_dir=str(out),
            **quick(max_steps=2),
        )
        adapters.append(load_file(out / "adapter_model.safetensors"))
    assert adapters[0].keys() == adapters[1].keys()
    for key, value in adapters[0].items():
        assert torch.equal(value, adapters[1][key]), key


def test_gradient_accumulation_matches_the_big_batch(tiny_dir, sft_file, tmp_path):
    curves = []
    for name, bs, ga in (("big", 8, 1), ("acc", 4, 2)):
        openmind.train(
            None,
            model=str(tiny_dir),
            dataset=[str(sft_file)],
            finetuning_type="full",
            output_dir=str(tmp_path / name),
            per_device_train_batch_size=bs,
            gradient_accumulation_steps=ga,
            **{k: v for k, v in quick(max_steps=4, save_steps=4).items() if k != "per_device_train_batch_size"},
        )
        history = json.loads((tmp_path / name / "checkpoint-4" / "trainer_state.json").read_text())["log_history"]
        curves.append([h["loss"] for h in history if "loss" in h])
    assert curves[0] == pytest.approx(curves[1], abs=1e-4)


def test_sparse_logits_loss_equals_the_model_loss(tiny_dir):
    """openmind's loss (logits only where trained) is transformers' loss, values and gradients."""
    from transformers import AutoModelForCausalLM

    from openmind.pt.training.hf import causal_lm_loss

    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    torch.manual_seed(0)
    ids = torch.randint(3, 32000, (3, 12))
    labels = ids.clone()
    labels[:, :5] = -100
    labels[1, 9:] = -100
    reference = model(input_ids=ids, labels=labels).loss
    ref_grad = torch.autograd.grad(reference, model.lm_head.weight)[0]
    loss, _, normalised = causal_lm_loss(model, {"input_ids": ids, "labels": labels})
    grad = torch.autograd.grad(loss, model.lm_head.weight)[0]
    assert not normalised
    assert loss.item() == pytest.approx(reference.item(), abs=1e-5)
    assert torch.allclose(grad, ref_grad, atol=1e-6)


@pytest.mark.parametrize("chunk", [None, 5, 4096])
def test_fused_linear_cross_entropy_equals_torch(chunk):
    """The fused projection + cross-entropy (gradients computed chunk by chunk in the forward pass)
    gives torch's loss and gradients for the hidden states and for a trained weight."""
    from openmind.pt.training.hf import linear_cross_entropy

    torch.manual_seed(0)
    hidden = torch.randn(37, 16, requires_grad=True)
    weight = (torch.randn(1000, 16) * 0.3).requires_grad_(True)
    targets = torch.randint(0, 1000, (37,))
    targets[3] = targets[4]  # a repeated target: its weight row gets both contributions
    reference = torch.nn.functional.cross_entropy(hidden @ weight.t(), targets, reduction="sum")
    ref_h, ref_w = torch.autograd.grad(reference * 0.5, (hidden, weight))
    loss = linear_cross_entropy(hidden, weight, targets, chunk)
    grad_h, grad_w = torch.autograd.grad(loss * 0.5, (hidden, weight))
    assert abs(loss.item() - reference.item()) <= 1e-6 * reference.item()
    assert torch.allclose(grad_h, ref_h, atol=1e-6, rtol=0)
    assert torch.allclose(grad_w, ref_w, atol=1e-6, rtol=0)
    with torch.no_grad():  # evaluation: the loss only
        assert linear_cross_entropy(hidden, weight, targets, chunk).item() == pytest.approx(loss.item(), abs=0)


def test_fused_loss_equals_the_unfused_loss_with_lora(tiny_dir):
    """With LoRA on every linear layer the fused loss and the logits path give the same loss and the
    same adapter gradients; a model whose logits are transformed after lm_head is not fused."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from openmind.pt.training.hf import causal_lm_loss, fusable_output

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    model = get_peft_model(model, LoraConfig(r=4, target_modules="all-linear", init_lora_weights=False))
    assert fusable_output(model) is model.base_model.model.lm_head
    ids = torch.randint(3, 32000, (2, 10))
    labels = ids.clone()
    labels[:, :4] = -100
    params = [p for p in model.parameters() if p.requires_grad]
    losses, grads = [], []
    for fused in (False, True):
        loss, _, _ = causal_lm_loss(model, {"input_ids": ids, "labels": labels}, fused=fused)
        losses.append(loss.item())
        grads.append(torch.autograd.grad(loss, params))
    assert abs(losses[0] - losses[1]) <= 1e-6 * losses[0]
    assert all(torch.allclose(a, b, atol=1e-6, rtol=1e-5) for a, b in zip(*grads))
    model.base_model.model.config.final_logit_softcapping = 30.0
    assert fusable_output(model) is None


@pytest.mark.parametrize("attention", ["sdpa", "flash_attention_2"])
def test_packing_gives_the_loss_of_the_separate_samples(tiny_dir, sft_file, attention):
    """Packed rows (position_ids restart per sample) see no other sample: kept as rows of
    cutoff_len for sdpa, flattened into one padding-free row for flash attention's varlen kernels
    (checked here on sdpa, which reads the same position restarts)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from openmind.nlp.templates import resolve_template
    from openmind.nlp.training.base import SFTWrapper
    from openmind.pt.training.data import TOKENS_KEY, build_datasets
    from openmind.pt.training.hf import causal_lm_loss

    ns = SFTWrapper.resolve(None, dict(model=str(tiny_dir), dataset=[str(sft_file)], packing=True, cutoff_len=64))
    tok = AutoTokenizer.from_pretrained(tiny_dir)
    tok.pad_token = tok.eos_token
    template = resolve_template(None, model_dir=str(tiny_dir), tokenizer=tok)
    packed = build_datasets(ns, tok, template, "sft", quiet=True)
    packed.use_attention(attention)
    assert packed.packed and packed.stats["train_rows"] < 160
    ns.data.packing = False
    plain = build_datasets(ns, tok, template, "sft", quiet=True)
    by_ids = {tuple(r["input_ids"]): r for r in plain.train}
    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    features = [packed.train[0], packed.train[1]]
    batch = packed.collator(features)
    assert "attention_mask" not in batch
    assert int(batch.pop(TOKENS_KEY)) == sum(len(f["input_ids"]) for f in features)
    assert batch["input_ids"].shape[0] == (1 if attention.startswith("flash") else 2)
    with torch.no_grad():
        packed_loss, _, _ = causal_lm_loss(model, dict(batch), num_items_in_batch=None)
        total, count, samples = 0.0, 0, 0
        for feature in features:  # the same samples one by one: mean over their trained tokens
            ids, pos = feature["input_ids"], feature["position_ids"]
            starts = [i for i, p in enumerate(pos) if p == 0] + [len(ids)]
            for a, b in zip(starts, starts[1:]):
                row = by_ids[tuple(ids[a:b])]
                labels = torch.tensor([row["labels"]])
                out = model(input_ids=torch.tensor([row["input_ids"]]), labels=labels)
                k = int((labels[:, 1:] != -100).sum())
                total, count, samples = total + out.loss.item() * k, count + k, samples + 1
    assert samples >= 4
    assert packed_loss.item() == pytest.approx(total / count, abs=1e-4)


def test_pretraining_on_text(tiny_dir, pt_file, tmp_path):
    result = openmind.train(
        None,
        stage="pt",
        model=str(tiny_dir),
        dataset=[str(pt_file)],
        finetuning_type="full",
        packing=True,
        cutoff_len=128,
        output_dir=str(tmp_path / "run"),
        **quick(max_steps=6),
    )
    assert result.stage == "pt" and result.final_loss < 9.0


def test_early_stopping_stops_when_eval_loss_stalls(tiny_dir, sft_file, tmp_path):
    result = openmind.train(
        None,
        model=str(tiny_dir),
        dataset=[str(sft_file)],
        finetuning_type="full",
        val_size=8,
        early_stopping_patience=1,
        output_dir=str(tmp_path / "run"),
        **quick(max_steps=40, learning_rate=1e-12, save_steps=2, lr_scheduler_type="constant"),
    )
    # eval loss cannot improve with a zero-ish learning rate: stop after the patience is used up
    assert result.global_step == 4
