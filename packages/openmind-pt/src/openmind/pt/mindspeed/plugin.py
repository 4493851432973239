"""Plugin ``pt-mindspeed``: the MindSpeed backend of framework ``pt`` (registration only).

Its trainer specs carry ``note="needs Ascend"`` in the support matrix and require torch_npu and
MindSpeed; where they are installed (Ascend machines) it is preferred over the default PyTorch
trainers for pt / sft / dpo, elsewhere ``select()`` falls back to them. ``OPENMIND_DISABLE_PLUGINS=
pt-mindspeed`` turns it off on an Ascend machine. It also registers the ``mindspeed`` argument
group of ``openmind train`` (parallel sizes, the MindSpeed-LLM checkout, its prompt type).
"""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import ArgumentGroupSpec, TrainerSpec
from openmind.pt.mindspeed import errors  # noqa: F401  (declares OM-PT0xx for the catalogue; imports no torch)

BACKEND = "mindspeed"
NOTE = "needs Ascend (MindSpeed-LLM + torch_npu + CANN); tensor/pipeline parallel"
REQUIRES = ("torch>=2.1", "torch-npu>=2.1", "mindspeed>=0.6", "transformers>=4.45")
#: preferred over the default PyTorch trainers wherever MindSpeed is installed (Ascend machines)
PRIORITY = 10
DESCRIPTIONS = {
    "pt": "Continued pre-training through MindSpeed-LLM's pretrain_gpt.py (Megatron), launched with torchrun",
    "sft": "Supervised fine-tuning through MindSpeed-LLM's posttrain_gpt.py --stage sft, launched with torchrun",
    "dpo": "DPO through MindSpeed-LLM's posttrain_gpt.py --stage dpo (sigmoid, hinge, ipo), launched with torchrun",
}


@hookimpl
def openmind_register_trainers(register):
    for stage, description in DESCRIPTIONS.items():
        register(
            TrainerSpec(
                task=stage,
                framework="pt",
                backend=BACKEND,
                impl="openmind.pt.mindspeed.trainer:MindSpeedTrainer",
                requires=REQUIRES,
                priority=PRIORITY,
                finetuning_types=("full", "lora"),
                note=NOTE,
                description=description,
            )
        )


@hookimpl
def openmind_register_argument_groups(register):
    register(
        ArgumentGroupSpec(
            name="mindspeed",
            impl="openmind.pt.mindspeed.args:MindSpeedArguments",
            verbs=("train",),
            description="MindSpeed backend (Ascend): tensor/pipeline parallel sizes, MindSpeed-LLM checkout, prompt type.",
        )
    )
