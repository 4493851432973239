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

The matmul floor (:func:`matmul_floor`): the matrix-multiply FLOPs one run needs at least --
forward and input-gradient backward of the frozen linear layers for every token, the LoRA
adapters' forward and both backwards, causal attention within each packed sample, and the
vocabulary projection forward and backward only at trained positions -- divided by this
machine's best single-thread throughput measured on the same shapes (``torch.matmul``, one
thread, best of several, in the same run). "openmind at N% of the floor" is floor time / run time.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

TARGET = 2.5  # issue 20: SFT+LoRA with packing >= 2.5x LLaMA-Factory


def lf_python() -> str | None:
    """The LLaMA-Factory venv's python (``OPENMIND_LF_PYTHON``, else ``.venv-lf``), or None."""
    explicit = os.environ.get("OPENMIND_LF_PYTHON")
    if explicit:
        return explicit
    candidate = HERE.parent / ".venv-lf" / "bin" / "python"
    if not candidate.exists() and os.environ.get("OPENMIND_BENCH_LF") == "install":
        subprocess.run(["bash", str(HERE / "setup_llamafactory_venv.sh"), str(HERE.parent / ".venv-lf")], check=True)
    return str(candidate) if candidate.exists() else None


def _best_seconds(fn, repeats: int = 5) -> float:
    import time

    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def matmul_floor(model_dir: Path, result: dict) -> dict:
    """The matmul FLOPs of one openmind run (see the module docstring) and the seconds they take at
    this machine's measured single-thread ``torch.matmul`` throughput on the model's shapes."""
    import torch
    from train_runners import HPARAMS

    config = json.loads((Path(model_dir) / "config.json").read_text())
    hidden, inter, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    layers, heads = config["num_hidden_layers"], config["num_attention_heads"]
    head_dim = config.get("head_dim") or hidden // heads
    kv = config.get("num_key_value_heads") or heads
    r = HPARAMS["lora_rank"]
    shapes = result["shapes"]
    tokens = result["tokens"]
    trained = tokens * shapes["trained_per_token"]
    pairs = tokens * shapes["attention_pairs_per_token"]
    # (in, out) of every linear layer of a decoder layer
    linears = [
        (hidden, heads * head_dim),
        (hidden, kv * head_dim),
        (hidden, kv * head_dim),
        (heads * head_dim, hidden),
        (hidden, inter),
        (hidden, inter),
        (inter, hidden),
    ]
    qkv = sum(i * o for i, o in linears[:3])
    base = sum(i * o for i, o in linears)
    # frozen weights: forward + input gradient (not needed for layer 0's q/k/v: their input is
    # the frozen embedding); LoRA: forward, input gradient and weight gradient
    flops_linear = tokens * (4 * base * layers - 2 * qkv)
    flops_lora = tokens * layers * sum(6 * r * (i + o) for i, o in linears)
    flops_attention = pairs * layers * 12 * heads * head_dim  # QK^T and PV: forward 4, backward 8
    flops_head = trained * 4 * hidden * vocab  # forward + input gradient, trained positions only
    total = flops_linear + flops_lora + flops_attention + flops_head

    torch.set_num_threads(1)
    step_tokens = max(1, round(tokens / result["steps"]))
    step_trained = max(1, round(trained / result["steps"]))
    g = torch.Generator().manual_seed(0)

    def rate(m: int, k: int, n: int) -> float:
        a, b = torch.randn(m, k, generator=g), torch.randn(k, n, generator=g)
        torch.matmul(a, b)
        return 2 * m * k * n / _best_seconds(lambda: torch.matmul(a, b))

    layer_rate = rate(step_tokens, hidden, inter)
    head_forward = rate(step_trained, hidden, vocab)
    head_backward = rate(step_trained, vocab, hidden)
    seconds = (flops_linear + flops_lora + flops_attention) / layer_rate + flops_head / 2 * (
        1 / head_forward + 1 / head_backward
    )
    return {
        "gflop": total / 1e9,
        "head_share": flops_head / total,
        "gflops_per_s": total / seconds / 1e9,
        "seconds": seconds,
        "share_of_floor": seconds / result["train_runtime"],
    }


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


def _median_run(results: list) -> dict | None:
    """The run with the median tokens/s (None when every run failed)."""
    done = sorted((r for r in results if r), key=lambda r: r["tokens_per_second"])
    return done[(len(done) - 1) // 2] if done else None


def run() -> list[dict]:
    from data_runners import synthetic_rows, write_rows

    from openmind.pt.testing import tiny_llama

    tmp = Path(tempfile.mkdtemp(prefix="bench-train-"))
    data = write_rows(tmp / "data", synthetic_rows(400, seed=0))
    model = tiny_llama(tmp / "model", hidden_size=128, layers=2, heads=4)
    rows: list[dict] = []
    lf_py = lf_python()
    # interleaved (openmind, then LLaMA-Factory, per setting), OPENMIND_BENCH_TRAIN_REPEATS times: on a
    # shared machine the ratio of neighbouring runs is the figure, its median over the repeats
    repeats = max(1, int(os.environ.get("OPENMIND_BENCH_TRAIN_REPEATS", "1")))
    runs: dict[tuple[str, bool], list] = {(side, p): [] for side in ("om", "lf") for p in (False, True)}
    for rep in range(repeats):
        for p in (False, True):
            runs["om", p].append(_side(sys.executable, "openmind", data, model, tmp / f"om-{p}-{rep}", p))
            if lf_py:
                runs["lf", p].append(_side(lf_py, "llamafactory", data, model, tmp / f"lf-{p}-{rep}", p))
    om = {p: _median_run(runs["om", p]) for p in (False, True)}
    lf = {p: _median_run(runs["lf", p]) for p in (False, True)} if lf_py else {}
    pair_ratios = {
        p: sorted(
            a["tokens_per_second"] / b["tokens_per_second"] for a, b in zip(runs["om", p], runs["lf", p]) if a and b
        )
        for p in (False, True)
    }

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
            ratio = statistics.median(pair_ratios[packing])
            spread = pair_ratios[packing]
            reps = f" (median of {len(spread)} interleaved pairs: {', '.join(f'{x:.2f}' for x in spread)})"
            rows.append(
                {
                    "benchmark": "train",
                    "metric": f"LLaMA-Factory sft+lora, {name}: {fmt(theirs)}; openmind / LLaMA-Factory"
                    + (reps if len(spread) > 1 else ""),
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
    for packing in (False, True):
        mine = om[packing]
        if not (mine and mine.get("shapes")):
            continue
        floor = matmul_floor(model, mine)
        rows.append(
            {
                "benchmark": "train",
                "metric": (
                    f"openmind sft+lora, {'packing' if packing else 'no packing'}: matmul floor "
                    f"{floor['gflop']:.0f} GFLOP ({floor['head_share']:.0%} in the vocabulary projection) at "
                    f"{floor['gflops_per_s']:.1f} GFLOP/s measured (1 thread) = {floor['seconds']:.1f} s "
                    f"vs {mine['train_runtime']:.1f} s run"
                ),
                "value": f"openmind at {floor['share_of_floor']:.0%} of the floor",
                "target": "",
                "ok": None,
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
