"""``text-classification``, ``token-classification`` and ``fill-mask`` on transformers.

Scoring, label mapping, entity aggregation and mask filling are transformers' own pipelines
(``TextClassificationPipeline``, ``TokenClassificationPipeline``, ``FillMaskPipeline``) run on
a model loaded with openmind's security defaults; this module adapts their outputs to the
task schemas of :mod:`openmind.nlp.pipelines.base`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from openmind.core.api import read_config
from openmind.core.pipelines.base import LoadOptions, Pipeline
from openmind.nlp.pipelines.base import ClassificationParams, FillMaskParams, TokenClassificationParams
from openmind.pt.device import import_torch
from openmind.pt.pipelines.loading import check_head, dtype_name, load_model, load_tokenizer


class _HFTaskPipeline(Pipeline):
    framework = "pt"
    backend = "transformers"
    #: transformers' auto class and pipeline task name
    auto_class: ClassVar[str] = ""
    hf_task: ClassVar[str] = ""

    def __init__(self, model: Any, tokenizer: Any, *, task: str, model_dir: str, device: str, dtype: Any) -> None:
        from transformers import pipeline as hf_pipeline

        self.task = task
        self.model = model
        self.tokenizer = tokenizer
        self.model_dir = model_dir
        self.device = device
        self.dtype = dtype_name(dtype)
        self.hf = hf_pipeline(self.hf_task, model=model, tokenizer=tokenizer, device=import_torch().device(device))

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> _HFTaskPipeline:
        import transformers

        check_head(read_config(model_dir), options.task, model_dir)
        tokenizer = load_tokenizer(model_dir, options, padding_side="right")
        model, device, dtype = load_model(model_dir, getattr(transformers, cls.auto_class), options)
        return cls(model, tokenizer, task=options.task, model_dir=model_dir, device=device, dtype=dtype)

    def preprocess(self, inputs: list[str], params: Any) -> list[str]:
        # transformers' pipeline tokenizes (and pads, on the tokenizer's side) in ``forward``
        return inputs

    def hf_kwargs(self, params: Any) -> dict[str, Any]:
        return {}

    def forward(self, features: list[str], params: Any) -> list[Any]:
        torch = import_torch()
        with torch.inference_mode():
            out = self.hf(features, batch_size=len(features), **self.hf_kwargs(params))
        return out


class TorchTextClassification(_HFTaskPipeline):
    auto_class = "AutoModelForSequenceClassification"
    hf_task = "text-classification"

    def hf_kwargs(self, params: ClassificationParams) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"top_k": params.top_k}
        if params.function_to_apply != "auto":
            kwargs["function_to_apply"] = params.function_to_apply
        return kwargs

    def postprocess(self, outputs: list[Any], params: ClassificationParams) -> list[list[dict[str, Any]]]:
        result = []
        for item in outputs:
            items = item if isinstance(item, list) else [item]
            result.append([{"label": o["label"], "score": float(o["score"])} for o in items])
        return result


class TorchTokenClassification(_HFTaskPipeline):
    auto_class = "AutoModelForTokenClassification"
    hf_task = "token-classification"

    def hf_kwargs(self, params: TokenClassificationParams) -> dict[str, Any]:
        return {"aggregation_strategy": params.aggregation_strategy}

    def forward(self, features: list[str], params: Any) -> list[Any]:
        out = super().forward(features, params)
        # transformers returns a flat list for one input
        return [out] if len(features) == 1 and (not out or isinstance(out[0], dict)) else out

    def postprocess(self, outputs: list[Any], params: TokenClassificationParams) -> list[list[dict[str, Any]]]:
        return [
            [
                {
                    "entity": o.get("entity_group", o.get("entity")),
                    "word": o["word"],
                    "start": o["start"],
                    "end": o["end"],
                    "score": float(o["score"]),
                    **({"index": int(o["index"])} if "index" in o else {}),  # the token's position
                }
                for o in entities
            ]
            for entities in outputs
        ]


class TorchFillMask(_HFTaskPipeline):
    auto_class = "AutoModelForMaskedLM"
    hf_task = "fill-mask"

    def hf_kwargs(self, params: FillMaskParams) -> dict[str, Any]:
        return {"top_k": params.top_k}

    def forward(self, features: list[str], params: Any) -> list[Any]:
        out = super().forward(features, params)
        return [out] if len(features) == 1 and (not out or isinstance(out[0], dict)) else out

    def postprocess(self, outputs: list[Any], params: FillMaskParams) -> list[list[dict[str, Any]]]:
        return [
            [
                {
                    "score": float(o["score"]),
                    "token": int(o["token"]),
                    "token_str": o["token_str"],
                    "sequence": o["sequence"],
                }
                for o in candidates
            ]
            for candidates in outputs
        ]
