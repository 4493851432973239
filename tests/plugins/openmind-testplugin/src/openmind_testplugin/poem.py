"""The ``poem`` task of the test plugin: a wrapper built on openmind-core's generic contracts and
a PyTorch pipeline on transformers. Nothing here is imported until ``pipeline("poem", ...)`` runs.

Proves the recipes "a task", "a pipeline for a framework" of docs/EXTENDING.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openmind.core.errors import I_BAD_INPUT
from openmind.core.pipelines.base import LoadOptions, Pipeline
from openmind.core.pipelines.wrapper import PipelineWrapper

PROMPT = "A poem about {topic}:\n"


@dataclass(frozen=True)
class PoemParams:
    """Options of the ``poem`` task (``pipeline("poem", ..., lines=4)`` or per call)."""

    max_new_tokens: int = 24
    #: the poem is cut into at most this many lines
    lines: int = 4

    def check(self) -> None:
        from openmind.core.pipelines.errors import I_BAD_PARAM

        if self.max_new_tokens < 1:
            raise I_BAD_PARAM.error(f"max_new_tokens={self.max_new_tokens!r}: must be >= 1", location="max_new_tokens")
        if self.lines < 1:
            raise I_BAD_PARAM.error(f"lines={self.lines!r}: must be >= 1", location="lines")


class PoemPipeline(PipelineWrapper):
    """``pipeline("poem", model=...)("the sea") -> {"topic", "poem"}``."""

    task = "poem"
    accepts = "a topic (a non-empty string)"
    params_cls = PoemParams
    record_keys = ("topic",)

    def check_item(self, item: Any, index: int | None) -> Any:
        item = super().check_item(item, index)
        if not item.strip():
            where = f"input[{index}]" if index is not None else "input"
            raise I_BAD_INPUT.error(f"task 'poem' needs a topic; got an empty string at {where}", location=where)
        return item

    def postprocess(self, output: Any, item: Any) -> Any:
        return {"topic": item, "poem": output}


class TorchPoem(Pipeline):
    """Greedy continuation of :data:`PROMPT` with transformers' own ``generate``."""

    framework = "pt"
    backend = "testplugin"

    def __init__(self, model: Any, tokenizer: Any, model_dir: str) -> None:
        self.model, self.tokenizer, self.model_dir = model, tokenizer, model_dir
        self.task, self.device, self.dtype = "poem", "cpu", "float32"

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> TorchPoem:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(options.tokenizer or model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
        return cls(model, tokenizer, model_dir)

    def preprocess(self, inputs: list[str], params: PoemParams) -> Any:
        return [self.tokenizer(PROMPT.format(topic=topic), return_tensors="pt") for topic in inputs]

    def forward(self, features: Any, params: PoemParams) -> Any:
        import torch

        out = []
        with torch.no_grad():
            for enc in features:  # one prompt at a time: no padding, so results equal an unbatched call
                ids = self.model.generate(**enc, max_new_tokens=params.max_new_tokens, do_sample=False)
                out.append(ids[0, enc["input_ids"].shape[1] :])
        return out

    def postprocess(self, outputs: Any, params: PoemParams) -> list[Any]:
        poems = []
        for ids in outputs:
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            poems.append("\n".join(text.splitlines()[: params.lines]))
        return poems
