"""openmind-mm's plugin: multimodal tasks (vision, audio, diffusion) and their wrappers.

Registration only; imports no framework. Default models are openMind 1.0's
(``native_pipelines.json``: Modelers repo and revision per task and framework).
"""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import DatasetSpec, DefaultModel, PipelineWrapperSpec, TaskSpec
from openmind.mm import errors  # noqa: F401  (declares the OM-I3xx / OM-M3xx codes for the catalogue)

SDXL = "PyTorch-NPU/stable-diffusion-xl-base-1_0"


def om(repo: str, revision: str, framework: str = "pt", backend: str = "transformers") -> DefaultModel:
    return DefaultModel(f"om::{repo}", revision, framework=framework, backend=backend)


def task(name, aliases, description, input_schema, output_schema, *defaults) -> TaskSpec:
    return TaskSpec(
        name=name,
        domain="mm",
        aliases=aliases,
        description=description,
        input_schema=input_schema,
        output_schema=output_schema,
        default_models=tuple(defaults),
    )


IMAGE = "image (path, file:// or data: URL, PIL, numpy)"
AUDIO = "audio (.wav path/URL, numpy + sampling_rate)"
INFERENCE_TASKS = (
    task(
        "text2image",
        ("text-to-image", "text_to_image"),
        "Generate images from a prompt (diffusers).",
        "str",
        "PIL.Image (list when num_images_per_prompt > 1)",
        om(SDXL, "62a0669", backend="diffusers"),
        om("AI-Research/stable-diffusion-3-medium-diffusers", "09fadbb", "ms", "mindone"),
    ),
    task(
        "image-to-image",
        ("image_to_image", "img2img"),
        "Change an image following a prompt (diffusers).",
        "{image, prompt}",
        "PIL.Image",
        om(SDXL, "62a0669", backend="diffusers"),
        om(SDXL, "62a0669", "ms", "mindone"),
    ),
    task(
        "inpainting",
        ("image-inpainting",),
        "Repaint the masked part of an image following a prompt (diffusers).",
        "{image, mask_image, prompt}",
        "PIL.Image",
        om(SDXL, "62a0669", backend="diffusers"),
    ),
    task(
        "text-to-video",
        ("text_to_video", "text2video"),
        "Generate a video (frames) from a prompt (diffusers).",
        "str",
        "list[PIL.Image] (frames)",
        om("AI-Research/text-to-video-ms-1.7b", "2142e14", backend="diffusers"),
    ),
    TaskSpec(
        name="mm-chat",
        domain="mm",
        aliases=("vl-chat", "multimodal-chat", "image-text-to-text"),
        description="Chat about images: messages with text and image parts (vision-language models; "
        "`chat` on a VL folder is this task).",
        input_schema="messages with text / image_url / image parts, or {messages, images} with <image> placeholders",
        output_schema="{role: assistant, content}",
        capabilities=("generative", "chat"),
    ),
    task(
        "image-classification",
        ("image_classification",),
        "Label an image.",
        IMAGE,
        "list[{label, score}]",
        om("PyTorch-NPU/beit_base_patch16_224", "a46c2b5"),
    ),
    task(
        "zero-shot-image-classification",
        ("zero_shot_image_classification",),
        "Score an image against labels given at call time (CLIP/SigLIP).",
        IMAGE + ", candidate_labels",
        "list[{score, label}]",
        om("PyTorch-NPU/siglip_so400m_patch14_384", "94e5462"),
    ),
    task(
        "object-detection",
        ("object_detection",),
        "Find objects: boxes with labels and scores.",
        IMAGE,
        "list[{score, label, box}]",
    ),
    task(
        "zero-shot-object-detection",
        ("zero_shot_object_detection",),
        "Find objects named at call time (OWL-ViT).",
        IMAGE + ", candidate_labels",
        "list[{score, label, box}]",
        om("PyTorch-NPU/owlvit_base_patch32", "ff06496"),
    ),
    task(
        "depth-estimation",
        ("depth_estimation",),
        "Estimate the depth of each pixel.",
        IMAGE,
        "{predicted_depth, depth: PIL.Image}",
        om("PyTorch-NPU/dpt_large", "270fa97"),
    ),
    task(
        "mask-generation",
        ("mask_generation",),
        "Segment everything in an image (SAM).",
        IMAGE,
        "{masks, scores}",
        om("PyTorch-NPU/sam_vit_base", "d0ad399"),
    ),
    task(
        "image-to-text",
        ("image-captioning", "image_to_text"),
        "Describe an image.",
        IMAGE,
        "list[{generated_text}]",
        om("PyTorch-NPU/blip-image-captioning-large", "059b23b"),
    ),
    task(
        "visual-question-answering",
        ("vqa", "visual_question_answering"),
        "Answer a question about an image.",
        "{image, question}",
        "list[{answer}] | list[{score, answer}]",
        om("PyTorch-NPU/blip_vqa_base", "4450392"),
    ),
    task(
        "image-feature-extraction",
        ("image_feature_extraction",),
        "Hidden states of an image encoder.",
        IMAGE,
        "nested list of floats",
    ),
    task(
        "automatic-speech-recognition",
        ("asr", "speech-recognition"),
        "Transcribe speech.",
        AUDIO,
        "{text}",
    ),
    task(
        "audio-classification",
        ("audio_classification",),
        "Label a sound.",
        AUDIO,
        "list[{label, score}]",
    ),
    task(
        "text-to-speech",
        ("text-to-audio", "tts"),
        "Speak a text.",
        "str",
        "{audio, sampling_rate} (a .wav with --output-dir)",
    ),
)

