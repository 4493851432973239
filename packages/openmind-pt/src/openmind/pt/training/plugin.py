"""Plugin ``pt-training``: PyTorch trainers (registration only; imports no torch)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import TrainerSpec

_BASE = ("torch>=2.1", "transformers>=4.45", "peft>=0.12", "accelerate>=0.30")
_TYPES = ("full", "freeze", "lora", "qlora")
_IMPL = "openmind.pt.training.trainers"

TRAINERS = (
    TrainerSpec(
        task="pt",
        framework="pt",
        impl=f"{_IMPL}:PretrainTrainer",
        requires=_BASE,
        finetuning_types=_TYPES,
        note="packing, padding-free; qlora needs CUDA + bitsandbytes",
        description="Continued pre-training on transformers' Trainer.",
    ),
    TrainerSpec(
        task="sft",
        framework="pt",
        impl=f"{_IMPL}:SFTTrainer",
        requires=_BASE,
        finetuning_types=_TYPES,
        note="packing, padding-free; qlora needs CUDA + bitsandbytes",
        description="Supervised fine-tuning on transformers' Trainer (logits only where trained).",
    ),
    TrainerSpec(
        task="dpo",
        framework="pt",
        impl=f"{_IMPL}:DPOTrainer",
        requires=(*_BASE, "trl>=0.20"),
        finetuning_types=_TYPES,
        note="trl DPOTrainer: sigmoid, hinge, ipo, robust",
        description="Direct preference optimisation through trl.",
    ),
    TrainerSpec(
        task="rm",
        framework="pt",
        impl=f"{_IMPL}:RewardTrainer",
        requires=(*_BASE, "trl>=0.20"),
        finetuning_types=_TYPES,
        note="trl RewardTrainer",
        description="Reward model (sequence classification) through trl.",
    ),
)


@hookimpl
def openmind_register_trainers(register):
    for spec in TRAINERS:
        register(spec)
