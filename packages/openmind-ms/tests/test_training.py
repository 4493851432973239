"""MindSpore training: run folder contents, checkpoint interoperability with PyTorch (full models
and PEFT adapters), ``openmind export`` from an ms run, coded errors before step 1, and -- marked
slow -- SFT that really learns the synthetic task of the training suite (digit-string reversal in
chat format) to >= 90% held-out exact match through the chat pipeline, full and LoRA."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import openmind
from openmind.core.plugins import reset
from openmind.nlp.testing.conformance import raises_code

PROMPT = "Reverse {}"


def reversal_rows(n: int, seed: int, lo: int = 4, hi: int = 6) -> list[dict]:
    """The training suite's synthetic task (openmind-pt/tests/training/synthetic.py)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        s = "".join(rng.choice("0123456789") for _ in range(rng.randint(lo, hi)))
        rows.append(
            {"messages": [{"role": "user", "content": PROMPT.format(s)}, {"role": "assistant", "content": s[::-1]}]}
        )
    return rows


def write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def quick(**overrides):
    base = dict(
        framework="ms",
        max_steps=6,
        per_device_train_batch_size=8,
        learning_rate=3e-3,
        logging_steps=1,
        save_steps=1000,
        report_to=["none"],
        plot_loss=False,
        lr_scheduler_type="constant",
    )
    base.update(overrides)
    return base


@pytest.fixture(autouse=True)
def _fresh_plugins(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path / "cache"))
    reset()
    yield
    reset()


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    from openmind.pt.testing import tiny_llama

    return tiny_llama(
        tmp_path_factory.mktemp("tiny") / "model", hidden_size=64, layers=2, heads=4, intermediate_size=256
    )


@pytest.fixture(scope="module")
def sft_file(tmp_path_factory):
    return write_jsonl(tmp_path_factory.mktemp("data") / "sft.jsonl", reversal_rows(96, seed=0))


def torch_logits(folder, ids, adapter=None):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    if adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(adapter)).eval()
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0].numpy()


def ms_logits(folder, ids, adapter=None):
    from mindspore import Tensor

    from openmind.ms import runtime

    runtime.set_device("cpu")
    from openmind.ms.models import auto
    from openmind.ms.models.lora import adapter_deltas, add_parameters

    model, _ = auto.load(str(folder), "causal-lm")
    if adapter is not None:
        add_parameters(model, adapter_deltas(model, adapter))
    x = np.array([ids], np.int32)
    cos, sin, mask = model.prepare(np.ones_like(x), x.shape[1])
    return model(Tensor(x), cos, sin, mask)[0].asnumpy()[0]


IDS = [1, 518, 25580, 29962, 830, 3901, 29871, 29896, 29906, 29941, 29946, 518, 29914, 25580, 29962]


def test_full_sft_run_folder_loads_on_pytorch(tiny_dir, sft_file, tmp_path):
    out = tmp_path / "run"
    result = openmind.train(
        None,
        stage="sft",
        model=str(tiny_dir),
        dataset=[str(sft_file)],
        finetuning_type="full",
        output_dir=str(out),
        val_size=16,
        **quick(max_steps=12, save_steps=6, eval_steps=6, plot_loss=True),
    )
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    losses = [e["loss"] for e in log]
    assert losses[0] > 9.0 and losses[-1] < losses[0] - 3.0, losses
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["global_step"] == 12 == result.global_step and summary["final_loss"] == pytest.approx(losses[-1])
    assert summary["metrics"]["framework"] == "ms" and summary["metrics"]["data"]["train_rows"] == 80
    assert summary["eval_loss"] < 9.0 and summary["tokens"] > 12 * 8 * 15 and summary["tokens_per_second"] > 0
    assert (out / "checkpoint-6" / "openmind_checkpoint.json").is_file()
    assert (out / "checkpoint-12" / "openmind_checkpoint.json").is_file()
    assert (out / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "tokenizer.json").is_file() and (out / "chat_template.jinja").is_file()
    # the MindSpore-trained checkpoint loads on PyTorch with the same logits
    assert np.abs(torch_logits(out, IDS) - ms_logits(out, IDS)).max() < 1e-4
    assert np.abs(torch_logits(out, IDS) - torch_logits(tiny_dir, IDS)).max() > 1e-2  # it did change


def test_lora_adapter_is_peft_format_and_export_is_faithful(tiny_dir, sft_file, tmp_path):
    from openmind.core.cli.main import main

    out = tmp_path / "lora"
    openmind.train(
        None,
        stage="sft",
        model=str(tiny_dir),
        dataset=[str(sft_file)],
        finetuning_type="lora",
        lora_rank=4,
        lora_target=["q_proj", "v_proj", "gate_proj"],
        output_dir=str(out),
        **quick(max_steps=8, learning_rate=1e-2),
    )
    config = json.loads((out / "adapter_config.json").read_text())
    assert config["peft_type"] == "LORA" and config["r"] == 4 and config["lora_alpha"] == 8
    assert sorted(config["target_modules"]) == ["gate_proj", "q_proj", "v_proj"]
    assert not (out / "model.safetensors").exists()
    adapted = ms_logits(tiny_dir, IDS, adapter=out)
    # PEFT on PyTorch applies the MindSpore-trained adapter identically
    assert np.abs(torch_logits(tiny_dir, IDS, adapter=out) - adapted).max() < 1e-4
    assert np.abs(adapted - ms_logits(tiny_dir, IDS)).max() > 1e-3
    merged = tmp_path / "merged"
    code = main(["export", "--model", str(tiny_dir), "--adapter", str(out), "--out", str(merged), "--framework", "ms"])
    assert code == 0
    assert (merged / "config.json").is_file() and (merged / "tokenizer.json").is_file()
    assert np.abs(ms_logits(merged, IDS) - adapted).max() < 1e-4
    assert np.abs(torch_logits(merged, IDS) - adapted).max() < 1e-4


