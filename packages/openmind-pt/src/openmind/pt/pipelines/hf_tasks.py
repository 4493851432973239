"""Tasks served by transformers' own task pipelines, on a model loaded with openmind's defaults.

One class per task names transformers' auto class and pipeline task; the task's params dataclass
(from the domain package) has transformers' own argument names, so its non-``None`` fields are
passed through as they are. Tokenizers, image processors and feature extractors are loaded by
transformers from the same folder. Outputs are transformers' outputs (plain Python values), which
is what openMind 1.0 returned for these tasks.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from openmind.core.api import read_config
from openmind.nlp.errors import M_WRONG_HEAD
from openmind.nlp.pipelines.base import LoadOptions, Pipeline
from openmind.pt.device import import_torch
from openmind.pt.pipelines.loading import _load_error, dtype_name, load_model


def plain(value: Any) -> Any:
    """transformers' outputs as JSON-able Python values (tensors/arrays to lists, numpy scalars
    to Python numbers); PIL images are kept."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if hasattr(value, "tolist") and not hasattr(value, "save"):  # torch / numpy (not PIL)
        return value.tolist()
    if hasattr(value, "item") and not hasattr(value, "save"):
        return value.item()
    return value


COMPONENTS = ("tokenizer", "image_processor", "feature_extractor", "processor", "video_processor")


def components(hf_task: str, model_dir: str) -> dict[str, Any]:
    """The preprocessing components transformers' pipeline class of ``hf_task`` loads, all from
    ``model_dir`` (given a model object, transformers cannot tell where to load them from)."""
    from transformers.pipelines import check_task

    impl = check_task(hf_task)[1]["impl"]
    if isinstance(impl, str):  # "module.Class" in transformers 5
        import importlib

        module, _, name = impl.rpartition(".")
        impl = getattr(importlib.import_module(module), name)
    out: dict[str, Any] = {}
    for name in COMPONENTS:
        flag = getattr(impl, f"_load_{name}", False)
        if flag or flag is None:
            out[name] = model_dir
    if "feature_extractor" in out:
        # transformers resolves a feature extractor given by path against the model's path, which a
        # model object has not: load it here (audio folders have one; others fall back to None)
        from transformers import AutoFeatureExtractor

        try:
            out["feature_extractor"] = AutoFeatureExtractor.from_pretrained(model_dir)
        except (OSError, ValueError, KeyError):
            out.pop("feature_extractor")
    return out


class TorchTransformersTask(Pipeline):
    """Base: ``transformers.pipeline(hf_task, model=<loaded model>)`` run on the inputs."""

    framework = "pt"
    backend = "transformers"
    #: transformers' auto class (attribute of ``transformers``) and pipeline task name
    auto_class: ClassVar[str] = "AutoModel"
    hf_task: ClassVar[str] = ""
    #: architecture name endings that have the head the task needs (empty: any)
    heads: ClassVar[tuple[str, ...]] = ()

    def __init__(self, hf: Any, *, task: str, model_dir: str, device: str, dtype: Any) -> None:
        self.hf = hf
        self.model = hf.model
        self.tokenizer = getattr(hf, "tokenizer", None)
        self.task = task
        self.model_dir = model_dir
        self.device = device
        self.dtype = dtype_name(dtype)

    @classmethod
    def check_head(cls, config: dict[str, Any], task: str, model_dir: str) -> None:
        archs = config.get("architectures") or []
        if cls.heads and archs and not any(a.endswith(h) for a in archs for h in cls.heads):
            raise M_WRONG_HEAD.error(
                f"{model_dir!r} is a {', '.join(archs)}, which has no {task} head (needs *{' or *'.join(cls.heads)})",
                location=f"{model_dir}/config.json",
            )

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> TorchTransformersTask:
        import transformers

        config = read_config(model_dir)
        cls.check_head(config, options.task, model_dir)
        model, device, dtype = load_model(model_dir, getattr(transformers, cls.auto_for(config)), options)
        extra = components(cls.hf_task, model_dir)
        if options.tokenizer and "tokenizer" in extra:
            extra["tokenizer"] = options.tokenizer
        try:
            hf = transformers.pipeline(
                cls.hf_task,
                model=model,
                device=import_torch().device(device),
                trust_remote_code=options.trust_remote_code,
                **extra,
                **cls.pipeline_kwargs(model_dir, options),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise _load_error(exc, f"{cls.hf_task} pipeline for", model_dir) from exc
        return cls(hf, task=options.task, model_dir=model_dir, device=device, dtype=dtype)

    @classmethod
    def auto_for(cls, config: dict[str, Any]) -> str:
        """The transformers auto class that loads this folder."""
        return cls.auto_class

    @classmethod
    def pipeline_kwargs(cls, model_dir: str, options: LoadOptions) -> dict[str, Any]:
        return {}

    def hf_kwargs(self, params: Any) -> dict[str, Any]:
        if params is None:
            return {}
        values = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in values.items() if v is not None}

    def preprocess(self, inputs: list[Any], params: Any) -> list[Any]:
        return inputs

    def call(self, item: Any, kwargs: dict[str, Any]) -> Any:
        """transformers' pipeline on one input (dict inputs are passed as keyword arguments where
        transformers expects that)."""
        return self.hf(item, **kwargs)

    def forward(self, features: list[Any], params: Any) -> list[Any]:
        torch = import_torch()
        kwargs = self.hf_kwargs(params)
        with torch.inference_mode():
            if len(features) == 1:
                return [self.call(features[0], kwargs)]
            return list(self.call_batch(features, kwargs))

    def call_batch(self, features: list[Any], kwargs: dict[str, Any]) -> list[Any]:
        return self.hf(features, batch_size=len(features), **kwargs)

    def postprocess(self, outputs: list[Any], params: Any) -> list[Any]:
        return [plain(o) for o in outputs]


class TorchZeroShotClassification(TorchTransformersTask):
    auto_class = "AutoModelForSequenceClassification"
    hf_task = "zero-shot-classification"
    heads = ("ForSequenceClassification",)


class TorchTableQuestionAnswering(TorchTransformersTask):
    auto_class = "AutoModelForTableQuestionAnswering"
    hf_task = "table-question-answering"
    heads = ("ForQuestionAnswering",)

    def call(self, item: dict[str, Any], kwargs: dict[str, Any]) -> Any:
        return self.hf(table=item["table"], query=item["query"], **kwargs)

    def call_batch(self, features: list[Any], kwargs: dict[str, Any]) -> list[Any]:
        return [self.call(item, kwargs) for item in features]


class TorchFeatureExtraction(TorchTransformersTask):
    auto_class = "AutoModel"
    hf_task = "feature-extraction"
