"""SFT + LoRA training throughput: effective (non-padding) tokens per second of openmind, with and
without packing, against LLaMA-Factory 0.9.5 on the same data, model and hyper-parameters, in
the same run, one after the other (``bench/train_runners.py`` runs each side in its own process).

LLaMA-Factory runs in its own venv (``.venv-lf``, or ``OPENMIND_LF_PYTHON``; create it with
``bash bench/setup_llamafactory_venv.sh``, or let ``OPENMIND_BENCH_LF=install`` do it). Without it
the LLaMA-Factory rows say so and are not counted as met.

Setting: a tiny Llama (hidden 128, 2 layers) with the real 32k Llama-2 tokenizer, 400 synthetic
multi-turn conversations, llama2 template, cutoff 256, batch 8, 24 steps, LoRA r=8 on all linear
layers, one intra-op thread on both sides. Time is the Trainer's own ``train_runtime``. Token
counts: openmind counts the non-padding tokens it trains on; for LLaMA-Factory they are the rows
trained on times the mean non-padding length of its own tokenised (packed) set (its llama2
template renders one token fewer per answer than the official template, ENVIRONMENT.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

TARGET = 1.3


def lf_python() -> str | None:
    """The LLaMA-Factory venv's python (``OPENMIND_LF_PYTHON``, else ``.venv-lf``), or None."""
    explicit = os.environ.get("OPENMIND_LF_PYTHON")
    if explicit:
        return explicit
    candidate = HERE.parent / ".venv-lf" / "bin" / "python"
    if not candidate.exists() and os.environ.get("OPENMIND_BENCH_LF") == "install":
        subprocess.run(["bash", str(HERE / "setup_llamafactory_venv.sh"), str(HERE.parent / ".venv-lf")], check=True)
    return str(candidate) if candidate.exists() else None


def _side(python: str, side: str, data: Path, model: Path, out: Path, packing: bool) -> dict | None:
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    cmd = [python, str(HERE / "train_runners.py"), side, str(data), str(model), str(out), "1" if packing else "0"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, cwd=str(out.parent))
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        print(proc.stdout[-2000:], proc.stderr[-4000:], file=sys.stderr)
        return None
    result = json.loads(line[len("RESULT ") :])
    result["tokens_per_second"] = result["tokens"] / result["train_runtime"]
    return result


def run() -> list[dict]:
    from data_runners import synthetic_rows, write_rows

    from openmind.pt.testing import tiny_llama

    tmp = Path(tempfile.mkdtemp(prefix="bench-train-"))
    data = write_rows(tmp / "data", synthetic_rows(400, seed=0))
    model = tiny_llama(tmp / "model", hidden_size=128, layers=2, heads=4)
    rows: list[dict] = []
    om = {p: _side(sys.executable, "openmind", data, model, tmp / f"om-{p}", p) for p in (False, True)}
    lf_py = lf_python()
    lf = {p: _side(lf_py, "llamafactory", data, model, tmp / f"lf-{p}", p) for p in (False, True)} if lf_py else {}

    def fmt(r):
        return f"{r['tokens_per_second']:.0f} tok/s ({r['tokens']} tokens / {r['train_runtime']:.1f} s)"

    for packing in (False, True):
        name = "packing" if packing else "no packing"
        mine = om[packing]
        rows.append(
            {
                "benchmark": "train",
                "metric": f"openmind sft+lora, {name}: effective tokens/s",
                "value": fmt(mine) if mine else "failed",
                "target": "",
                "ok": None if mine else False,
            }
        )
        theirs = lf.get(packing)
        if not lf_py:
            rows.append(
                {
                    "benchmark": "train",
                    "metric": f"vs LLaMA-Factory, {name}",
                    "value": "not run: no .venv-lf (bash bench/setup_llamafactory_venv.sh)",
                    "target": f">= {TARGET}x",
                    "ok": False,
                }
            )
            continue
        if mine and theirs:
            ratio = mine["tokens_per_second"] / theirs["tokens_per_second"]
            rows.append(
                {
                    "benchmark": "train",
                    "metric": f"LLaMA-Factory sft+lora, {name}: {fmt(theirs)}; openmind / LLaMA-Factory",
                    "value": f"{ratio:.2f}x",
                    "target": f">= {TARGET}x",
                    "ok": ratio >= TARGET,
                }
            )
        else:
            rows.append(
                {
                    "benchmark": "train",
                    "metric": f"vs LLaMA-Factory, {name}",
                    "value": "failed (see log)",
                    "target": f">= {TARGET}x",
                    "ok": False,
                }
            )
    if om[False] and om[True]:
        ratio = om[True]["tokens_per_second"] / om[False]["tokens_per_second"]
        rows.append(
            {
                "benchmark": "train",
                "metric": "openmind packing / no packing (effective tokens/s)",
                "value": f"{ratio:.2f}x",
                "target": "> 1x",
                "ok": ratio > 1.0,
            }
        )
    return rows
