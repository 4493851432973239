"""Vision-language SFT: data preparation rows/s and LoRA SFT samples/s (openmind only).

Setting: a tiny random Qwen2-VL (hidden 128, 2 layers, 2-block vision tower) with the real 32k
Llama-2 tokenizer + Qwen2-VL's special tokens and chat template; ``OPENMIND_BENCH_VL_ROWS`` (default
600) mllm_demo-style rows, each one 224x224 PNG of a coloured square (the image processor makes it
64 visual tokens: 256 patches of 14x14, merged 2x2), one question, one answer.

* preparation: ``prepare(stage="mm-sft")`` cold (check every image, decode, image processor,
  visual-token expansion, tokenise, store pixel values) and warm (cache hit), one process;
* training: ``openmind train --stage mm-sft --finetuning-type lora`` (LoRA r=8 on the language
  model, projector trainable), batch 8, 20 steps, one intra-op thread; samples/s from the
  Trainer's own ``train_runtime``.

LLaMA-Factory is not compared here: its Qwen2-VL path builds transformers' ``Qwen2VLProcessor``,
which needs torchvision's video processor, and the only torchvision wheels these machines can
install are CUDA builds that fail to load beside the CPU torch (``libc10_cuda.so`` missing).
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
ROWS = int(os.environ.get("OPENMIND_BENCH_VL_ROWS", "600"))
COLOURS = {"red": (220, 30, 30), "green": (30, 170, 40), "blue": (30, 50, 220), "yellow": (235, 205, 20)}


def write_rows(folder: Path, n: int) -> Path:
    from PIL import Image

    rng = random.Random(0)
    (folder / "img").mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        colour = rng.choice(list(COLOURS))
        im = Image.new("RGB", (224, 224), (255, 255, 255))
        side = rng.randint(60, 200)
        x, y = rng.randint(0, 224 - side), rng.randint(0, 224 - side)
        im.paste(COLOURS[colour], (x, y, x + side, y + side))
        im.save(folder / "img" / f"{i}.png")
        row = {
            "messages": [
                {"role": "user", "content": "<image>What colour is the square?"},
                {"role": "assistant", "content": f"The square is {colour}."},
            ],
            "images": [f"img/{i}.png"],
        }
        lines.append(json.dumps(row))
    data = folder / "vl.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data


def run() -> list[dict]:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("OPENMIND_QUIET", "1")
    import torch
    from transformers import AutoTokenizer

    from openmind.core.args import DataArguments
    from openmind.core.cli import main
    from openmind.data.multimodal import load_media_parts
    from openmind.data.preparation import prepare
    from openmind.nlp.templates import resolve_template

    sys.path.insert(0, str(HERE.parent / "packages" / "openmind-pt" / "tests" / "vl_training"))
    from vl_helpers import tiny_qwen2_vl_trainable as tiny_qwen2_vl

    torch.set_num_threads(1)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = tiny_qwen2_vl(tmp / "qwen2vl", hidden_size=128, image_pixels=224 * 224)
        data = write_rows(tmp / "data", ROWS)
        tok = AutoTokenizer.from_pretrained(str(model))
        processor, config = load_media_parts(model)
        template = resolve_template(None, model_dir=str(model), tokenizer=tok)
        args = DataArguments(dataset=[str(data)], data_cache_dir=str(tmp / "cache"))
        name = f"vl data prep ({ROWS} rows, qwen2-vl, 1 proc)"
        start = time.perf_counter()
        cold = prepare(args, tok, template, stage="mm-sft", image_processor=processor, model_config=config, quiet=True)
        cold_s = time.perf_counter() - start
        tokens = sum(len(x) for x in cold.train["input_ids"])
        start = time.perf_counter()
        warm = prepare(args, tok, template, stage="mm-sft", image_processor=processor, model_config=config, quiet=True)
        warm_s = time.perf_counter() - start
        assert warm.from_cache and not cold.from_cache
        rows.append(
            {
                "benchmark": name,
                "metric": f"openmind cold: {cold_s:.1f} s, {ROWS / cold_s:.0f} rows/s, {tokens / cold_s:.0f} tokens/s "
                f"(checks + decode + image processor + tokenise + store)",
                "value": f"{ROWS / cold_s:.0f} rows/s",
                "target": "",
                "ok": None,
            }
        )
        rows.append(
            {
                "benchmark": name,
                "metric": f"cached re-run: {warm_s:.2f} s vs cold {cold_s:.1f} s (media re-checked and hashed)",
                "value": f"{cold_s / warm_s:.1f}x",
                "target": "",
                "ok": None,
            }
        )
        rows.append(
            {
                "benchmark": name,
                "metric": "LLaMA-Factory: not run (its Qwen2-VL processor needs torchvision; no CPU build installs here)",
                "value": "-",
                "target": "",
                "ok": None,
            }
        )
        run_dir = tmp / "run"
        steps, batch = 20, 8
        argv = [
            "train",
            "--stage",
            "mm-sft",
            "--model",
            str(model),
            "--dataset",
            str(data),
            "--output-dir",
            str(run_dir),
        ]
        argv += ["--finetuning-type", "lora", "--freeze-multi-modal-projector", "false", "--max-samples", "400"]
        argv += ["--max-steps", str(steps), "--per-device-train-batch-size", str(batch), "--report-to", "none"]
        argv += ["--data-cache-dir", str(tmp / "cache2"), "--save-steps", str(steps), "--plot-loss", "false"]
        if main(argv) != 0:
            raise RuntimeError("mm-sft training failed")
        summary = json.loads((run_dir / "train_summary.json").read_text())
        runtime = summary["metrics"]["train_runtime"]
        rows.append(
            {
                "benchmark": "vl lora sft (qwen2-vl hidden 128, 64 visual tokens, batch 8, 1 thread)",
                "metric": f"openmind: {steps * batch / runtime:.1f} samples/s, {summary['tokens'] / runtime:.0f} tokens/s "
                f"({steps} steps in {runtime:.1f} s); LLaMA-Factory not run (see above)",
                "value": f"{steps * batch / runtime:.1f} samples/s",
                "target": "",
                "ok": None,
            }
        )
    return rows


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    for row in run():
        print(row)
