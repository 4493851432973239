"""openmind-mm's diffusion tasks on diffusers: text-to-image, image-to-image, inpainting, text-to-video.

The folder's own pipeline class (``model_index.json``) is loaded through diffusers' auto pipelines
for the task (a text-to-image folder serves image-to-image and inpainting too, as in openMind 1.0),
then called with the request's parameters; ``seed`` seeds one CPU ``torch.Generator`` per image
(image ``j`` of a prompt gets ``seed + j``), so each image gets the noise of its run alone (the
same picture batched or not, up to how the CPU's batched kernels round: a pixel level, rarely).
"""

from __future__ import annotations

from typing import Any, ClassVar

from openmind.mm.errors import I_BAD_MEDIA_PARAM
from openmind.nlp.errors import M_LOAD
from openmind.nlp.pipelines.base import LoadOptions, Pipeline
from openmind.pt.device import import_torch, resolve_device, resolve_dtype
from openmind.pt.pipelines.loading import dtype_name

#: short scheduler names -> diffusers classes
SCHEDULERS = {
    "ddim": "DDIMScheduler",
    "ddpm": "DDPMScheduler",
    "pndm": "PNDMScheduler",
    "lms": "LMSDiscreteScheduler",
    "euler": "EulerDiscreteScheduler",
    "euler_a": "EulerAncestralDiscreteScheduler",
    "euler-ancestral": "EulerAncestralDiscreteScheduler",
    "heun": "HeunDiscreteScheduler",
    "dpm++": "DPMSolverMultistepScheduler",
    "dpmsolver": "DPMSolverMultistepScheduler",
    "unipc": "UniPCMultistepScheduler",
}


class TorchDiffusion(Pipeline):
    framework = "pt"
    backend = "diffusers"
    #: diffusers auto pipeline (or class) that loads the folder for the task
    auto_pipeline: ClassVar[str] = "AutoPipelineForText2Image"
    #: request fields passed as they are (when not None)
    passthrough: ClassVar[tuple[str, ...]] = ("num_inference_steps", "guidance_scale", "height", "width")

    def __init__(self, pipe: Any, *, task: str, model_dir: str, device: str, dtype: Any) -> None:
        self.pipe = pipe
        self.tokenizer = getattr(pipe, "tokenizer", None)
        self.task = task
        self.model_dir = model_dir
        self.device = device
        self.dtype = dtype_name(dtype)
        self.base_scheduler = pipe.scheduler

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> TorchDiffusion:
        import diffusers

        device = resolve_device(options.device)
        dtype = resolve_dtype(options.dtype, device)
        try:
            pipe = getattr(diffusers, cls.auto_pipeline).from_pretrained(
                model_dir, torch_dtype=dtype, **({} if options.allow_pickle else {"use_safetensors": True})
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise M_LOAD.error(
                f"cannot load diffusers pipeline {model_dir!r} for {options.task}: {type(exc).__name__}: {first}",
                location=model_dir,
            ) from exc
        pipe = pipe.to(device)
        pipe.set_progress_bar_config(disable=True)
        return cls(pipe, task=options.task, model_dir=model_dir, device=device, dtype=dtype)

    def scheduler(self, name: str | None) -> Any:
        if not name:
            return self.base_scheduler
        import diffusers

        class_name = SCHEDULERS.get(name.lower(), name)
        compatible = sorted(c.__name__ for c in getattr(self.base_scheduler, "compatibles", []))
        scheduler_cls = getattr(diffusers, class_name, None)
        if scheduler_cls is None or (compatible and class_name not in compatible):
            raise I_BAD_MEDIA_PARAM.error(
                f"scheduler={name!r} is not a scheduler this pipeline can use",
                location="scheduler",
                hint=f"Use one of: {', '.join(sorted(SCHEDULERS))} or {', '.join(compatible)}.",
            )
        return scheduler_cls.from_config(self.base_scheduler.config)

    def preprocess(self, inputs: list[Any], params: Any) -> dict[str, Any]:
        torch = import_torch()
        kwargs: dict[str, Any] = {}
        if isinstance(inputs[0], dict):
            kwargs["prompt"] = [item["prompt"] for item in inputs]
            for key in ("image", "mask_image"):
                if key in inputs[0]:
                    kwargs[key] = [item[key] for item in inputs]
        else:
            kwargs["prompt"] = list(inputs)
        for name in self.passthrough:
            value = getattr(params, name, None)
            if value is not None:
                kwargs[name] = value
        if params.negative_prompt is not None:
            negative = params.negative_prompt
            kwargs["negative_prompt"] = [negative] * len(inputs) if isinstance(negative, str) else list(negative)
        per_prompt = params.num_images_per_prompt
        kwargs["num_images_per_prompt"] = per_prompt
        if params.seed is not None:
            kwargs["generator"] = [
                torch.Generator(device="cpu").manual_seed(params.seed + j) for _ in inputs for j in range(per_prompt)
            ]
        if params.strength is not None:
            kwargs["strength"] = params.strength
        return kwargs

    def forward(self, features: dict[str, Any], params: Any) -> Any:
        torch = import_torch()
        self.pipe.scheduler = self.scheduler(params.scheduler)
        try:
            with torch.inference_mode():
                return self.pipe(**features, output_type="pil").images
        finally:
            self.pipe.scheduler = self.base_scheduler

    def postprocess(self, outputs: Any, params: Any) -> list[Any]:
        k = params.num_images_per_prompt
        groups = [list(outputs[i : i + k]) for i in range(0, len(outputs), k)]
        return [g[0] if k == 1 else g for g in groups]


class TorchTextToImage(TorchDiffusion):
    auto_pipeline = "AutoPipelineForText2Image"


class TorchImageToImage(TorchDiffusion):
    auto_pipeline = "AutoPipelineForImage2Image"


class TorchInpainting(TorchDiffusion):
    auto_pipeline = "AutoPipelineForInpainting"


class TorchTextToVideo(TorchDiffusion):
    auto_pipeline = "DiffusionPipeline"
    passthrough = ("num_inference_steps", "guidance_scale", "height", "width", "num_frames")

    def forward(self, features: dict[str, Any], params: Any) -> Any:
        torch = import_torch()
        features.pop("num_images_per_prompt", None)
        self.pipe.scheduler = self.scheduler(params.scheduler)
        try:
            with torch.inference_mode():
                return self.pipe(**features, output_type="pil").frames
        finally:
            self.pipe.scheduler = self.base_scheduler

    def postprocess(self, outputs: Any, params: Any) -> list[Any]:
        return [list(frames) for frames in outputs]
