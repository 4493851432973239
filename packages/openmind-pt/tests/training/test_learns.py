"""It really learns: a tiny model (hidden 64, 2 layers) with the real 32k Llama-2 tokenizer goes
from ~0% to >= 90% exact match on held-out prompts, measured through the chat pipeline.

1. full SFT from random weights on ``Reverse 12345`` -> ``54321``;
2. LoRA on that base (trained first, on the related reversal task) for a new mapping,
   ``Rotate 12345`` -> ``23451``, which the base gets wrong.
"""

from __future__ import annotations

import pytest
from conftest import write_jsonl
from synthetic import task_rows

import openmind

pytestmark = pytest.mark.slow


def exact_match(rows, **pipeline_kwargs) -> float:
    chat = openmind.pipeline("chat", **pipeline_kwargs)
    outs = chat([r["messages"][:1] for r in rows], max_new_tokens=10, do_sample=False, batch_size=25)
    hits = sum(o["content"].strip() == r["messages"][1]["content"] for o, r in zip(outs, rows))
    return hits / len(rows)


def held_out(task: str, train: list[dict], n: int = 100) -> list[dict]:
    seen = {r["messages"][0]["content"] for r in train}
    rows = [r for r in task_rows(task, 3 * n, seed=999) if r["messages"][0]["content"] not in seen]
    return rows[:n]


def test_full_sft_then_lora_learn_through_the_chat_pipeline(tmp_path):
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
        max_steps=400,
        per_device_train_batch_size=16,
        learning_rate=5e-3,
        warmup_ratio=0.05,
        lr_scheduler_type="cosine",
        logging_steps=50,
        save_steps=10_000,
        report_to=["none"],
    )
    assert result.final_loss < 0.2
    assert exact_match(test, model=str(full)) >= 0.9  # the run folder is the model

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
        max_steps=150,
        per_device_train_batch_size=16,
        learning_rate=1e-2,
        warmup_ratio=0.05,
        lr_scheduler_type="cosine",
        logging_steps=50,
        save_steps=10_000,
        report_to=["none"],
    )
    assert exact_match(rotate_test, model=str(full), adapter=str(lora)) >= 0.9
    # the merged export answers the same
    from openmind.core.args import parse
    from openmind.nlp.training.cli import run_export

    merged = tmp_path / "merged"
    run_export(parse(("model", "export"), overrides={"adapter": str(lora), "out": str(merged)}))
    assert exact_match(rotate_test, model=str(merged)) >= 0.9
