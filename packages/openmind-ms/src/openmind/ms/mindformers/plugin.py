"""Plugin ``ms-mindformers``: the mindformers backend of framework ``ms`` (registration only).

Its specs carry ``note="needs Ascend"`` in the support matrix and require ``mindformers``; on a
machine without it, ``select()`` falls back to the native backend of openmind-ms.
"""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import PipelineSpec, TrainerSpec

BACKEND = "mindformers"
NOTE = "needs Ascend (mindformers + CANN)"
REQUIRES = ("mindspore>=2.3", "mindformers>=1.3", "transformers>=4.45")
#: preferred over the native backend wherever mindformers is installed (Ascend machines)
PRIORITY = 10


@hookimpl
def openmind_register_pipelines(register):
    for task in ("chat", "text-generation"):
        register(
            PipelineSpec(
                task=task,
                framework="ms",
                backend=BACKEND,
                impl="openmind.ms.mindformers.pipeline:MindFormersCausalLM",
                requires=REQUIRES,
                priority=PRIORITY,
                note=NOTE,
                description=f"{task} through mindformers (Llama family; HF checkpoints translated)",
            )
        )


@hookimpl
def openmind_register_trainers(register):
    for stage in ("sft", "pt"):
        register(
            TrainerSpec(
                task=stage,
                framework="ms",
                backend=BACKEND,
                impl="openmind.ms.mindformers.trainer:MindFormersTrainer",
                requires=REQUIRES,
                priority=PRIORITY,
                finetuning_types=("full", "lora"),
                note=NOTE,
                description=f"{stage} through mindformers' Trainer, launched with msrun",
            )
        )
