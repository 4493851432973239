"""Chat pipeline speed, side by side in one run on a tiny Llama with the real Llama-2 tokenizer.

* latency: ``pipeline("chat")(messages)`` end to end (template, tokenization, generation,
  decoding) vs raw ``model.generate`` on the same prompt ids producing the same tokens;
  interleaved repeats, medians — target ratio <= 1.05.
* throughput: 64 conversations with ``batch_size=8`` vs one at a time — target >= 3x.
* decode step: the same 16-token greedy request through each mode of the PyTorch decode fast path
  (``OPENMIND_FAST_DECODE``: the traced step, the module-calling lean step, the whole forward on the
  static cache) and through ``model.generate``, interleaved, best of rounds — one CPU thread, the bench
  model of ``bench_serve.py`` (hidden 64, 2 layers, 32k vocabulary: the per-token Python cost shows).
"""

from __future__ import annotations

import statistics
import tempfile
import time

NEW_TOKENS = 32
PROMPTS = 64


def _conversations(n: int) -> list[list[dict]]:
    topics = ["the sea", "a lighthouse", "bread", "a violin", "winter", "a robot", "tea", "mountains"]
    return [
        [{"role": "user", "content": f"Write {i % 5 + 1} short sentences about {topics[i % len(topics)]}."}]
        for i in range(n)
    ]


def _decode_modes() -> list[dict]:
    import os

    from openmind import pipeline
    from openmind.pt.pipelines.fastpath import StaticDecoder
    from openmind.pt.testing import tiny_llama

    folder = tiny_llama(tempfile.mkdtemp(prefix="bench-decode-"))
    chat = pipeline("chat", model=str(folder), max_new_tokens=16, temperature=0)
    backend = chat.backend
    conversation = [{"role": "user", "content": "Request 3: write a line about the number 3."}]
    decoders = {}
    saved = os.environ.get("OPENMIND_FAST_DECODE")
    try:
        for mode in ("1", "lean", "full", "0"):
            os.environ["OPENMIND_FAST_DECODE"] = mode
            decoders[mode] = StaticDecoder(backend.model)
        best: dict[str, float] = {}
        outputs: dict[str, object] = {}
        for _ in range(8):
            for mode, decoder in decoders.items():
                os.environ["OPENMIND_FAST_DECODE"] = mode
                backend._decoder = decoder
                start = time.perf_counter()
                for _ in range(10):
                    outputs[mode] = chat(conversation)
                best[mode] = min(best.get(mode, float("inf")), (time.perf_counter() - start) / 10)
    finally:
        if saved is None:
            os.environ.pop("OPENMIND_FAST_DECODE", None)
        else:
            os.environ["OPENMIND_FAST_DECODE"] = saved
        backend._decoder = None
    traced = decoders["1"]
    same = len({repr(o) for o in outputs.values()}) == 1
    names = {"1": "traced step", "lean": "lean step", "full": "whole forward", "0": "model.generate"}
    times = ", ".join(f"{names[m]} {best[m] * 1000:.1f} ms" for m in decoders)
    return [
        {
            "benchmark": "pipeline",
            "metric": f"decode fast path, 16-token chat request (1 thread, bench_serve model): {times}; "
            f"same text in every mode: {'yes' if same else 'NO'}"
            + ("" if traced.trace_reason is None else f"; not traced: {traced.trace_reason}"),
            "value": f"{best['0'] / best['1']:.2f}x vs generate, {best['lean'] / best['1']:.2f}x vs lean",
            "target": "same text",
            "ok": same and traced.trace_reason is None,
        }
    ]


def run() -> list[dict]:
    rows = _latency_and_batching()
    torch_threads = None
    try:
        import torch

        torch_threads = torch.get_num_threads()
        torch.set_num_threads(1)
        rows += _decode_modes()
    finally:
        if torch_threads is not None:
            torch.set_num_threads(torch_threads)
    return rows


def _latency_and_batching() -> list[dict]:
    import torch
    from transformers import AutoModelForCausalLM

    from openmind import pipeline
    from openmind.pt.testing import tiny_llama

    # one intra-op thread for both sides: a tiny model's tensors are too small to split, and on a shared
    # 2-core machine OpenMP synchronisation between busy cores dominates (measured: 2.6x slower per step)
    torch.set_num_threads(1)
    folder = tiny_llama(tempfile.mkdtemp(prefix="bench-pipeline-"), hidden_size=128, layers=2)
    chat = pipeline("chat", model=str(folder), max_new_tokens=NEW_TOKENS, temperature=0)
    raw = AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    conversation = _conversations(1)[0]
    ids = chat.prompt(conversation, {})
    input_ids = torch.tensor([ids])
    mask = torch.ones_like(input_ids)

    def raw_generate() -> list[int]:
        with torch.inference_mode():
            out = raw.generate(input_ids=input_ids, attention_mask=mask, max_new_tokens=NEW_TOKENS, do_sample=False)
        return out[0, len(ids) :].tolist()

    ours = chat.generate([conversation])[0]
    reference = raw_generate()
    same = ours.token_ids == [t for t in reference if t not in chat.backend.eos_ids][: len(ours.token_ids)]

    raw_times, pipe_times = [], []
    for _ in range(3):  # warm-up
        raw_generate()
        chat(conversation)
    for i in range(20):  # pairs in alternating order; the ratio is the median of per-pair ratios (robust to drift)
        for side in ("raw", "pipe") if i % 2 == 0 else ("pipe", "raw"):
            start = time.perf_counter()
            raw_generate() if side == "raw" else chat(conversation)
            (raw_times if side == "raw" else pipe_times).append(time.perf_counter() - start)
    t_raw, t_pipe = statistics.median(raw_times), statistics.median(pipe_times)
    latency = statistics.median(p / r for p, r in zip(pipe_times, raw_times, strict=True))

    conversations = _conversations(PROMPTS)
    chat(conversations[:8], batch_size=8)  # warm-up
    start = time.perf_counter()
    sequential = chat(conversations, batch_size=1)
    t_seq = time.perf_counter() - start
    start = time.perf_counter()
    batched = chat(conversations, batch_size=8)
    t_batch = time.perf_counter() - start
    speedup = t_seq / t_batch
    return [
        {
            "benchmark": "pipeline",
            "metric": (
                f"chat latency, {NEW_TOKENS} new tokens: pipeline {t_pipe * 1000:.1f} ms vs raw generate "
                f"{t_raw * 1000:.1f} ms (medians; value: median of paired ratios), same tokens: {'yes' if same else 'NO'}"
            ),
            "value": f"{latency:.3f}x",
            "target": "<= 1.05x",
            "ok": latency <= 1.05 and same,
        },
        {
            "benchmark": "pipeline",
            "metric": (
                f"chat throughput, {PROMPTS} prompts x {NEW_TOKENS} tokens: batch_size=8 {t_batch:.2f} s vs "
                f"sequential {t_seq:.2f} s (same outputs: {'yes' if batched == sequential else 'NO'})"
            ),
            "value": f"{speedup:.2f}x",
            "target": ">= 3x",
            "ok": speedup >= 3 and batched == sequential,
        },
    ]
