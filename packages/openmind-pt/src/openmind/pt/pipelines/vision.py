"""openmind-mm's vision / audio tasks on transformers.

Most run transformers' own task pipelines (:class:`TorchTransformersTask`); captioning and visual
question answering, whose pipelines transformers 5 folded into ``image-text-to-text``, run
``AutoProcessor`` + ``generate`` directly (the processor's own preprocessing and decoding).
"""

from __future__ import annotations

from typing import Any, ClassVar

from openmind.nlp.pipelines.base import LoadOptions, Pipeline
from openmind.pt.device import import_torch
from openmind.pt.pipelines.hf_tasks import TorchTransformersTask
from openmind.pt.pipelines.loading import _load_error, dtype_name, load_model


class TorchImageClassification(TorchTransformersTask):
    auto_class = "AutoModelForImageClassification"
    hf_task = "image-classification"
    heads = ("ForImageClassification",)


class TorchZeroShotImageClassification(TorchTransformersTask):
    auto_class = "AutoModelForZeroShotImageClassification"
    hf_task = "zero-shot-image-classification"

    def call_batch(self, features: list[Any], kwargs: dict[str, Any]) -> list[Any]:
        return self.hf(features, batch_size=len(features), **kwargs)


class TorchObjectDetection(TorchTransformersTask):
    auto_class = "AutoModelForObjectDetection"
    hf_task = "object-detection"
    heads = ("ForObjectDetection",)


class TorchZeroShotObjectDetection(TorchTransformersTask):
    auto_class = "AutoModelForZeroShotObjectDetection"
    hf_task = "zero-shot-object-detection"

    def call(self, item: Any, kwargs: dict[str, Any]) -> Any:
        return self.hf(item, **kwargs)

    def call_batch(self, features: list[Any], kwargs: dict[str, Any]) -> list[Any]:
        return [self.call(item, kwargs) for item in features]


class TorchDepthEstimation(TorchTransformersTask):
    auto_class = "AutoModelForDepthEstimation"
    hf_task = "depth-estimation"
    heads = ("ForDepthEstimation",)


class TorchMaskGeneration(TorchTransformersTask):
    auto_class = "AutoModelForMaskGeneration"
    hf_task = "mask-generation"

    def call_batch(self, features: list[Any], kwargs: dict[str, Any]) -> list[Any]:
        return [self.call(item, kwargs) for item in features]


class TorchImageFeatureExtraction(TorchTransformersTask):
    auto_class = "AutoModel"
    hf_task = "image-feature-extraction"


class _AudioTask(TorchTransformersTask):
    def preprocess(self, inputs: list[dict[str, Any]], params: Any) -> list[dict[str, Any]]:
        return [{"raw": item["array"], "sampling_rate": item["sampling_rate"]} for item in inputs]


class TorchSpeechRecognition(_AudioTask):
    auto_class = "AutoModelForCTC"
    hf_task = "automatic-speech-recognition"

    @classmethod
    def auto_for(cls, config: dict[str, Any]) -> str:
        archs = config.get("architectures") or []
        return cls.auto_class if any(a.endswith("ForCTC") for a in archs) else "AutoModelForSpeechSeq2Seq"


class TorchAudioClassification(_AudioTask):
    auto_class = "AutoModelForAudioClassification"
    hf_task = "audio-classification"


class TorchTextToSpeech(TorchTransformersTask):
    """transformers' ``text-to-audio`` pipeline, one text at a time; ``seed`` seeds torch's
    generator before each text (what ``torch.manual_seed(seed); hf(text)`` gives)."""

    auto_class = "AutoModelForTextToWaveform"
    hf_task = "text-to-audio"

    def forward(self, features: list[Any], params: Any) -> list[Any]:
        torch = import_torch()
        kwargs = self.hf_kwargs(params)
        seed = kwargs.pop("seed", None)
        out = []
        with torch.inference_mode():
            for item in features:
                if seed is not None:
                    torch.manual_seed(seed)
                out.append(self.call(item, kwargs))
        return out


class TorchImageTextGeneration(Pipeline):
    """``image-to-text`` / generative ``visual-question-answering``: processor + ``generate``."""

    framework = "pt"
    backend = "transformers"
    auto_class: ClassVar[str] = "AutoModelForImageTextToText"

    def __init__(self, model: Any, processor: Any, *, task: str, model_dir: str, device: str, dtype: Any) -> None:
        self.model = model
        self.processor = processor
        self.tokenizer = getattr(processor, "tokenizer", None)
        self.task = task
        self.model_dir = model_dir
        self.device = device
        self.dtype = dtype_name(dtype)

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> Pipeline:
        import transformers

        from openmind.core.api import read_config

        archs = read_config(model_dir).get("architectures") or []
        generative = options.task != "visual-question-answering" or any(
            a.endswith("ForConditionalGeneration") or a.startswith("Blip") for a in archs
        )
        if options.task == "visual-question-answering" and not any(
            a.endswith("ForConditionalGeneration") for a in archs
        ):
            auto = "AutoModelForVisualQuestionAnswering"
        else:
            auto = cls.auto_class
        model, device, dtype = load_model(model_dir, getattr(transformers, auto), options)
        try:
            processor = transformers.AutoProcessor.from_pretrained(
                model_dir, trust_remote_code=options.trust_remote_code
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise _load_error(exc, "processor of", model_dir) from exc
        impl = cls if generative else TorchVQAClassifier
        return impl(model, processor, task=options.task, model_dir=model_dir, device=device, dtype=dtype)

    def preprocess(self, inputs: list[Any], params: Any) -> Any:
        if self.task == "visual-question-answering":
            images = [item["image"] for item in inputs]
            texts = [item["question"] for item in inputs]
        else:
            images = inputs
            texts = [params.prompt] * len(inputs) if getattr(params, "prompt", None) else None
        kwargs = {"images": images, "return_tensors": "pt"}
        if texts is not None:
            kwargs.update(text=texts, padding=True)
        features = self.processor(**kwargs)
        return {k: v.to(self.device) for k, v in features.items()}

    def forward(self, features: Any, params: Any) -> Any:
        torch = import_torch()
        kwargs = {"max_new_tokens": params.max_new_tokens}
        if getattr(params, "num_beams", 1) > 1:
            kwargs["num_beams"] = params.num_beams
        with torch.inference_mode():
            return self.model.generate(**features, **kwargs)

    def postprocess(self, outputs: Any, params: Any) -> list[Any]:
        texts = self.processor.batch_decode(outputs, skip_special_tokens=True)
        key = "answer" if self.task == "visual-question-answering" else "generated_text"
        return [[{key: text.strip()}] for text in texts]


class TorchVQAClassifier(TorchImageTextGeneration):
    """``visual-question-answering`` on answer classifiers (ViLT): ``[{"score", "answer"}]``."""

    def forward(self, features: Any, params: Any) -> Any:
        torch = import_torch()
        with torch.inference_mode():
            return self.model(**features).logits

    def postprocess(self, outputs: Any, params: Any) -> list[Any]:
        probs = outputs.float().sigmoid()
        scores, ids = probs.topk(min(params.top_k, probs.shape[-1]), dim=-1)
        labels = self.model.config.id2label
        return [
            [{"score": float(s), "answer": labels[int(i)]} for s, i in zip(row_s, row_i, strict=True)]
            for row_s, row_i in zip(scores.tolist(), ids.tolist(), strict=True)
        ]
