"""Vision-language model groups, matched from ``config.json`` (``model_type``, else ``architectures``).

The prompt of a VL group is the folder's own processor ``chat_template`` (the family's official
template, byte-identical by construction; the tests compare it with stored official copies), so a
group names no native template. ``tasks`` lists ``mm-chat`` (inference) and ``mm-sft`` (training).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from openmind.core.specs import ModelGroupSpec

VL_TASKS = ("mm-chat", "mm-sft")
#: LoRA targets: the language model's projections. Qwen-VL vision blocks name theirs qkv/proj/fc1/fc2;
#: a CLIP/SigLIP tower (LLaVA, Idefics3) also has q_proj/k_proj/v_proj, so a trainer restricts these
#: names to the language model (``language_model`` in the module path) unless the tower is trained.
LM_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
LLAVA_TARGETS = LM_TARGETS


def _hubs(huggingface: tuple[str, ...], modelscope: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    return {k: v for k, v in {"huggingface": huggingface, "modelscope": modelscope}.items() if v}


VL_GROUPS = (
    ModelGroupSpec(
        name="qwen2-vl",
        tasks=VL_TASKS,
        architectures=("Qwen2VLForConditionalGeneration",),
        model_types=("qwen2_vl",),
        hub_ids=_hubs(
            ("Qwen/Qwen2-VL-2B-Instruct", "Qwen/Qwen2-VL-7B-Instruct", "Qwen/Qwen2-VL-72B-Instruct"),
            ("Qwen/Qwen2-VL-2B-Instruct", "Qwen/Qwen2-VL-7B-Instruct"),
        ),
        sizes=("2B", "7B", "72B"),
        lora_targets=LM_TARGETS,
        frameworks=("pt",),
        description="Qwen2-VL (instruct): images as <|vision_start|><|image_pad|>...<|vision_end|>, "
        "the number of pads from the image grid (processor)",
    ),
    ModelGroupSpec(
        name="qwen2.5-vl",
        tasks=VL_TASKS,
        architectures=("Qwen2_5_VLForConditionalGeneration",),
        model_types=("qwen2_5_vl",),
        hub_ids=_hubs(
            ("Qwen/Qwen2.5-VL-3B-Instruct", "Qwen/Qwen2.5-VL-7B-Instruct", "Qwen/Qwen2.5-VL-72B-Instruct"),
            ("Qwen/Qwen2.5-VL-3B-Instruct", "Qwen/Qwen2.5-VL-7B-Instruct"),
        ),
        sizes=("3B", "7B", "32B", "72B"),
        lora_targets=LM_TARGETS,
        frameworks=("pt",),
        description="Qwen2.5-VL (instruct): Qwen2-VL's template and image tokens",
    ),
    ModelGroupSpec(
        name="qwen3-vl",
        tasks=VL_TASKS,
        architectures=("Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration"),
        model_types=("qwen3_vl", "qwen3_vl_moe"),
        hub_ids=_hubs(("Qwen/Qwen3-VL-2B-Instruct", "Qwen/Qwen3-VL-8B-Instruct", "Qwen/Qwen3-VL-30B-A3B-Instruct")),
        sizes=("2B", "4B", "8B", "30B-A3B", "235B-A22B"),
        lora_targets=LM_TARGETS,
        frameworks=("pt",),
        description="Qwen3-VL (instruct, dense and MoE)",
    ),
    ModelGroupSpec(
        name="llava-1.5",
        tasks=VL_TASKS,
        architectures=("LlavaForConditionalGeneration",),
        model_types=("llava",),
        hub_ids=_hubs(("llava-hf/llava-1.5-7b-hf", "llava-hf/llava-1.5-13b-hf")),
        sizes=("7B", "13B"),
        lora_targets=LLAVA_TARGETS,
        frameworks=("pt",),
        description="LLaVA 1.5 (llava-hf): 'USER: <image>\\n... ASSISTANT:', 576 image tokens per 336px image",
    ),
    ModelGroupSpec(
        name="llava-next",
        tasks=VL_TASKS,
        architectures=("LlavaNextForConditionalGeneration",),
        model_types=("llava_next",),
        hub_ids=_hubs(
            (
                "llava-hf/llava-v1.6-mistral-7b-hf",
                "llava-hf/llava-v1.6-vicuna-7b-hf",
                "llava-hf/llama3-llava-next-8b-hf",
            )
        ),
        sizes=("7B", "8B", "13B", "34B"),
        lora_targets=LLAVA_TARGETS,
        frameworks=("pt",),
        description="LLaVA-NeXT / 1.6 (llava-hf): any-resolution tiles, image tokens from the processor",
    ),
    ModelGroupSpec(
        name="idefics3",
        tasks=VL_TASKS,
        architectures=("Idefics3ForConditionalGeneration", "SmolVLMForConditionalGeneration"),
        model_types=("idefics3", "smolvlm"),
        hub_ids=_hubs(("HuggingFaceM4/Idefics3-8B-Llama3", "HuggingFaceTB/SmolVLM-Instruct")),
        sizes=("256M", "500M", "2B", "8B"),
        lora_targets=LM_TARGETS,
        frameworks=("pt",),
        description="Idefics3 / SmolVLM (matched and served through their processor; not covered by a tiny-model test)",
    ),
)

_BY_TYPE = {t: g for g in VL_GROUPS for t in g.model_types}
_BY_ARCH = {a: g for g in VL_GROUPS for a in g.architectures}


def vl_group_of(config: dict[str, Any]) -> ModelGroupSpec | None:
    """The VL group of a ``config.json`` mapping (``model_type`` first, then ``architectures``)."""
    group = _BY_TYPE.get(str(config.get("model_type") or ""))
    if group is not None:
        return group
    for arch in config.get("architectures") or ():
        if arch in _BY_ARCH:
            return _BY_ARCH[arch]
    return None


def vl_group_of_dir(model_dir: str | os.PathLike) -> ModelGroupSpec | None:
    """The VL group of a model folder (reads its ``config.json`` only); ``None`` when not a VL model."""
    path = Path(os.path.expanduser(str(model_dir))) / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return vl_group_of(config) if isinstance(config, dict) else None