#: task -> "module:attr" of its framework-neutral wrapper (openmind.mm.pipelines)
WRAPPERS = {
    "text2image": "openmind.mm.pipelines.diffusion:TextToImagePipeline",
    "image-to-image": "openmind.mm.pipelines.diffusion:ImageToImagePipeline",
    "inpainting": "openmind.mm.pipelines.diffusion:InpaintingPipeline",
    "text-to-video": "openmind.mm.pipelines.diffusion:TextToVideoPipeline",
    "mm-chat": "openmind.mm.vl.chat:VLChatPipeline",
    "image-classification": "openmind.mm.pipelines.vision:ImageClassificationPipeline",
    "zero-shot-image-classification": "openmind.mm.pipelines.vision:ZeroShotImageClassificationPipeline",
    "object-detection": "openmind.mm.pipelines.vision:ObjectDetectionPipeline",
    "zero-shot-object-detection": "openmind.mm.pipelines.vision:ZeroShotObjectDetectionPipeline",
    "depth-estimation": "openmind.mm.pipelines.vision:DepthEstimationPipeline",
    "mask-generation": "openmind.mm.pipelines.vision:MaskGenerationPipeline",
    "image-to-text": "openmind.mm.pipelines.vision:ImageToTextPipeline",
    "visual-question-answering": "openmind.mm.pipelines.vision:VisualQuestionAnsweringPipeline",
    "image-feature-extraction": "openmind.mm.pipelines.vision:ImageFeatureExtractionPipeline",
    "automatic-speech-recognition": "openmind.mm.pipelines.audio:SpeechRecognitionPipeline",
    "audio-classification": "openmind.mm.pipelines.audio:AudioClassificationPipeline",
    "text-to-speech": "openmind.mm.pipelines.audio:TextToSpeechPipeline",
}


@hookimpl
def openmind_register_tasks(register):
    for spec in INFERENCE_TASKS:
        register(spec)
    register(
        TaskSpec(
            name="mm-sft",
            domain="mm",
            kind_of="training",
            aliases=("multimodal-sft",),
            description="Supervised fine-tuning on conversations with images/videos/audios.",
        )
    )


@hookimpl
def openmind_register_pipeline_wrappers(register):
    for name, impl in WRAPPERS.items():
        register(PipelineWrapperSpec(task=name, impl=impl, description=f"framework-neutral {name} wrapper"))


@hookimpl(tryfirst=True)
def openmind_infer_task(model_dir, config):
    """diffusers folders (by the pipeline class in model_index.json) and transformers folders with
    an image/audio processor (by architecture)."""
    from openmind.mm.folders import infer_media_task

    return infer_media_task(model_dir)


@hookimpl
def openmind_register_model_groups(register):
    from openmind.mm.vl.groups import VL_GROUPS

    for spec in VL_GROUPS:
        register(spec)


@hookimpl
def openmind_register_datasets(register):
    # The format itself (messages + images/videos/audios with placeholders, and its checks) is
    # implemented by openmind-data; the spec lives here because the task is openmind-mm's.
    register(
        DatasetSpec(
            name="multimodal-sft",
            task="mm-sft",
            columns=("messages", "images", "videos", "audios"),
            description="Conversations whose <image>/<video>/<audio> placeholders match the listed media.",
        )
    )