def test_errors_before_the_first_step(tiny_dir, sft_file, tmp_path):
    with raises_code("OM-T004") as info:
        openmind.train(
            None,
            model=str(tiny_dir),
            dataset=[str(sft_file)],
            finetuning_type="lora",
            lora_target=["c_attn"],
            output_dir=str(tmp_path / "a"),
            **quick(),
        )
    assert "q_proj" in info.value.message
    with raises_code("OM-T008"):
        openmind.train(
            None, model=str(tiny_dir), dataset=[str(sft_file)], packing=True, output_dir=str(tmp_path / "b"), **quick()
        )
    with raises_code("OM-T008"):
        openmind.train(
            None,
            model=str(tiny_dir),
            dataset=[str(sft_file)],
            finetuning_type="freeze",
            output_dir=str(tmp_path / "c"),
            **quick(),
        )
    assert not list(tmp_path.glob("*/checkpoint-*"))


TASKS = {"Reverse": lambda s: s[::-1], "Rotate": lambda s: s[1:] + s[0]}


def task_rows(task: str, n: int, seed: int, length: int = 5) -> list[dict]:
    """The training suite's tasks (openmind-pt/tests/training/synthetic.py): ``Reverse 12345`` ->
    ``54321``, ``Rotate 12345`` -> ``23451``."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        s = "".join(rng.choice("0123456789") for _ in range(length))
        rows.append(
            {"messages": [{"role": "user", "content": f"{task} {s}"}, {"role": "assistant", "content": TASKS[task](s)}]}
        )
    return rows


def exact_match(rows, **pipeline_kwargs) -> float:
    chat = openmind.pipeline("chat", framework="ms", **pipeline_kwargs)
    outs = chat([r["messages"][:1] for r in rows], max_new_tokens=10, do_sample=False, batch_size=25)
    return sum(o["content"].strip() == r["messages"][1]["content"] for o, r in zip(outs, rows, strict=True)) / len(rows)


def held_out(task: str, train: list[dict], n: int = 100) -> list[dict]:
    seen = {r["messages"][0]["content"] for r in train}
    return [r for r in task_rows(task, 3 * n, seed=999) if r["messages"][0]["content"] not in seen][:n]


@pytest.mark.slow
def test_full_sft_then_lora_learn_through_the_chat_pipeline(tmp_path):
    """The PyTorch suite's "it really learns" test (test_learns.py), same data and hyper-parameters, on MindSpore."""
    from openmind.pt.testing import tiny_llama

    base = tiny_llama(tmp_path / "base", hidden_size=64, layers=2, heads=4)
    reverse = task_rows("Reverse", 3000, seed=1)
    test = held_out("Reverse", reverse)
    assert exact_match(test, model=str(base)) <= 0.02
    full = tmp_path / "full"
    result = openmind.train(
        None,
        model=str(base),
        dataset=[str(write_jsonl(tmp_path / "reverse.jsonl", reverse))],
        finetuning_type="full",
        output_dir=str(full),
        **quick(
            max_steps=400,
            per_device_train_batch_size=16,
            learning_rate=5e-3,
            warmup_ratio=0.05,
            lr_scheduler_type="cosine",
        ),
    )
    assert result.final_loss < 0.2
    assert exact_match(test, model=str(full)) >= 0.9

    rotate = task_rows("Rotate", 2000, seed=5)
    rotate_test = held_out("Rotate", rotate)
    assert exact_match(rotate_test, model=str(full)) <= 0.05  # the base reverses instead
    lora = tmp_path / "lora"
    openmind.train(
        None,
        model=str(full),
        dataset=[str(write_jsonl(tmp_path / "rotate.jsonl", rotate))],
        finetuning_type="lora",
        lora_rank=16,
        output_dir=str(lora),
        **quick(
            max_steps=150,
            per_device_train_batch_size=16,
            learning_rate=1e-2,
            warmup_ratio=0.05,
            lr_scheduler_type="cosine",
        ),
    )
    assert exact_match(rotate_test, model=str(full), adapter=str(lora)) >= 0.9
    merged = tmp_path / "merged"
    from openmind.core.cli.main import main

    assert (
        main(["export", "--model", str(full), "--adapter", str(lora), "--out", str(merged), "--framework", "ms"]) == 0
    )
    assert exact_match(rotate_test, model=str(merged)) >= 0.9
