"""Multimodal model folders, recognised by kind (framework neutral; reads file names and JSON only).

=================  ==========================================================================
kind               recognised by
=================  ==========================================================================
``diffusers``      ``model_index.json`` (a diffusers pipeline: its ``_class_name`` names it)
``processor``      ``config.json`` + weights + ``preprocessor_config.json`` / ``processor_config.json``
``transformers``   ``config.json`` + weights
=================  ==========================================================================
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmind.core.api import read_config
from openmind.core.api import resolve_model as resolve_model_id
from openmind.core.errors import A_MISSING
from openmind.mm.errors import M_NOT_A_MEDIA_MODEL

PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")
PICKLE = ("*.bin", "*.pt", "*.pth", "*.pkl", "*.ckpt")


@dataclass(frozen=True)
class MediaFolder:
    path: str
    #: ``config.json`` (transformers) or ``model_index.json`` (diffusers)
    config: dict[str, Any]
    kind: str


def folder_kind(folder: str | os.PathLike) -> str | None:
    folder = Path(folder)
    if (folder / "model_index.json").is_file():
        return "diffusers"
    if (folder / "config.json").is_file():
        if any((folder / name).is_file() for name in PROCESSOR_FILES):
            return "processor"
        return "transformers"
    return None


def model_index(folder: str | os.PathLike) -> dict[str, Any]:
    path = Path(folder) / "model_index.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise M_NOT_A_MEDIA_MODEL.error(f"{path} is not valid JSON: {exc}", location=str(path)) from None


def resolve_media_model(
    model: str | os.PathLike | None,
    *,
    allow_pickle: bool = False,
    revision: str | None = None,
    hub: str | None = None,
    kinds: tuple[str, ...] = ("diffusers", "processor", "transformers"),
) -> MediaFolder:
    """Resolve ``model`` (folder or hub id) and check that it is a model folder of one of ``kinds``.

    OM-A004 (no model), OM-M001 (not found), OM-M301 (not a model of these kinds), OM-M102 (only
    pickle weights and ``allow_pickle`` off).
    """
    from openmind.core.pipelines.errors import M_PICKLE

    if model is None or str(model) == "":
        raise A_MISSING.error("no model given", hint="Pass model=PATH (SDK) or --model PATH (CLI).", location="model")
    path = Path(resolve_model_id(model, revision=revision, hub=hub))
    kind = folder_kind(path) if path.is_dir() else None
    if kind not in kinds:
        wanted = " or ".join(kinds)
        found = f"a {kind} folder" if kind else "no model_index.json or config.json"
        raise M_NOT_A_MEDIA_MODEL.error(f"{str(path)!r} is not a {wanted} model folder ({found})", location=str(path))
    files = [p for p in path.rglob("*") if p.is_file()]
    if not any(p.suffix == ".safetensors" for p in files):
        pickled = [p for p in files if any(p.match(g) for g in PICKLE)]
        if not pickled:
            raise M_NOT_A_MEDIA_MODEL.error(f"{str(path)!r} has no weights (*.safetensors)", location=str(path))
        if not allow_pickle:
            names = ", ".join(sorted(p.name for p in pickled)[:3])
            raise M_PICKLE.error(f"{str(path)!r} has only pickle weights ({names})", location=str(path))
    config = model_index(path) if kind == "diffusers" else read_config(path)
    return MediaFolder(str(path), config, kind)


#: diffusers pipeline class name (suffix) -> task
DIFFUSERS_TASKS = (
    ("InpaintPipeline", "inpainting"),
    ("Img2ImgPipeline", "image-to-image"),
    ("TextToVideoSDPipeline", "text-to-video"),
    ("VideoPipeline", "text-to-video"),
    ("Pipeline", "text2image"),
)
#: transformers architecture (suffix) -> task, first match wins
ARCHITECTURE_TASKS = (
    ("OwlViTForObjectDetection", "zero-shot-object-detection"),
    ("Owlv2ForObjectDetection", "zero-shot-object-detection"),
    ("GroundingDinoForObjectDetection", "zero-shot-object-detection"),
    ("ForObjectDetection", "object-detection"),
    ("ForImageClassification", "image-classification"),
    ("ForDepthEstimation", "depth-estimation"),
    ("SamModel", "mask-generation"),
    ("CLIPModel", "zero-shot-image-classification"),
    ("SiglipModel", "zero-shot-image-classification"),
    ("ForQuestionAnswering", "visual-question-answering"),  # only with a processor folder
    ("ForConditionalGeneration", "image-to-text"),  # only with an image processor
    ("VisionEncoderDecoderModel", "image-to-text"),
    ("ForCTC", "automatic-speech-recognition"),
    ("ForSpeechSeq2Seq", "automatic-speech-recognition"),
    ("WhisperForConditionalGeneration", "automatic-speech-recognition"),
    ("ForAudioClassification", "audio-classification"),
    ("ForSequenceClassification", "audio-classification"),  # only with a feature extractor, below
    ("ForTextToSpeech", "text-to-speech"),
    ("VitsModel", "text-to-speech"),
    ("Model", "image-feature-extraction"),
)


#: architecture endings of text-to-speech models, whose folders need no processor file
TEXT_TO_SPEECH = ("VitsModel", "ForTextToSpeech", "ForTextToWaveform")


def infer_media_task(model_dir: str | os.PathLike) -> str | None:
    """The task of a diffusers folder or a transformers folder with a processor; ``None`` otherwise."""
    kind = folder_kind(model_dir)
    if kind == "diffusers":
        name = str(model_index(model_dir).get("_class_name", ""))
        return next((task for suffix, task in DIFFUSERS_TASKS if name.endswith(suffix)), None)
    if kind == "transformers":  # no processor: text-to-speech models (VITS / MMS-TTS) take text
        archs = read_config(model_dir).get("architectures") or []
        if any(a.endswith(TEXT_TO_SPEECH) for a in archs):
            return "text-to-speech"
        return None
    if kind != "processor":
        return None
    config = read_config(model_dir)
    from openmind.mm.vl.groups import vl_group_of

    if vl_group_of(config) is not None:
        return "mm-chat"
    processor = {}
    for file in PROCESSOR_FILES:
        try:
            processor.update(json.loads((Path(model_dir) / file).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    audio = "feature_size" in processor or "sampling_rate" in processor
    archs = config.get("architectures") or []
    for arch in archs:
        for suffix, task in ARCHITECTURE_TASKS:
            if not arch.endswith(suffix):
                continue
            if task == "audio-classification" and suffix == "ForSequenceClassification" and not audio:
                continue
            if task in ("image-feature-extraction", "image-to-text") and audio:
                continue
            return task
    return None
