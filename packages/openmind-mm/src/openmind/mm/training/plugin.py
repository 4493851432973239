"""Plugin ``mm-training``: the ``mm-sft`` trainer wrapper and the ``multimodal`` argument group
(registration only; imports no framework)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import ArgumentGroupSpec, TrainerWrapperSpec


@hookimpl
def openmind_register_trainer_wrappers(register):
    register(
        TrainerWrapperSpec(
            task="mm-sft",
            impl="openmind.mm.training.wrapper:VLSFTWrapper",
            description="Supervised fine-tuning of vision-language models on conversations with images.",
        )
    )


@hookimpl
def openmind_register_argument_groups(register):
    register(
        ArgumentGroupSpec(
            name="multimodal",
            impl="openmind.mm.training.args:MultimodalArguments",
            verbs=("train",),
            description="Vision-language training: frozen parts, image sizes, media files.",
        )
    )
