"""Diffusion tasks: text-to-image, image-to-image, inpainting, text-to-video (diffusers folders).

Inputs: a prompt (``text2image``, ``text-to-video``), or ``{"image", "prompt"}`` (``image-to-image``)
and ``{"image", "mask_image", "prompt"}`` (``inpainting``), images as paths, URLs, PIL or numpy.
Outputs: one PIL image per prompt (a list when ``num_images_per_prompt`` > 1; a list of frames for
video); ``openmind run --output-dir`` writes them as PNG files. ``seed`` makes a run deterministic
(a CPU ``torch.Generator`` seeded with it, as openMind 1.0 did).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from openmind.core.errors import I_BAD_INPUT
from openmind.mm.errors import I_BAD_MEDIA_PARAM
from openmind.mm.media import load_image
from openmind.mm.pipelines.base import MediaWrapper


@dataclass(frozen=True)
class DiffusionParams:
    """Generation parameters (``None``: the diffusers pipeline's own default)."""

    num_inference_steps: int | None = None
    guidance_scale: float | None = None
    negative_prompt: str | list[str] | None = None
    height: int | None = None
    width: int | None = None
    num_images_per_prompt: int = 1
    seed: int | None = None
    #: a diffusers scheduler class name (``EulerDiscreteScheduler``) or short name (``euler``, ``ddim`` ...)
    scheduler: str | None = None
    #: image-to-image / inpainting: how much of the input image is re-noised, in (0, 1]
    strength: float | None = None
    #: text-to-video
    num_frames: int | None = None

    def check(self) -> None:
        def bad(name: str, rule: str) -> None:
            raise I_BAD_MEDIA_PARAM.error(f"{name}={getattr(self, name)!r}: {rule}", location=name)

        for name in ("height", "width"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 8 or value % 8):
                bad(name, "must be a multiple of 8 (>= 8)")
        for name in ("num_inference_steps", "num_images_per_prompt", "num_frames"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                bad(name, "must be an integer >= 1")
        if self.guidance_scale is not None and self.guidance_scale < 0:
            bad("guidance_scale", "must be >= 0")
        if self.strength is not None and not 0 < self.strength <= 1:
            bad("strength", "must be in (0, 1]")
        if self.seed is not None and not isinstance(self.seed, int):
            bad("seed", "must be an integer")


def parse_size(size: str) -> tuple[int, int]:
    """``"512x768"`` -> ``(width, height)``; OM-I303 otherwise."""
    try:
        width, height = (int(x) for x in str(size).lower().split("x"))
    except ValueError:
        raise I_BAD_MEDIA_PARAM.error(f"size={size!r}: write WIDTHxHEIGHT, e.g. 512x512", location="size") from None
    return width, height


class DiffusionWrapper(MediaWrapper):
    kinds = ("diffusers",)
    params_cls = DiffusionParams
    writes_media = True
    input_kind = "text"
    record_keys = ("prompt", "input", "text")
    #: image inputs the task needs besides the prompt
    image_keys: ClassVar[tuple[str, ...]] = ()

    def configure(self, **options: Any) -> Any:
        if "size" in options:
            options["width"], options["height"] = parse_size(options.pop("size"))
        return super().configure(**options)

    def make_params(self, base: Any, values: dict[str, Any]) -> Any:
        if "size" in values:
            values = dict(values)
            values["width"], values["height"] = parse_size(values.pop("size"))
        return super().make_params(base, values)

    def is_one(self, value: Any) -> bool:
        return isinstance(value, (str, dict))

    def check_item(self, item: Any, index: int | None) -> Any:
        where = f"input[{index}]" if index is not None else "input"
        if not self.image_keys:
            if not isinstance(item, str) or not item.strip():
                raise I_BAD_INPUT.error(
                    f"task {self.task!r} takes a prompt string; {where} is {item!r:.60}", location=where
                )
            return item
        if not isinstance(item, dict):
            keys = ", ".join(("prompt", *self.image_keys))
            raise I_BAD_INPUT.error(
                f"task {self.task!r} takes {{{keys}}} mappings; {where} is {type(item).__name__}", location=where
            )
        for key in self.image_keys:
            if item.get(key) is None:
                raise I_BAD_INPUT.error(
                    f"{where}: field {key!r} is missing (task {self.task!r} needs {', '.join(self.image_keys)})",
                    location=f"{where} field {key!r}",
                )
        if not isinstance(item.get("prompt"), str):
            raise I_BAD_INPUT.error(f"{where}: field 'prompt' must be a string", location=f"{where} field 'prompt'")
        out = {"prompt": item["prompt"]}
        for key in self.image_keys:
            out[key] = load_image(item[key], f"{where} field {key!r}", mode="L" if key == "mask_image" else "RGB")
        if "mask_image" in out and out["mask_image"].size != out["image"].size:
            raise I_BAD_INPUT.error(
                f"{where}: mask_image is {out['mask_image'].size}, image is {out['image'].size}; they must match",
                location=f"{where} field 'mask_image'",
            )
        return out

    def from_record(self, record: Any, where: str) -> Any:
        if self.image_keys:
            return record
        return super().from_record(record, where)


class TextToImagePipeline(DiffusionWrapper):
    """A prompt in, a PIL image out.

    Example::

        draw = pipeline("text-to-image", model="./stable-diffusion", num_inference_steps=30)
        image = draw("an astronaut riding a horse", seed=42, negative_prompt="blurry", size="512x512")
        image.save("astronaut.png")

    Options (per pipeline or per call): ``num_inference_steps``, ``guidance_scale``,
    ``negative_prompt``, ``height``/``width`` (or ``size="WxH"``), ``num_images_per_prompt``,
    ``seed``, ``scheduler``.
    """

    task = "text2image"


class ImageToImagePipeline(DiffusionWrapper):
    """``{"image", "prompt"}`` in, a PIL image out (``strength`` says how much changes).

    Example::

        edit = pipeline("image-to-image", model="./stable-diffusion")
        edit({"image": "photo.png", "prompt": "in the style of van Gogh"}, strength=0.6, seed=0)
    """

    task = "image-to-image"
    image_keys = ("image",)

    def __call__(self, inputs: Any = None, *, image: Any = None, prompt: Any = None, **params: Any) -> Any:
        if inputs is None:
            inputs = {"image": image, "prompt": prompt}
        return super().__call__(inputs, **params)


class InpaintingPipeline(DiffusionWrapper):
    """``{"image", "mask_image", "prompt"}`` in (white mask pixels are repainted), a PIL image out.

    Example::

        paint = pipeline("inpainting", model="./stable-diffusion")
        paint({"image": "room.png", "mask_image": "mask.png", "prompt": "a red sofa"}, seed=0)
    """

    task = "inpainting"
    image_keys = ("image", "mask_image")

    def __call__(
        self, inputs: Any = None, *, image: Any = None, mask_image: Any = None, prompt: Any = None, **params: Any
    ) -> Any:
        if inputs is None:
            inputs = {"image": image, "mask_image": mask_image, "prompt": prompt}
        return super().__call__(inputs, **params)


class TextToVideoPipeline(DiffusionWrapper):
    """A prompt in, the video's frames out (a list of PIL images; ``--output-dir`` writes them).

    Example::

        film = pipeline("text-to-video", model="./text-to-video-ms")
        frames = film("a panda surfing", num_frames=16, seed=0)
    """

    task = "text-to-video"
