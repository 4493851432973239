"""GPU rows of issue 20, for a lent CUDA machine: bf16 batching and the native engine on CUDA.

Without CUDA (every CI and build machine here) the module reports that it did not run. On a lent
device machine (the `device` tool, whose image has CUDA PyTorch but none of openmind's packages and
no index), one prepared call runs it, see ``bench/gpu_check.sh``::

    bash bench/gpu_check.sh --prepare          # here: wheels into .gpu-wheels/ (git-ignored, ~24 MB)
    run(command="bash bench/gpu_check.sh", carry=[".gpu-wheels"], timeout_s=540)   # there

``OPENMIND_BENCH_GPU_DEVICE=cpu python bench/run.py gpu`` runs the same code on the CPU with a tiny
model and a few requests: a check of the script, not a measurement (rows say "dry run").

1. bf16 greedy, batched vs one by one: the same chat prompts through the chat pipeline with
   ``batch_size=len(prompts)`` and ``batch_size=1``: how many answers are identical, and the
   batching speed-up (time one by one / batched); float32 beside it as the control.
2. The native engine (``openmind deploy --device cuda --dtype bfloat16``, dynamic batching up to 32):
   requests/s and generated tokens/s at concurrency 1, 8 and 32 (bench_serve's closed-loop clients).
3. vLLM (``--backend vllm`` vs vLLM directly): measured only where ``import vllm`` works. The device
   image has no vLLM, and vLLM 0.33's wheel (336 MB, pinning torch==2.14.0 against the image's 2.11)
   is more than the device tool carries (64 MiB), so the row says why it did not run.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

DEVICE_ENV = "OPENMIND_BENCH_GPU_DEVICE"
#: the GPU model: a 32k-vocabulary Llama of ~165M parameters in bf16 (random weights, real tokenizer)
GPU_SHAPE = {"hidden_size": 1024, "layers": 8, "heads": 16, "intermediate_size": 2816}


def _device() -> str | None:
    forced = os.environ.get(DEVICE_ENV)
    if forced:
        return forced
    import torch

    return "cuda" if torch.cuda.is_available() else None


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def _prompts(n: int) -> list[list[dict]]:
    topics = ["rivers", "compilers", "tea", "glaciers", "chess", "bridges", "owls", "printing"]
    return [
        [{"role": "user", "content": f"Write {i % 5 + 1} short sentences about {topics[i % len(topics)]}, item {i}."}]
        for i in range(n)
    ]


def _batching_rows(folder: str, device: str, dry: bool) -> list[dict]:
    from openmind import pipeline

    prompts, new_tokens = _prompts(4 if dry else 32), 8 if dry else 64
    rows = []
    for dtype in ("bfloat16", "float32"):
        chat = pipeline("chat", model=folder, device=device, dtype=dtype, max_new_tokens=new_tokens, temperature=0)
        chat.generate(prompts, batch_size=len(prompts))  # warm-up: kernels, and the traced shapes recorded
        chat.generate(prompts[:1], batch_size=1)
        _sync(device)
        start = time.perf_counter()
        batched = chat.generate(prompts, batch_size=len(prompts))
        _sync(device)
        t_batched = time.perf_counter() - start
        start = time.perf_counter()
        single = [chat.generate([p], batch_size=1)[0] for p in prompts]
        _sync(device)
        t_single = time.perf_counter() - start
        same = sum(repr(a) == repr(b) for a, b in zip(batched, single))
        backend = getattr(chat, "backend", None)
        decoder = getattr(backend, "_decoder", None)
        path = "fast path" if decoder is not None and getattr(decoder, "trace_reason", "x") is None else "generate"
        rows.append(
            {
                "benchmark": "gpu",
                "metric": f"{dtype} greedy on {device}{' (dry run)' if dry else ''}, {len(prompts)} chat prompts x "
                f"{new_tokens} tokens ({path}): batched == one by one for {same}/{len(prompts)}; "
                f"batched {t_batched:.2f} s vs one by one {t_single:.2f} s",
                "value": f"{t_single / t_batched:.2f}x batching",
                "target": f"{len(prompts)}/{len(prompts)} identical",
                "ok": same == len(prompts),
            }
        )
        del chat
    return rows


def _serve_rows(folder: str, device: str, dry: bool) -> list[dict]:
    import asyncio

    import bench_serve as serve

    proc, url, ready = serve._deploy(folder, 32, device, () if device == "cpu" else ("--dtype", "bfloat16"))
    rows = []
    try:
        for concurrency in (1, 8, 32):
            total = 16 if dry else max(serve.MIN_REQUESTS, 8 * concurrency)
            asyncio.run(serve._load(url, concurrency, total))  # warm-up: the traced shapes of this load
            rates = [asyncio.run(serve._load(url, concurrency, total)) for _ in range(1 if dry else 3)]
            rate = statistics.median(rates)
            rows.append(
                {
                    "benchmark": "gpu",
                    "metric": f"native engine on {device}{' (dry run)' if dry else ''}: chat req/s at concurrency "
                    f"{concurrency} ({serve.MAX_TOKENS} tokens, batching up to 32; passes "
                    f"{', '.join(f'{r:.1f}' for r in rates)}); about {rate * serve.MAX_TOKENS:.0f} generated tokens/s",
                    "value": f"{rate:.1f} req/s",
                    "target": "reported",
                    "ok": None,
                }
            )
        rows.append(
            {
                "benchmark": "gpu",
                "metric": f"native engine on {device}{' (dry run)' if dry else ''}: ready (start to healthy)",
                "value": f"{ready:.1f} s",
                "target": "reported",
                "ok": None,
            }
        )
    finally:
        proc.kill()
        proc.wait()
    return rows


def _vllm_row() -> dict:
    import importlib.util

    why = (
        "not run: vLLM is not installed on the device image, and vLLM 0.33's wheel (336 MB, torch==2.14.0 pinned; "
        "the image has torch 2.11) is more than the device tool carries (64 MiB) to a machine with no index"
    )
    if importlib.util.find_spec("vllm") is not None:
        why = "not run: vLLM is installed here, but this module does not measure it yet"
    return {
        "benchmark": "gpu",
        "metric": f"vLLM backend vs vLLM directly: {why}",
        "value": "-",
        "target": "",
        "ok": None,
    }


def run() -> list[dict]:
    device = _device()
    if device is None:
        return [
            {
                "benchmark": "gpu",
                "metric": "not run: no CUDA device on this machine (torch.cuda.is_available() is False); "
                "bench/gpu_check.sh runs these rows on a lent GPU machine",
                "value": "-",
                "target": "",
                "ok": None,
            }
        ]
    from openmind.pt.testing import tiny_llama

    dry = device == "cpu"
    folder = tempfile.mkdtemp(prefix="bench-gpu-") + "/model"
    tiny_llama(folder, **({} if dry else {**GPU_SHAPE, "dtype": "bfloat16"}))
    return _batching_rows(folder, device, dry) + _serve_rows(folder, device, dry) + [_vllm_row()]
