"""Helpers of the vision-language training tests: coloured-square data and transformers' own
Qwen2-VL processor (the reference the prepared rows and the evaluation prompts come from)."""

from __future__ import annotations

import json
import random
from contextlib import contextmanager
from pathlib import Path

COLOURS = {"red": (220, 30, 30), "green": (30, 170, 40), "blue": (30, 50, 220), "yellow": (235, 205, 20)}
QUESTION = "What colour is the square?"


def square(colour: str, rng: random.Random, size: int = 56):
    """A white picture with one square of ``colour`` (random size and place)."""
    from PIL import Image

    im = Image.new("RGB", (size, size), (255, 255, 255))
    side = rng.randint(size // 2, size * 7 // 8)
    x, y = rng.randint(0, size - side), rng.randint(0, size - side)
    im.paste(COLOURS[colour], (x, y, x + side, y + side))
    return im


def square_rows(folder: Path, n: int, seed: int, name: str = "train") -> tuple[Path, list[tuple[str, str]]]:
    """``n`` mm-sft rows (LLaMA-Factory's mllm_demo layout) in ``folder/name.jsonl``; returns the
    file and ``[(image path, colour)]``."""
    rng = random.Random(seed)
    (folder / name).mkdir(parents=True, exist_ok=True)
    items, rows = [], []
    colours = list(COLOURS)
    for i in range(n):
        colour = colours[i % len(colours)] if i < len(colours) else rng.choice(colours)
        path = folder / name / f"{i}.png"
        square(colour, rng).save(path)
        items.append((str(path), colour))
        rows.append(
            {
                "messages": [
                    {"role": "user", "content": f"<image>{QUESTION}"},
                    {"role": "assistant", "content": colour},
                ],
                "images": [f"{name}/{i}.png"],
            }
        )
    data = folder / f"{name}.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return data, items


@contextmanager
def _no_video_processor_check():
    # transformers' Qwen2VLProcessor insists on a video processor, whose class needs torchvision
    # (not installable beside the CPU torch here). Images never reach it: build the processor with
    # video_processor=None by skipping the class check for that None argument only.
    from transformers.processing_utils import ProcessorMixin

    original = ProcessorMixin.check_argument_for_proper_class

    def check(self, name, argument):
        if argument is None and name == "video_processor":
            return None
        return original(self, name, argument)

    ProcessorMixin.check_argument_for_proper_class = check
    try:
        yield
    finally:
        ProcessorMixin.check_argument_for_proper_class = original


def qwen2_vl_processor(folder: str | Path):
    """transformers' ``Qwen2VLProcessor`` over the folder's tokenizer and image processor."""
    from transformers import AutoImageProcessor, AutoTokenizer, Qwen2VLProcessor

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    with _no_video_processor_check():
        return Qwen2VLProcessor(
            image_processor=AutoImageProcessor.from_pretrained(str(folder)),
            tokenizer=tokenizer,
            video_processor=None,
            chat_template=tokenizer.chat_template,
        )


def ask(model, processor, images: list, question: str = QUESTION, max_new_tokens: int = 4) -> list[str]:
    """Greedy answers of ``model`` (transformers' generate on the processor's inputs), one per image."""
    import torch

    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": question}]}]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    answers = []
    for image in images:
        inputs = processor(text=[prompt], images=[image], return_tensors="pt")
        with torch.no_grad():
            out = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
        answers.append(processor.tokenizer.decode(out[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True))
    return answers


def accuracy(answers: list[str], colours: list[str]) -> float:
    return sum(a.strip().lower().startswith(c) for a, c in zip(answers, colours)) / len(colours)
