"""Helpers of the vision-language training tests: coloured-square data and transformers' own
Qwen2-VL processor (the reference the prepared rows and the evaluation prompts come from)."""

from __future__ import annotations

import json
import os
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


#: the special tokens of the Qwen2-VL family added to the Llama-2 tokenizer of the tiny VLMs
QWEN2_VL_TOKENS = ("<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>")


def qwen2_vl_chat_template() -> str:
    """Qwen2.5-VL's official chat template (shipped by trl as ``chat_templates/qwen2_5_vl.jinja``;
    Qwen2-VL-Instruct's is the same text)."""
    from importlib.resources import files

    return (files("trl") / "chat_templates" / "qwen2_5_vl.jinja").read_text(encoding="utf-8")


def tiny_qwen2_vl_trainable(
    folder: str | os.PathLike,
    *,
    seed: int = 0,
    image_pixels: int = 56 * 56,
    hidden_size: int = 64,
    layers: int = 2,
    weights: bool = True,
) -> Path:
    """Write a randomly initialised ``Qwen2VLForConditionalGeneration`` to ``folder``: the real
    Llama-2 tokenizer plus Qwen2-VL's special tokens and official chat template, and Qwen2-VL's image
    processor (PIL backend) resizing every image to about ``image_pixels`` pixels (56x56: 4 visual
    tokens). ``weights=False`` writes only config, tokenizer and image processor (data preparation
    needs no weights)."""
    from transformers import Qwen2VLConfig
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    from openmind.nlp.testing.assets import llama2_tokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tok = llama2_tokenizer(chat_template=qwen2_vl_chat_template())
    tok.add_special_tokens({"additional_special_tokens": list(QWEN2_VL_TOKENS)})
    tok.eos_token = "<|im_end|>"
    tok.pad_token = "<|im_end|>"
    ids = {t: tok.convert_tokens_to_ids(t) for t in QWEN2_VL_TOKENS}
    special = dict(bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    heads = hidden_size // 16  # head_dim 16: mrope sections 2+3+3
    config = Qwen2VLConfig(
        text_config=dict(
            vocab_size=len(tok),
            hidden_size=hidden_size,
            intermediate_size=hidden_size * 2,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=max(1, heads // 2),
            max_position_embeddings=1024,
            rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]},
            **special,
        ),
        vision_config=dict(
            depth=2,
            embed_dim=32,
            hidden_size=hidden_size,
            num_heads=2,
            mlp_ratio=2,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            in_chans=3,
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        **special,
    )
    tok.save_pretrained(folder)
    Qwen2VLImageProcessorPil(min_pixels=image_pixels, max_pixels=image_pixels).save_pretrained(folder)
    if not weights:
        config.save_pretrained(folder)
        return folder
    import torch
    from transformers import Qwen2VLForConditionalGeneration

    torch.manual_seed(seed)
    model = Qwen2VLForConditionalGeneration(config)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(folder)
    return folder
