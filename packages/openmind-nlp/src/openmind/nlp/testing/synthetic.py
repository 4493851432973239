"""Synthetic tasks the training suites of every framework generate -- digit-string reversal in
chat format (sft), the same mapping as plain text (pt), preference pairs (dpo / rm) -- and the
"it really learns" procedure both the PyTorch and the MindSpore suites run (:func:`learns`)."""

from __future__ import annotations

import json
import random
from pathlib import Path

PROMPT = "Reverse {}"


def digits(rng: random.Random, lo: int = 4, hi: int = 6) -> str:
    return "".join(rng.choice("0123456789") for _ in range(rng.randint(lo, hi)))


def reversal_rows(n: int, seed: int, lo: int = 4, hi: int = 6) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        s = digits(rng, lo, hi)
        rows.append(
            {"messages": [{"role": "user", "content": PROMPT.format(s)}, {"role": "assistant", "content": s[::-1]}]}
        )
    return rows


TASKS = {
    "Reverse": lambda s: s[::-1],
    "Rotate": lambda s: s[1:] + s[0],
    "Next": lambda s: "".join(str((int(c) + 1) % 10) for c in reversed(s)),
}


def task_rows(task: str, n: int, seed: int, length: int = 5) -> list[dict]:
    """``{task} 12345`` -> the digits reversed (``Reverse``), rotated left by one (``Rotate``) or
    reversed with each digit one up (``Next``: ``65432``)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        s = digits(rng, length, length)
        answer = TASKS[task](s)
        rows.append(
            {"messages": [{"role": "user", "content": f"{task} {s}"}, {"role": "assistant", "content": answer}]}
        )
    return rows


def reversal_text_rows(n: int, seed: int, lo: int = 4, hi: int = 6) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        parts = []
        for _ in range(4):
            s = digits(rng, lo, hi)
            parts.append(f"{s} reversed is {s[::-1]}.")
        rows.append({"text": " ".join(parts)})
    return rows


def preference_rows(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        s = digits(rng)
        # a refusal: a preference the model can pick up in a few steps
        wrong = rng.choice(["I cannot reverse that.", "Sorry, I do not know.", "No."])
        rows.append(
            {
                "messages": [{"role": "user", "content": PROMPT.format(s)}],
                "chosen": s[::-1],
                "rejected": wrong,
            }
        )
    return rows


def write_jsonl(path: str | Path, rows: list[dict]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def exact_match(rows: list[dict], **pipeline_kwargs) -> float:
    """Share of ``rows`` whose answer the chat pipeline reproduces exactly (greedy)."""
    import openmind

    chat = openmind.pipeline("chat", **pipeline_kwargs)
    outs = chat([r["messages"][:1] for r in rows], max_new_tokens=10, do_sample=False, batch_size=25)
    return sum(o["content"].strip() == r["messages"][1]["content"] for o, r in zip(outs, rows, strict=True)) / len(rows)


def held_out(task: str, train: list[dict], n: int = 100) -> list[dict]:
    """``n`` rows of ``task`` whose prompts are not in ``train``."""
    seen = {r["messages"][0]["content"] for r in train}
    return [r for r in task_rows(task, 3 * n, seed=999) if r["messages"][0]["content"] not in seen][:n]


def learns(tmp_path: Path, base: Path, framework: str) -> None:
    """A tiny model (``base``: hidden 64, 2 layers, the real 32k Llama-2 tokenizer, random weights)
    goes from ~0% to >= 90% held-out exact match through the chat pipeline:

    1. full SFT on ``Reverse 12345`` -> ``54321``;
    2. LoRA on that base for a new mapping, ``Next 12345`` -> ``65432`` (reversed, each digit one
       up), which it gets wrong;
    3. ``openmind export`` merges the adapter, and the merged model answers the same.
    """
    import openmind
    from openmind.core.cli.main import main

    common = dict(
        framework=framework,
        per_device_train_batch_size=16,
        warmup_ratio=0.05,
        lr_scheduler_type="cosine",
        logging_steps=50,
        save_steps=10_000,
        report_to=["none"],
        plot_loss=False,
    )
    on = {"framework": framework}
    reverse = task_rows("Reverse", 3000, seed=1)
    test = held_out("Reverse", reverse)
    assert exact_match(test, model=str(base), **on) <= 0.02
    full = tmp_path / "full"
    result = openmind.train(
        None,
        model=str(base),
        dataset=[str(write_jsonl(tmp_path / "reverse.jsonl", reverse))],
        finetuning_type="full",
        output_dir=str(full),
        max_steps=400,
        learning_rate=5e-3,
        **common,
    )
    assert result.final_loss < 0.2
    assert exact_match(test, model=str(full), **on) >= 0.9  # the run folder is the model

    # the new mapping keeps the base's reversal and changes what each digit becomes: LoRA learns it
    # from every seed tried (loss ~0.005, EM 1.0 in 7 of 7 in 300 steps). Rotating instead (a new
    # attention pattern) ended on a plateau from some seeds and machines (loss 0.1-0.9, EM 0-0.8
    # even in 800 steps), so the test failed or passed by the machine's rounding
    nxt = task_rows("Next", 2000, seed=5)
    next_test = held_out("Next", nxt)
    assert exact_match(next_test, model=str(full), **on) <= 0.05  # the base reverses without the shift
    lora = tmp_path / "lora"
    openmind.train(
        None,
        model=str(full),
        dataset=[str(write_jsonl(tmp_path / "next.jsonl", nxt))],
        finetuning_type="lora",
        lora_rank=16,
        output_dir=str(lora),
        max_steps=300,
        learning_rate=1e-2,
        **common,
    )
    assert exact_match(next_test, model=str(full), adapter=str(lora), **on) >= 0.9
    merged = tmp_path / "merged"
    export = ["export", "--model", str(full), "--adapter", str(lora), "--out", str(merged), "--framework", framework]
    assert main(export) == 0
    assert exact_match(next_test, model=str(merged), **on) >= 0.9
