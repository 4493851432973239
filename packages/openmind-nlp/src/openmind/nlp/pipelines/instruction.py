"""Instruction tasks on chat models: a text in, the chat model's answer to an instruction about it out."""

from __future__ import annotations

from typing import Any, ClassVar

from openmind.nlp.pipelines.base import Generation
from openmind.nlp.pipelines.chat import ChatPipeline
from openmind.nlp.pipelines.wrapper import PipelineWrapper


class InstructionPipeline(ChatPipeline):
    """Base of ``summarization`` and ``translation``: the input text is put into
    :attr:`instruction` (a ``str.format`` pattern with ``{text}`` and task fields) as one user
    turn; the answer comes back under :attr:`output_key`."""

    instruction: str = "{text}"
    output_key: ClassVar[str] = "text"
    listed = True  # 1.0 / transformers: [{"summary_text": ...}]
    accepts = "a string"
    record_keys = ("input", "text", "prompt")

    def check_item(self, item: Any, index: int | None) -> Any:
        return PipelineWrapper.check_item(self, item, index)

    def split(self, inputs: Any) -> tuple[bool, list[Any]]:
        return PipelineWrapper.split(self, inputs)

    def fields(self, overrides: dict[str, Any]) -> dict[str, Any]:
        return {}

    def prompt(self, item: Any, overrides: dict[str, Any]) -> list[int]:
        pattern = overrides.get("instruction") or self.instruction
        message = pattern.format(text=item, **self.fields(overrides))
        return super().prompt([{"role": "user", "content": message}], overrides)

    def output(self, generation: Generation, item: Any, overrides: dict[str, Any]) -> Any:
        return {self.output_key: generation.text.strip()}

    def to_text(self, output: Any) -> str:
        return output[self.output_key]
