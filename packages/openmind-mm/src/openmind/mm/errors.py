"""Error codes of openmind-mm (multimodal inference).

``OM-I3xx``: media inputs (images, audio, masks); ``OM-M3xx``: multimodal model folders and backends.
"""

from __future__ import annotations

from openmind.core.errors import ModelError, PipelineError, define

I_BAD_IMAGE = define(
    "OM-I301",
    "Unreadable image input",
    "Pass an image as a file path, a file:// URL, a base64 data URL (data:image/png;base64,...), a PIL image "
    "or a numpy array (H x W, H x W x 3 or H x W x 4, uint8 or floats in [0, 1]).",
    PipelineError,
)
I_BAD_AUDIO = define(
    "OM-I302",
    "Unreadable audio input",
    "Pass audio as a .wav file path / file:// URL, a base64 data URL of a WAV file, a mono numpy array with "
    "sampling_rate=..., or {'array': ..., 'sampling_rate': ...}.",
    PipelineError,
)
I_BAD_MEDIA_PARAM = define(
    "OM-I303",
    "Invalid image/video generation parameter",
    "Check the value: sizes are multiples of 8, steps >= 1, guidance_scale >= 0, 0 < strength <= 1, a mask for "
    "inpainting, a known scheduler (`openmind run text-to-image --help`).",
    PipelineError,
)
M_NOT_A_MEDIA_MODEL = define(
    "OM-M301",
    "Folder is not a model of this kind",
    "A diffusers pipeline folder holds model_index.json; a transformers vision/audio model holds config.json, "
    "weights and its processor (preprocessor_config.json / processor_config.json).",
    ModelError,
)
M_BACKEND_MISSING = define(
    "OM-M302",
    "No backend runs this model here",
    "The framework's stack for this model is not installed or does not run on this machine; see "
    "`openmind list pipelines` and docs/SUPPORT.md for what runs where.",
    ModelError,
)
I_BAD_CONTENT_PART = define(
    "OM-I304",
    "Invalid message content part",
    'A content part is {"type": "text", "text": ...}, {"type": "image_url", "image_url": {"url": ...}} (a data: '
    'URL, a file:// URL or a path) or {"type": "image", "image": PIL image | path}; a message\'s content is a string '
    "or a list of such parts.",
    PipelineError,
)
I_MEDIA_MISMATCH = define(
    "OM-I305",
    "Images and image placeholders do not match",
    "Write one <image> placeholder in the messages per entry of `images` (LLaMA-Factory style), or put the images "
    "in the messages as content parts instead of a separate `images` list.",
    PipelineError,
)
I_MEDIA_LIMIT = define(
    "OM-I306",
    "Image over the server's limits",
    "Send fewer or smaller images (the limits are the deploy arguments --max-images, --max-image-bytes and "
    "--max-image-pixels), or raise the limit when you start the server.",
    PipelineError,
)
I_REMOTE_MEDIA = define(
    "OM-I307",
    "Media URL refused",
    "Send the image as a base64 data URL (data:image/png;base64,...). `openmind deploy` downloads http(s) URLs "
    "only with --allow-remote-media, and reads file:// URLs only under its --media-root folders.",
    PipelineError,
)
M_VL_FRAMEWORK = define(
    "OM-M303",
    "Vision-language chat does not run on this framework",
    "Vision-language chat runs on PyTorch (transformers' Qwen2-VL / LLaVA classes and processors): use "
    "--framework pt. MindSpore has no counterpart of these models on CPU/Ascend here (see docs/SUPPORT.md).",
    ModelError,
)
