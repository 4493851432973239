"""Plugin ``nlp-training``: trainer wrappers and training verbs (registration only)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import CommandSpec, TrainerWrapperSpec
from openmind.nlp.training import errors  # noqa: F401  (declares the OM-T0xx codes for the catalogue)

_BASE = "openmind.nlp.training.base"

TRAINER_WRAPPERS = (
    TrainerWrapperSpec(task="pt", impl=f"{_BASE}:PretrainWrapper", description="Continued pre-training on text."),
    TrainerWrapperSpec(task="sft", impl=f"{_BASE}:SFTWrapper", description="Supervised fine-tuning."),
    TrainerWrapperSpec(task="dpo", impl=f"{_BASE}:DPOWrapper", description="DPO (sigmoid, hinge, ipo, robust)."),
    TrainerWrapperSpec(task="rm", impl=f"{_BASE}:RMWrapper", description="Reward model on preference pairs."),
    TrainerWrapperSpec(task="kto", impl=f"{_BASE}:KTOWrapper", description="KTO on answers with a kto_tag."),
    TrainerWrapperSpec(task="orpo", impl=f"{_BASE}:ORPOWrapper", description="ORPO on chosen/rejected pairs."),
    TrainerWrapperSpec(task="simpo", impl=f"{_BASE}:SimPOWrapper", description="SimPO on chosen/rejected pairs."),
    TrainerWrapperSpec(task="grpo", impl=f"{_BASE}:GRPOWrapper", description="GRPO on prompts + reward functions."),
)

COMMANDS = (
    CommandSpec(
        name="train",
        impl="openmind.nlp.training.cli:TrainCommand",
        help="train a model (pt, sft, dpo, rm, kto, orpo, simpo, grpo; full, freeze, lora, qlora)",
    ),
    CommandSpec(
        name="export",
        impl="openmind.nlp.training.cli:ExportCommand",
        help="merge a LoRA adapter into its base and write safetensors (+ --push)",
    ),
)


@hookimpl
def openmind_register_trainer_wrappers(register):
    for spec in TRAINER_WRAPPERS:
        register(spec)


@hookimpl
def openmind_register_commands(register):
    for spec in COMMANDS:
        register(spec)
