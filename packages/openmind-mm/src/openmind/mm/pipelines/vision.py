"""Vision and vision-language tasks: an image (and text) in, transformers' task output out.

Parameters carry transformers' own names and defaults; outputs follow transformers'/openMind 1.0's
shapes (``[{"label", "score"}]``, ``[{"score", "label", "box"}]`` ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openmind.core.pipelines.errors import I_BAD_PARAM
from openmind.mm.pipelines.base import MediaWrapper


def _labels(value: Any, task: str) -> None:
    if value is None:
        raise I_BAD_PARAM.error(
            f"{task} needs candidate_labels",
            location="candidate_labels",
            hint='Example: pipe(image, candidate_labels=["a cat", "a dog"]).',
        )
    labels = value.split(",") if isinstance(value, str) else value
    if not labels or not all(isinstance(s, str) and s.strip() for s in labels):
        raise I_BAD_PARAM.error(f"candidate_labels={value!r}: give one or more labels", location="candidate_labels")


def _positive(name: str, value: Any, minimum: float = 1) -> None:
    if value is not None and (not isinstance(value, (int, float)) or value < minimum):
        raise I_BAD_PARAM.error(f"{name}={value!r}: must be >= {minimum}", location=name)


@dataclass(frozen=True)
class ImageClassificationParams:
    top_k: int | None = 5
    function_to_apply: str | None = None

    def check(self) -> None:
        _positive("top_k", self.top_k)
        if self.function_to_apply not in (None, "softmax", "sigmoid", "none"):
            raise I_BAD_PARAM.error(
                f"function_to_apply={self.function_to_apply!r}: use softmax, sigmoid or none",
                location="function_to_apply",
            )


class ImageClassificationPipeline(MediaWrapper):
    """An image in, ``[{"label", "score"}]`` out (best first, ``top_k`` long).

    Example::

        classify = pipeline("image-classification", model="./beit")
        classify("cat.png", top_k=3)
        classify(["a.png", "b.jpg"], batch_size=32)
    """

    task = "image-classification"
    params_cls = ImageClassificationParams


@dataclass(frozen=True)
class ZeroShotImageParams:
    candidate_labels: list[str] | tuple[str, ...] | str | None = None
    hypothesis_template: str = "This is a photo of {}."

    def check(self) -> None:
        if self.candidate_labels is not None:
            _labels(self.candidate_labels, "zero-shot-image-classification")


class ZeroShotImageClassificationPipeline(MediaWrapper):
    """An image and candidate labels in, ``[{"score", "label"}]`` out (CLIP/SigLIP-style models).

    Example::

        classify = pipeline("zero-shot-image-classification", model="./siglip")
        classify("cat.png", candidate_labels=["a cat", "a dog"])
    """

    task = "zero-shot-image-classification"
    params_cls = ZeroShotImageParams

    def __call__(self, inputs: Any, **params: Any) -> Any:
        _labels(params.get("candidate_labels", self.defaults.candidate_labels), self.task)
        return super().__call__(inputs, **params)


@dataclass(frozen=True)
class ObjectDetectionParams:
    threshold: float = 0.5

    def check(self) -> None:
        if not 0 <= self.threshold <= 1:
            raise I_BAD_PARAM.error(f"threshold={self.threshold!r}: must be in [0, 1]", location="threshold")


class ObjectDetectionPipeline(MediaWrapper):
    """An image in, ``[{"score", "label", "box": {"xmin", "ymin", "xmax", "ymax"}}]`` out.

    Example::

        detect = pipeline("object-detection", model="./detr")
        detect("street.jpg", threshold=0.9)
    """

    task = "object-detection"
    params_cls = ObjectDetectionParams


@dataclass(frozen=True)
class ZeroShotObjectDetectionParams:
    candidate_labels: list[str] | tuple[str, ...] | str | None = None
    threshold: float = 0.1
    top_k: int | None = None

    def check(self) -> None:
        if self.candidate_labels is not None:
            _labels(self.candidate_labels, "zero-shot-object-detection")
        _positive("top_k", self.top_k)


class ZeroShotObjectDetectionPipeline(MediaWrapper):
    """An image and candidate labels in, ``[{"score", "label", "box"}]`` out (OWL-ViT-style models).

    Example::

        detect = pipeline("zero-shot-object-detection", model="./owlvit")
        detect("street.jpg", candidate_labels=["a car", "a person"])
    """

    task = "zero-shot-object-detection"
    params_cls = ZeroShotObjectDetectionParams

    def __call__(self, inputs: Any, **params: Any) -> Any:
        _labels(params.get("candidate_labels", self.defaults.candidate_labels), self.task)
        return super().__call__(inputs, **params)


class DepthEstimationPipeline(MediaWrapper):
    """An image in, ``{"predicted_depth", "depth"}`` out (``depth``: a PIL image of the depth map).

    Example::

        depth = pipeline("depth-estimation", model="./dpt")
        depth("room.jpg")["depth"].save("depth.png")
    """

    task = "depth-estimation"
    writes_media = True


@dataclass(frozen=True)
class MaskGenerationParams:
    points_per_batch: int = 64
    pred_iou_thresh: float = 0.88
    stability_score_thresh: float = 0.95
    crops_n_layers: int = 0
    output_bboxes_mask: bool = False

    def check(self) -> None:
        _positive("points_per_batch", self.points_per_batch)


class MaskGenerationPipeline(MediaWrapper):
    """An image in, ``{"masks", "scores"}`` out (SAM-style automatic mask generation).

    Example::

        masks = pipeline("mask-generation", model="./sam")("room.jpg", points_per_batch=64)
    """

    task = "mask-generation"
    params_cls = MaskGenerationParams


@dataclass(frozen=True)
class ImageFeatureParams:
    pool: bool | None = None

    def check(self) -> None:
        return None


class ImageFeatureExtractionPipeline(MediaWrapper):
    """An image in, the encoder's hidden states out (``pool=True``: the pooled vector).

    Example::

        features = pipeline("image-feature-extraction", model="./vit")("cat.png")
    """

    task = "image-feature-extraction"
    params_cls = ImageFeatureParams


@dataclass(frozen=True)
class ImageToTextParams:
    max_new_tokens: int = 20
    #: text the caption continues (conditional captioning)
    prompt: str | None = None
    num_beams: int = 1

    def check(self) -> None:
        _positive("max_new_tokens", self.max_new_tokens)
        _positive("num_beams", self.num_beams)


class ImageToTextPipeline(MediaWrapper):
    """An image in, ``[{"generated_text"}]`` out (captioning models: BLIP, vision encoder-decoders).

    Example::

        caption = pipeline("image-to-text", model="./blip-captioning")
        caption("cat.png", max_new_tokens=30)[0]["generated_text"]
    """

    task = "image-to-text"
    params_cls = ImageToTextParams


@dataclass(frozen=True)
class VisualQuestionAnsweringParams:
    top_k: int = 1
    max_new_tokens: int = 20

    def check(self) -> None:
        _positive("top_k", self.top_k)
        _positive("max_new_tokens", self.max_new_tokens)


class VisualQuestionAnsweringPipeline(MediaWrapper):
    """An image and a question in, ``[{"answer"}]`` (generative models: BLIP) or
    ``[{"score", "answer"}]`` (classifiers: ViLT) out.

    Example::

        vqa = pipeline("visual-question-answering", model="./blip-vqa")
        vqa(image="cat.png", question="What animal is this?")
    """

    task = "visual-question-answering"
    params_cls = VisualQuestionAnsweringParams
    input_kind = "image+text"
    text_key = "question"

    def __call__(self, inputs: Any = None, *, image: Any = None, question: Any = None, **params: Any) -> Any:
        if inputs is None:
            inputs = {"image": image, "question": question}
        return super().__call__(inputs, **params)
