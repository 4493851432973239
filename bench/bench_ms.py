"""MindSpore backend speed, side by side in one run on a tiny Llama with the real Llama-2 tokenizer.

* overhead: ``pipeline("chat", framework="ms")(messages)`` end to end (template, tokenization,
  generation, decoding) vs calling the backend's generate directly
  (:func:`openmind.ms.generation.generate` on the same model, prompt ids and tokens); interleaved
  pairs, median of per-pair ratios -- target <= 1.05;
* frameworks: MindSpore's generate vs PyTorch's ``model.generate`` on the same checkpoint, same
  prompt, same greedy tokens (checked) -- reported, no target.

MindSpore needs numpy<2, so the measurement runs in a Python that has it: this process when
``import mindspore`` works, else ``$OPENMIND_MS_PYTHON`` (``nox -s bench`` builds that venv).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NEW_TOKENS = 32
PAIRS = 30


def measure() -> dict:
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM

    from openmind import pipeline
    from openmind.ms import generation
    from openmind.pt.testing import tiny_llama

    torch.set_num_threads(1)
    folder = tiny_llama(tempfile.mkdtemp(prefix="bench-ms-"), hidden_size=128, layers=2)
    chat = pipeline("chat", model=str(folder), framework="ms", max_new_tokens=NEW_TOKENS, temperature=0)
    backend = chat.backend
    conversation = [{"role": "user", "content": "Write 3 short sentences about the sea."}]
    ids = chat.prompt(conversation, {})
    params = generation.GenerationParams(max_new_tokens=NEW_TOKENS, eos_token_ids=backend.eos_ids)

    def direct() -> list[int]:
        return generation.generate(backend.model, [ids], params, pad_id=backend.pad_id).tokens[0]

    raw = AutoModelForCausalLM.from_pretrained(str(folder)).eval()

    def torch_generate() -> list[int]:
        with torch.inference_mode():
            x = torch.tensor([ids])
            out = raw.generate(
                input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=NEW_TOKENS, do_sample=False
            )
        return out[0, len(ids) :].tolist()

    same_ms = chat.generate([conversation])[0].token_ids == [t for t in direct() if t not in backend.eos_ids]
    same_pt = direct() == torch_generate()
    for _ in range(3):  # warm-up (compilation of the MindSpore graphs)
        direct()
        chat(conversation)
        torch_generate()
    sides = {"direct": direct, "pipe": lambda: chat(conversation), "torch": torch_generate}
    times: dict[str, list[float]] = {k: [] for k in sides}
    for i in range(PAIRS):
        order = list(sides) if i % 2 == 0 else list(reversed(sides))
        for side in order:
            start = time.perf_counter()
            sides[side]()
            times[side].append(time.perf_counter() - start)
    # best-of-N is the estimator least disturbed by other load on a shared machine (as timeit does);
    # the median of per-pair ratios is reported beside it
    overhead = min(times["pipe"]) / min(times["direct"])
    overhead_median = statistics.median(p / d for p, d in zip(times["pipe"], times["direct"], strict=True))
    vs_torch = min(times["direct"]) / min(times["torch"])
    return {
        "ms_direct_ms": 1000 * statistics.median(times["direct"]),
        "ms_pipeline_ms": 1000 * statistics.median(times["pipe"]),
        "pt_generate_ms": 1000 * statistics.median(times["torch"]),
        "overhead": overhead,
        "overhead_median_of_pairs": overhead_median,
        "ms_vs_pt": vs_torch,
        "same_tokens_pipeline_vs_direct": same_ms,
        "same_tokens_ms_vs_pt": same_pt,
        "numpy": np.__version__,
    }


def _python() -> str | None:
    try:
        import mindspore  # noqa: F401

        return sys.executable
    except Exception:  # noqa: BLE001 - numpy 2 or no mindspore: use the ms venv
        return os.environ.get("OPENMIND_MS_PYTHON")


def run() -> list[dict]:
    python = _python()
    if not python:
        return [
            {
                "benchmark": "ms",
                "metric": "MindSpore not importable here and OPENMIND_MS_PYTHON unset (nox -s bench sets it)",
                "value": "not run",
                "target": "",
                "ok": False,
            }
        ]
    env = dict(os.environ, OMP_NUM_THREADS="1", GLOG_v="3", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run(
        [python, str(Path(__file__).resolve()), "--measure"], capture_output=True, text=True, env=env, check=False
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"bench_ms measurement failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    r = json.loads(lines[-1])
    return [
        {
            "benchmark": "ms",
            "metric": (
                f"ms chat pipeline vs backend generate, best of {PAIRS}: median {r['ms_pipeline_ms']:.1f} vs "
                f"{r['ms_direct_ms']:.1f} ms ({NEW_TOKENS} tokens, same tokens: {r['same_tokens_pipeline_vs_direct']}; "
                f"median of pair ratios {r['overhead_median_of_pairs']:.3f}x)"
            ),
            "value": f"{r['overhead']:.3f}x",
            "target": "<= 1.05x",
            "ok": r["overhead"] <= 1.05 and r["same_tokens_pipeline_vs_direct"],
        },
        {
            "benchmark": "ms",
            "metric": (
                f"ms generate vs pt generate, best of {PAIRS} (medians {r['ms_direct_ms']:.1f} vs {r['pt_generate_ms']:.1f} ms), "
                "same checkpoint "
                f"(same greedy tokens: {r['same_tokens_ms_vs_pt']})"
            ),
            "value": f"{r['ms_vs_pt']:.2f}x",
            "target": "reported",
            "ok": None if r["same_tokens_ms_vs_pt"] else False,
        },
    ]


if __name__ == "__main__":
    if "--measure" in sys.argv:
        print(json.dumps(measure()))
    else:
        for row in run():
            print(row)
