"""openmind-pt's plugin: PyTorch pipelines and trainers. Registration only; imports no torch."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import PipelineSpec
from openmind.pt import device  # noqa: F401  (declares OM-V001 for the catalogue; imports no torch)

REQUIRES = ("torch>=2.1", "transformers>=4.45")
GENERATION = "openmind.pt.pipelines.generation:TorchCausalLM"
#: task -> "module:attr" of its PyTorch pipeline (openmind.pt.pipelines)
PIPELINES = {
    "chat": GENERATION,
    "text-generation": GENERATION,
    # encoder-decoder folders load the seq2seq pipeline, others the decoder-only one
    "summarization": "openmind.pt.pipelines.seq2seq:TorchGenerative",
    "translation": "openmind.pt.pipelines.seq2seq:TorchGenerative",
    "text2text-generation": "openmind.pt.pipelines.seq2seq:TorchSeq2SeqLM",
    "question-answering": "openmind.pt.pipelines.question_answering:TorchQuestionAnswering",
    "zero-shot-classification": "openmind.pt.pipelines.hf_tasks:TorchZeroShotClassification",
    "table-question-answering": "openmind.pt.pipelines.hf_tasks:TorchTableQuestionAnswering",
    "feature-extraction": "openmind.pt.pipelines.hf_tasks:TorchFeatureExtraction",
    "text2emb": "openmind.pt.pipelines.embedding:TorchEmbedding",
    "text-classification": "openmind.pt.pipelines.classification:TorchTextClassification",
    "token-classification": "openmind.pt.pipelines.classification:TorchTokenClassification",
    "fill-mask": "openmind.pt.pipelines.classification:TorchFillMask",
}


VISION = "openmind.pt.pipelines.vision"
DIFFUSION = "openmind.pt.pipelines.diffusion"
#: openmind-mm's tasks: task -> (backend, "module:attr", extra requirements)
MM_PIPELINES = {
    # vision-language chat: AutoModelForImageTextToText + AutoProcessor (openmind.mm.vl)
    "mm-chat": ("transformers", "openmind.pt.pipelines.vl_chat:TorchVLChat", ("pillow",)),
    "text2image": ("diffusers", f"{DIFFUSION}:TorchTextToImage", ("diffusers>=0.30", "pillow")),
    "image-to-image": ("diffusers", f"{DIFFUSION}:TorchImageToImage", ("diffusers>=0.30", "pillow")),
    "inpainting": ("diffusers", f"{DIFFUSION}:TorchInpainting", ("diffusers>=0.30", "pillow")),
    "text-to-video": ("diffusers", f"{DIFFUSION}:TorchTextToVideo", ("diffusers>=0.30", "pillow")),
    "image-classification": ("transformers", f"{VISION}:TorchImageClassification", ("pillow",)),
    "zero-shot-image-classification": ("transformers", f"{VISION}:TorchZeroShotImageClassification", ("pillow",)),
    "object-detection": ("transformers", f"{VISION}:TorchObjectDetection", ("pillow",)),
    "zero-shot-object-detection": ("transformers", f"{VISION}:TorchZeroShotObjectDetection", ("pillow",)),
    "depth-estimation": ("transformers", f"{VISION}:TorchDepthEstimation", ("pillow",)),
    # transformers' SAM post-processing runs torchvision's NMS
    "mask-generation": ("transformers", f"{VISION}:TorchMaskGeneration", ("pillow", "torchvision")),
    "image-to-text": ("transformers", f"{VISION}:TorchImageTextGeneration", ("pillow",)),
    "visual-question-answering": ("transformers", f"{VISION}:TorchImageTextGeneration", ("pillow",)),
    "image-feature-extraction": ("transformers", f"{VISION}:TorchImageFeatureExtraction", ("pillow",)),
    "automatic-speech-recognition": ("transformers", f"{VISION}:TorchSpeechRecognition", ("numpy",)),
    "audio-classification": ("transformers", f"{VISION}:TorchAudioClassification", ("numpy",)),
    "text-to-speech": ("transformers", f"{VISION}:TorchTextToSpeech", ("numpy",)),
}


#: support-matrix notes of openmind-mm's tasks on PyTorch
MM_NOTES = {
    "mm-chat": "PyTorch only: openmind-ms implements no vision-language model (its native backend runs the "
    "Llama family and BERT); --framework ms is OM-M303",
}


def mm_installed() -> bool:
    """Whether openmind-mm (which registers these tasks) is installed: without it, openmind-pt
    registers no pipeline for them (they would be pipelines for unknown tasks). Imports nothing."""
    from importlib.util import find_spec

    return find_spec("openmind.mm") is not None


def register_mm_pipelines(register):
    if not mm_installed():
        return
    for task, (backend, impl, extra) in MM_PIPELINES.items():
        register(
            PipelineSpec(
                task=task,
                framework="pt",
                backend=backend,
                impl=impl,
                requires=(*REQUIRES, *extra, "openmind-mm>=2.0"),
                description=f"{task} on {backend} (CPU, CUDA, Ascend NPU via torch_npu)",
                note=MM_NOTES.get(task, ""),
            )
        )


@hookimpl
def openmind_register_pipelines(register):
    for task, impl in PIPELINES.items():
        register(
            PipelineSpec(
                task=task,
                framework="pt",
                backend="transformers",
                impl=impl,
                requires=REQUIRES,
                description=f"{task} on transformers (CPU, CUDA, Ascend NPU via torch_npu)",
            )
        )
    register_mm_pipelines(register)


@hookimpl
def openmind_env_info():
    """Devices PyTorch sees (imports torch; only `openmind env` calls this)."""
    from openmind.pt.device import describe_devices

    return describe_devices()
