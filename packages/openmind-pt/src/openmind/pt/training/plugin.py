"""Plugin ``pt-training``: PyTorch trainers (registration only; imports no torch)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import RewardSpec, TrainerSpec

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
    TrainerSpec(
        task="kto",
        framework="pt",
        impl=f"{_IMPL}:KTOTrainer",
        requires=(*_BASE, "trl>=1.0"),
        finetuning_types=_TYPES,
        note="trl KTOTrainer; rows with a kto_tag (label)",
        description="KTO (desirable / undesirable answers) through trl.",
    ),
    TrainerSpec(
        task="orpo",
        framework="pt",
        impl=f"{_IMPL}:ORPOTrainer",
        requires=(*_BASE, "trl>=1.0"),
        finetuning_types=_TYPES,
        note="trl ORPOTrainer (experimental in trl)",
        description="ORPO (odds ratio, no reference model) through trl.",
    ),
    TrainerSpec(
        task="simpo",
        framework="pt",
        impl=f"{_IMPL}:SimPOTrainer",
        requires=(*_BASE, "trl>=1.0"),
        finetuning_types=_TYPES,
        note="trl CPOTrainer with loss_type=simpo, cpo_alpha=0",
        description="SimPO (length-normalised, reference-free) through trl.",
    ),
    TrainerSpec(
        task="grpo",
        framework="pt",
        impl=f"{_IMPL}:GRPOTrainer",
        requires=(*_BASE, "trl>=1.0"),
        finetuning_types=_TYPES,
        note="trl GRPOTrainer; rewards: exact_match, regex, length, module:function",
        description="GRPO (group-relative online RL with reward functions) through trl.",
    ),
)


#: vision-language SFT: task mm-sft is openmind-mm's, so it is registered only with openmind-mm installed
VL_TRAINER = TrainerSpec(
    task="mm-sft",
    framework="pt",
    impl="openmind.pt.training.vl:VLSFTTrainer",
    requires=(*_BASE, "openmind-mm>=2.0", "pillow>=9"),
    finetuning_types=("full", "freeze", "lora"),
    note="AutoModelForImageTextToText (Qwen2-VL family); images only; no packing",
    description="Vision-language SFT on transformers' Trainer (LoRA on the language model by default).",
)


@hookimpl
def openmind_register_trainers(register):
    for spec in TRAINERS:
        register(spec)
    from openmind.pt.plugin import mm_installed

    if mm_installed():
        register(VL_TRAINER)


REWARDS = (
    RewardSpec(
        name="exact_match",
        impl="openmind.pt.training.rewards:exact_match",
        description="1.0 when the completion equals the row's reference answer (stripped), else 0.0.",
    ),
    RewardSpec(
        name="regex",
        impl="openmind.pt.training.rewards:regex",
        takes_param="required",
        description="regex:PATTERN: 1.0 when the completion matches PATTERN (re.search), else 0.0.",
    ),
    RewardSpec(
        name="length",
        impl="openmind.pt.training.rewards:length",
        takes_param="optional",
        description="length:N: -|characters - N| / N (default N=100).",
    ),
)


@hookimpl
def openmind_register_rewards(register):
    for spec in REWARDS:
        register(spec)
