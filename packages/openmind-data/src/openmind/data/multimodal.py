"""Preparing multimodal-sft rows for a vision-language model: visual tokens + pixel inputs.

A row's ``<image>`` placeholders become what the model's processor would put in the text: the
chat template's marker for an image part (Qwen2-VL: ``<|vision_start|><|image_pad|><|vision_end|>``)
with the image token repeated as many times as the image processor's output gives visual features
for that image (Qwen2-VL family: ``prod(image_grid_thw) / merge_size**2``). Then the text encoder does the rest as for text SFT (one tokenisation of the
whole conversation, labels over the assistant turns only), and the image processor's arrays are
stored beside ``input_ids`` in the prepared Arrow dataset (``pixel_values`` flattened +
``pixel_values_shape``, ``image_grid_thw`` ...), so a cache hit needs no image decoding.

A row whose visual-token count does not match its images after truncation (``cutoff_len`` cut an
image) is refused with OM-D007 before training: the "image features and image tokens do not
match" failure of VLM trainers, found at preparation time with the row named.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmind.data.encoding import OK, TRUNCATED, Encoder
from openmind.data.errors import D_MEDIA_MODEL

PLACEHOLDER = "<image>"
#: image-processor outputs that are not model inputs
_SKIP_KEYS = ("image_sizes_orig",)


@dataclass
class VisualTokens:
    """How one image appears in the token sequence of a model."""

    #: the token the model replaces by visual features (``<|image_pad|>``, ``<image>``)
    image_token: str
    image_token_id: int
    #: what the chat template writes for one image part, containing ``image_token`` once
    marker: str
    #: ``qwen2_vl`` (grid / merge_size**2); other rules join with the families they serve
    rule: str
    merge_size: int = 2

    def counts(self, outputs: dict[str, Any], n_images: int) -> list[int]:
        if self.rule == "qwen2_vl":
            grid = outputs["image_grid_thw"]
            return [int(g[0] * g[1] * g[2]) // (self.merge_size**2) for g in grid]
        raise ValueError(f"unknown visual-token rule {self.rule!r}")

    def expand(self, count: int) -> str:
        return self.marker.replace(self.image_token, self.image_token * count, 1)


def image_marker(tokenizer: Any, image_token: str) -> str:
    """What the model's chat template writes for one image content part (the image token alone
    when the template does not render image parts)."""
    messages = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "AAAA"}, {"type": "image"}, {"type": "text", "text": "BBBB"}],
        }
    ]
    try:
        text = tokenizer.apply_chat_template(messages, tokenize=False)
    except Exception:  # noqa: BLE001 - a template that takes only strings
        return image_token
    if not isinstance(text, str) or "AAAA" not in text or "BBBB" not in text:
        return image_token
    marker = text.split("AAAA", 1)[1].split("BBBB", 1)[0]
    return marker if marker.count(image_token) == 1 else image_token


def visual_tokens(tokenizer: Any, image_processor: Any, config: dict[str, Any]) -> VisualTokens:
    """The :class:`VisualTokens` of a model from its tokenizer, image processor and config.json."""
    model_type = str(config.get("model_type", ""))
    token_id = config.get("image_token_id", config.get("image_token_index"))
    if token_id is None:
        raise D_MEDIA_MODEL.error(
            f"model type {model_type!r}: config.json names no image token (image_token_id / image_token_index)",
            location="config.json",
        )
    token = tokenizer.convert_ids_to_tokens(int(token_id))
    if token is None or tokenizer.convert_tokens_to_ids(token) != int(token_id):
        raise D_MEDIA_MODEL.error(
            f"config.json's image token id {token_id} is not a token of the tokenizer", location="config.json"
        )
    marker = image_marker(tokenizer, token)
    if "grid_thw" in " ".join(getattr(image_processor, "model_input_names", []) or []) or model_type.startswith(
        ("qwen2_vl", "qwen2_5_vl")
    ):
        merge = int(getattr(image_processor, "merge_size", None) or 2)
        return VisualTokens(token, int(token_id), marker, "qwen2_vl", merge_size=merge)
    raise D_MEDIA_MODEL.error(
        f"openmind cannot tell how many visual tokens a {model_type!r} model uses per image "
        "(supported: the Qwen2-VL family; LLaVA's official templates take content-part lists, which the "
        "text templates do not render yet)",
        location="config.json",
    )


def image_processor_digest(image_processor: Any) -> str:
    """What the cache key takes from the image processor (its class and settings)."""
    try:
        settings = image_processor.to_json_string()
    except Exception:  # noqa: BLE001
        settings = repr(sorted(vars(image_processor).items()))
    return f"{type(image_processor).__qualname__}:{settings}"


class MediaEncoder(Encoder):
    """:class:`~openmind.data.encoding.Encoder` for ``mm-sft`` rows (see the module docstring).

    :param image_processor: the model's image processor (``AutoImageProcessor``).
    :param config: the model's ``config.json`` as a dict.
    """

    def __init__(self, tokenizer: Any, template: Any, image_processor: Any, config: dict[str, Any], **kwargs) -> None:
        kwargs.setdefault("stage", "sft")
        super().__init__(tokenizer, template, **kwargs)
        self.image_processor = image_processor
        self.visual = visual_tokens(tokenizer, image_processor, config)
        self.model_type = str(config.get("model_type", ""))
        self._keys: list[str] | None = None
        #: dtype of each array the image processor returns (an image-less row stores empty arrays of
        #: the same dtype, so that text-only and image datasets concatenate: LLaMA-Factory's
        #: `dataset: mllm_demo,identity,alpaca_en_demo`)
        self._dtypes: dict[str, Any] = {}

    def output_columns(self) -> list[str]:
        return ["input_ids", "labels", *self.array_columns()]

    def array_columns(self) -> list[str]:
        if self._keys is None:
            from PIL import Image

            probe = self.image_processor(images=[Image.new("RGB", (64, 64))], return_tensors="np")
            self._keys = [k for k in probe if k not in _SKIP_KEYS]
            self._dtypes = {k: getattr(probe[k], "dtype", None) for k in self._keys}
        return [c for k in self._keys for c in (k, f"{k}_shape")]

    def _pixels(self, paths: list[str]) -> dict[str, Any]:
        from PIL import Image

        images = []
        for p in paths:
            with Image.open(p) as im:
                images.append(im.convert("RGB"))
        return dict(self.image_processor(images=images, return_tensors="np"))

    def __call__(self, batch: dict[str, list]) -> dict[str, list]:
        import numpy as np

        n = len(batch["messages"])
        arrays: dict[str, list] = {c: [] for c in self.array_columns()}
        counts: list[list[int]] = []
        problems: list[str | None] = [None] * n
        messages = []
        for i in range(n):
            paths = list(batch.get("images", [[]] * n)[i] or [])
            if batch.get("videos") and batch["videos"][i] or batch.get("audios") and batch["audios"][i]:
                problems[i] = "videos and audios are not trained yet (images only)"
            outputs = self._pixels(paths) if paths else {}
            row_counts = self.visual.counts(outputs, len(paths)) if paths else []
            counts.append(row_counts)
            for key in self._keys or []:
                empty = np.zeros((0,), dtype=self._dtypes.get(key) or np.float32)
                value = np.asarray(outputs[key]) if key in outputs else empty
                arrays[key].append(value.reshape(-1))
                arrays[f"{key}_shape"].append(np.asarray(value.shape, dtype=np.int64))
            queue = iter(row_counts)
            rewritten = []
            for m in batch["messages"][i]:
                content = m.get("content") or ""
                if PLACEHOLDER in content:
                    parts = content.split(PLACEHOLDER)
                    content = parts[0] + "".join(self.visual.expand(next(queue, 0)) + p for p in parts[1:])
                rewritten.append({**m, "content": content})
            messages.append(rewritten)
        out = self._sft({**batch, "messages": messages})
        token = self.visual.image_token_id
        for i in range(n):
            if problems[i] is None and out["_status"][i] in (OK, TRUNCATED) and out["_problems"][i] is None:
                found = sum(1 for t in out["input_ids"][i] if t == token)
                wanted = sum(counts[i])
                if found != wanted:
                    problems[i] = (
                        f"{wanted} visual tokens for {len(counts[i])} image(s) but {found} left after cutoff_len="
                        f"{self.cutoff_len} truncation: raise cutoff_len or make the images smaller"
                    )
                    out["_problems"][i] = json.dumps([{"field": "images", "reason": problems[i], "code": "OM-D007"}])
            elif problems[i] is not None:
                out["_problems"][i] = json.dumps([{"field": "videos", "reason": problems[i], "code": "OM-D015"}])
        out.update(arrays)
        return out


def load_media_parts(model_dir: str | Path, *, trust_remote_code: bool = False, **processor_kwargs) -> tuple[Any, dict]:
    """The image processor and config.json of a vision-language model folder (OM-D015 when it has none)."""
    folder = Path(model_dir)
    config_file = folder / "config.json"
    config = json.loads(config_file.read_text(encoding="utf-8")) if config_file.is_file() else {}
    if not (folder / "preprocessor_config.json").is_file() and not (folder / "processor_config.json").is_file():
        raise D_MEDIA_MODEL.error(
            f"{str(folder)!r} has no image processor (preprocessor_config.json): multimodal rows need a "
            "vision-language model folder",
            location=str(folder),
        )
    from transformers import AutoImageProcessor

    kwargs = {k: v for k, v in processor_kwargs.items() if v is not None}
    try:
        processor = AutoImageProcessor.from_pretrained(str(folder), trust_remote_code=trust_remote_code, **kwargs)
    except (OSError, ValueError, ImportError) as exc:
        raise D_MEDIA_MODEL.error(
            f"cannot load the image processor of {str(folder)!r}: {type(exc).__name__}: {exc}", location=str(folder)
        ) from None
    return processor, config
