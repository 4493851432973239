"""openmind-ms's plugin ``ms``: the native MindSpore backend (registration only; imports no MindSpore).

The native backend runs Hugging Face safetensors checkpoints of the Llama family and BERT
encoders on MindSpore's own kernels (CPU here; Ascend and GPU device targets where present). The
mindformers backend (Ascend production path) is a plugin of its own: ``ms-mindformers``
(:mod:`openmind.ms.mindformers.plugin`).
"""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import PipelineSpec, TrainerSpec
from openmind.ms import errors  # noqa: F401  (declares the OM-MS0xx codes for the catalogue; imports no MindSpore)
from openmind.ms.models.config import BERT_FAMILY, LLAMA_FAMILY  # plain data; imports no MindSpore

REQUIRES = ("mindspore>=2.3", "numpy<2", "transformers>=4.45")
BACKEND = "native"
NOTE = "Llama family + BERT on MindSpore (CPU, Ascend, GPU)"
#: the trainers' row of the support matrix (dpo is native; the other preference / RL stages are PyTorch only)
TRAINER_NOTE = (
    "Llama family on MindSpore (CPU, Ascend, GPU); packing; data parallel through msrun (--nproc, --nnodes); "
    "rm/kto/orpo/simpo/grpo: PyTorch only"
)
#: the dpo row: trl's sigmoid loss computed natively (no packing, one process)
DPO_NOTE = (
    "Llama family on MindSpore; trl's sigmoid DPO loss (pref_loss sigmoid, pref_beta), reference log-probs of "
    "the start weights; no packing, one process"
)
GENERATION = "openmind.ms.pipelines.generation:MindSporeCausalLM"
#: task -> "module:attr" of its MindSpore pipeline
PIPELINES = {
    "chat": GENERATION,
    "text-generation": GENERATION,
    "summarization": GENERATION,
    "translation": GENERATION,
    "text2emb": "openmind.ms.pipelines.embedding:MindSporeEmbedding",
    "feature-extraction": "openmind.ms.pipelines.feature_extraction:MindSporeFeatureExtraction",
    "fill-mask": "openmind.ms.pipelines.fill_mask:MindSporeFillMask",
    "text-classification": "openmind.ms.pipelines.classification:MindSporeTextClassification",
}
#: task -> the ``model_type`` values the native implementation runs (declared on each PipelineSpec,
#: so ``openmind list`` and ``Registry.group_frameworks`` know a group outside them is not on ms)
MODEL_TYPES = {
    "chat": tuple(LLAMA_FAMILY),
    "text-generation": tuple(LLAMA_FAMILY),
    "summarization": tuple(LLAMA_FAMILY),
    "translation": tuple(LLAMA_FAMILY),
    "text2emb": BERT_FAMILY,
    "feature-extraction": BERT_FAMILY,
    "fill-mask": BERT_FAMILY,
    "text-classification": (*LLAMA_FAMILY, *BERT_FAMILY),
}
#: training stage -> trainer
TRAINERS = {
    "sft": "openmind.ms.training.trainer:MindSporeTrainer",
    "pt": "openmind.ms.training.trainer:MindSporeTrainer",
    "dpo": "openmind.ms.training.trainer:MindSporeTrainer",
}


@hookimpl
def openmind_register_pipelines(register):
    for task, impl in PIPELINES.items():
        register(
            PipelineSpec(
                task=task,
                framework="ms",
                backend=BACKEND,
                impl=impl,
                requires=REQUIRES,
                note=NOTE,
                model_types=MODEL_TYPES[task],
                description=f"{task} on MindSpore (native Llama-family / BERT implementation, safetensors)",
            )
        )


@hookimpl
def openmind_register_trainers(register):
    for stage, impl in TRAINERS.items():
        register(
            TrainerSpec(
                task=stage,
                framework="ms",
                backend=BACKEND,
                impl=impl,
                requires=REQUIRES,
                finetuning_types=("full", "freeze", "lora"),
                note=DPO_NOTE if stage == "dpo" else TRAINER_NOTE,
                description=f"{stage} on MindSpore: compiled training step, AdamW, freeze, LoRA in PEFT format"
                + ("" if stage == "dpo" else ", packing"),
            )
        )


@hookimpl
def openmind_env_info():
    """What MindSpore sees (imports mindspore; only `openmind env` calls this)."""
    from importlib.util import find_spec

    if find_spec("mindspore") is None:
        return {"mindspore": "not installed"}
    try:
        from openmind.ms import runtime

        ms = runtime.mindspore_module()
        return {"mindspore": ms.__version__, "mindspore_device_targets": ", ".join(runtime.available_targets())}
    except Exception as exc:  # noqa: BLE001 - env must never crash
        return {"mindspore_error": f"{type(exc).__name__}: {exc}"}
