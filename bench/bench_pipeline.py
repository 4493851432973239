"""Chat pipeline speed, side by side in one run on a tiny Llama with the real Llama-2 tokenizer.

* latency: ``pipeline("chat")(messages)`` end to end (template, tokenization, generation,
  decoding) vs raw ``model.generate`` on the same prompt ids producing the same tokens;
  interleaved repeats, medians — target ratio <= 1.05.
* throughput: 64 conversations with ``batch_size=8`` vs one at a time — target >= 3x.
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


def run() -> list[dict]:
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
