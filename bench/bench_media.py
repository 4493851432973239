"""Media pipelines, side by side in one run on tiny random models (real diffusers / transformers).

* text-to-image overhead: ``pipeline("text-to-image")(prompt, seed=...)`` vs calling the diffusers
  ``StableDiffusionPipeline`` directly with the same seeded generator (same image bytes);
  interleaved pairs, median of per-pair ratios — target <= 1.05.
* image-classification throughput: 32 images with ``batch_size=32`` vs one at a time — target >= 3x.
"""

from __future__ import annotations

import statistics
import tempfile
import time

STEPS = 4
SIZE = 64
IMAGES = 32


def run() -> list[dict]:
    import numpy as np
    import torch
    from diffusers import StableDiffusionPipeline
    from PIL import Image

    from openmind import pipeline
    from openmind.pt.testing import tiny_stable_diffusion, tiny_vit

    torch.set_num_threads(1)  # as bench_pipeline: tiny tensors, shared 2-core machine
    folder = tiny_stable_diffusion(tempfile.mkdtemp(prefix="bench-sd-"))
    draw = pipeline("text-to-image", model=str(folder), num_inference_steps=STEPS, size=f"{SIZE}x{SIZE}")
    raw = StableDiffusionPipeline.from_pretrained(str(folder))
    raw.set_progress_bar_config(disable=True)

    def direct():
        generator = torch.Generator(device="cpu").manual_seed(0)
        with torch.inference_mode():
            return raw("a cat", generator=generator, num_inference_steps=STEPS, height=SIZE, width=SIZE).images[0]

    same = draw("a cat", seed=0).tobytes() == direct().tobytes()
    for _ in range(2):
        direct()
        draw("a cat", seed=0)
    ours, theirs = [], []
    for i in range(16):
        for side in ("raw", "pipe") if i % 2 == 0 else ("pipe", "raw"):
            start = time.perf_counter()
            direct() if side == "raw" else draw("a cat", seed=0)
            (theirs if side == "raw" else ours).append(time.perf_counter() - start)
    overhead = statistics.median(p / r for p, r in zip(ours, theirs, strict=True))

    vit = tiny_vit(tempfile.mkdtemp(prefix="bench-vit-"), labels=["a", "b", "c"], size=SIZE)
    classify = pipeline("image-classification", model=str(vit))
    rng = np.random.RandomState(0)
    images = [Image.fromarray((rng.rand(SIZE, SIZE, 3) * 255).astype("uint8")) for _ in range(IMAGES)]
    classify(images[:4], batch_size=4)  # warm-up
    start = time.perf_counter()
    one_by_one = [classify(image) for image in images]
    t_seq = time.perf_counter() - start
    start = time.perf_counter()
    batched = classify(images, batch_size=IMAGES)
    t_batch = time.perf_counter() - start
    labels_same = [[x["label"] for x in a] for a in one_by_one] == [[x["label"] for x in b] for b in batched]
    speedup = t_seq / t_batch
    return [
        {
            "benchmark": "media",
            "metric": (
                f"text-to-image {SIZE}x{SIZE}, {STEPS} steps: pipeline {statistics.median(ours) * 1000:.1f} ms vs "
                f"diffusers directly {statistics.median(theirs) * 1000:.1f} ms (median of paired ratios), "
                f"same image bytes: {'yes' if same else 'NO'}"
            ),
            "value": f"{overhead:.3f}x",
            "target": "<= 1.05x",
            "ok": overhead <= 1.05 and same,
        },
        {
            "benchmark": "media",
            "metric": (
                f"image-classification, {IMAGES} images {SIZE}x{SIZE}: batch_size={IMAGES} {t_batch:.2f} s vs one by one "
                f"{t_seq:.2f} s (same labels: {'yes' if labels_same else 'NO'})"
            ),
            "value": f"{speedup:.2f}x",
            "target": ">= 3x",
            "ok": speedup >= 3 and labels_same,
        },
    ]
