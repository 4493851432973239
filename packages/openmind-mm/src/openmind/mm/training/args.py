"""The ``multimodal`` argument group of ``openmind train`` (LLaMA-Factory's names)."""

from __future__ import annotations

from dataclasses import dataclass

from openmind.core.args import arg


@dataclass
class MultimodalArguments:
    freeze_vision_tower: bool = arg(True, "mm-sft: keep the vision encoder frozen.")
    freeze_multi_modal_projector: bool = arg(True, "mm-sft: keep the vision-to-text projector frozen.")
    freeze_language_model: bool = arg(False, "mm-sft (full/freeze): keep the language model frozen.")
    image_max_pixels: int | None = arg(None, "mm-sft: resize larger images down to this many pixels.")
    image_min_pixels: int | None = arg(None, "mm-sft: resize smaller images up to this many pixels.")
    media_dir: str | None = arg(None, "Folder relative media paths are looked up in first.")
    media_max_mb: float = arg(64.0, "Largest media file accepted in training data (MiB).")
