"""The quickstart run (see the package docstring). Every step goes through the public SDK / CLI."""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from openmind.core.cli.command import Command
from openmind.pt import quickstart as _package

PROMPT = "Reverse {}"
#: the embedded default model: Llama architecture, real Llama-2 tokenizer, small enough for a CPU
MODEL_CONFIG = {"hidden_size": 64, "layers": 2, "heads": 4, "intermediate_size": 256, "seed": 0}


def reversal_rows(n: int, seed: int) -> list[dict]:
    """The embedded default dataset: reverse a 4-6 digit string, in chat format."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        s = "".join(rng.choice("0123456789") for _ in range(rng.randint(4, 6)))
        rows.append(
            {"messages": [{"role": "user", "content": PROMPT.format(s)}, {"role": "assistant", "content": s[::-1]}]}
        )
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def exact_match(model: str, rows: list[dict]) -> tuple[float, list[tuple[str, str, str]]]:
    """Exact match of greedy answers through the chat pipeline: (accuracy, [(prompt, answer, expected)])."""
    import openmind

    chat = openmind.pipeline("chat", model=model, max_new_tokens=12, do_sample=False, batch_size=32)
    prompts = [r["messages"][:1] for r in rows]
    answers = chat(prompts)
    pairs = [
        (p[0]["content"], a["content"].strip(), r["messages"][1]["content"])
        for p, a, r in zip(prompts, answers, rows, strict=True)
    ]
    return sum(a == e for _, a, e in pairs) / len(pairs), pairs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_and_ask(model: str, question: str, timeout: float = 180.0) -> tuple[str, str]:
    """Start ``openmind deploy`` on loopback, ask with the real openai client, stop it."""
    from openai import OpenAI

    port = free_port()
    exe = Path(sys.executable).with_name("openmind")
    cmd = [
        str(exe) if exe.exists() else "openmind",
        "deploy",
        "--model",
        model,
        "--port",
        str(port),
        "--served-model-name",
        "quickstart",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        import urllib.request

        deadline = time.time() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"openmind deploy exited with {proc.returncode}:\n{proc.stdout.read()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError("openmind deploy did not become healthy in time")
            time.sleep(0.5)
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="not-needed")
        reply = client.chat.completions.create(
            model="quickstart", messages=[{"role": "user", "content": question}], max_tokens=12, temperature=0
        )
        return f"http://127.0.0.1:{port}/v1", reply.choices[0].message.content or ""
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


class QuickstartCommand(Command):
    description = (_package.__doc__ or "").strip()

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--output-dir",
            default="openmind-quickstart",
            help="where everything is written (default: ./openmind-quickstart)",
        )
        parser.add_argument("--train-rows", type=int, default=2000, help="training conversations (default: 2000)")
        parser.add_argument("--steps", type=int, default=400, help="optimizer steps (default: 400)")
        parser.add_argument(
            "--min-accuracy",
            type=float,
            default=0.9,
            help="exit 1 when held-out exact match ends below this (default: 0.9)",
        )
        parser.add_argument("--no-serve", action="store_true", help="skip the serving step")
        parser.add_argument(
            "--overwrite", action="store_true", help="start from scratch even if --output-dir has a previous run"
        )

    def run(self, args: argparse.Namespace) -> int:
        import torch

        import openmind
        from openmind.pt.testing import tiny_llama

        # tiny models run much faster on one intra-op thread than on two contending ones
        torch.set_num_threads(1)
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        out = Path(args.output_dir).resolve()
        if args.overwrite and out.exists():
            shutil.rmtree(out)
        started = time.time()

        def step(n: int, text: str) -> None:
            print(f"\n[{n}/6] {text}  (+{time.time() - started:.0f}s)", flush=True)

        step(1, "model: Llama architecture + the real Llama-2 tokenizer (32k), randomly initialised")
        base = out / "base"
        if not (base / "config.json").is_file():
            tiny_llama(base, **MODEL_CONFIG)
        from transformers import AutoModelForCausalLM

        n_params = sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(base).parameters())
        print(f"      {base}  ({n_params / 1e6:.1f}M parameters)")

        step(2, "data: digit-string reversal in chat format ('Reverse 48213' -> '31284')")
        train_rows = reversal_rows(args.train_rows, seed=0)
        train_file = write_jsonl(out / "data" / "train.jsonl", train_rows)
        seen = {r["messages"][0]["content"] for r in train_rows}
        test_rows = [r for r in reversal_rows(400, seed=1) if r["messages"][0]["content"] not in seen][:100]
        write_jsonl(out / "data" / "test.jsonl", test_rows)
        print(f"      {train_file} ({args.train_rows} rows), held-out test set: {len(test_rows)} rows")

        before, _ = exact_match(str(base), test_rows[:20])
        print(f"      exact match before training: {before:.0%} (20 held-out prompts)")

        step(3, f"train: stage sft, full fine-tuning, {args.steps} steps")
        run_dir = out / "run"
        result = openmind.train(
            None,
            stage="sft",
            model=str(base),
            dataset=[str(train_file)],
            finetuning_type="full",
            output_dir=str(run_dir),
            overwrite_output_dir=True,
            max_steps=args.steps,
            per_device_train_batch_size=32,
            learning_rate=3e-3,
            lr_scheduler_type="cosine",
            warmup_ratio=0.05,
            logging_steps=max(1, min(20, args.steps // 10)),
            save_steps=args.steps,
            report_to=["tensorboard"],
            plot_loss=True,
        )
        summary = json.loads((run_dir / "train_summary.json").read_text())
        print(
            f"      final loss {summary['final_loss']:.3f}, {summary['tokens_per_second']:.0f} tokens/s, loss curve: {run_dir / 'loss.png'}"
        )
        del result

        step(4, "evaluate: exact match on held-out prompts through the chat pipeline")
        after, pairs = exact_match(str(run_dir), test_rows)
        print(f"      exact match: before {before:.0%} -> after {after:.0%} ({len(test_rows)} prompts)")

        step(5, "chat with the trained model")
        for prompt, answer, expected in pairs[:3]:
            mark = "ok" if answer == expected else f"expected {expected}"
            print(f"      user: {prompt}\n      assistant: {answer}   [{mark}]")

        if not args.no_serve:
            step(6, "serve: openmind deploy on 127.0.0.1, asked with the openai client")
            question = test_rows[0]["messages"][0]["content"]
            url, answer = serve_and_ask(str(run_dir), question)
            print(f"      {url}  user: {question}  assistant: {answer}")
        else:
            step(6, "serve: skipped (--no-serve)")

        print(f"\ndone in {time.time() - started:.0f}s. Next:")
        for line in next_commands(run_dir):
            print(f"  {line}")
        if after < args.min_accuracy:
            print(f"exact match {after:.0%} is below --min-accuracy {args.min_accuracy:.0%}", file=sys.stderr)
            return 1
        return 0


def command_prefix(name: str) -> str:
    """How to type ``name`` in the user's shell: bare when the PATH finds this environment's copy,
    else its path (relative to the current folder when inside it, e.g. ``.venv/bin/openmind``)."""
    import shutil

    here = Path(sys.executable).with_name(name)
    found = shutil.which(name)
    if found and here.exists() and Path(found).resolve() == here.resolve():
        return name
    if not here.exists():
        return name
    try:
        return str(here.relative_to(Path.cwd()))
    except ValueError:
        return str(here)


def next_commands(run_dir: Path) -> list[str]:
    """The "Next:" lines, each runnable as typed (quickstart.sh installs into .venv, not on the PATH)."""
    om, tb = command_prefix("openmind"), command_prefix("tensorboard")
    lines = [
        f"{om} chat {run_dir}",
        f"{om} deploy --model {run_dir}",
        f"{om} eval --model {run_dir} --help",
        f"{tb} --logdir {run_dir / 'runs'}",
    ]
    if om != "openmind":
        activate = Path(om).with_name("activate")
        lines.append(f"(or `source {activate}` first, then type `openmind ...`)")
    return lines
