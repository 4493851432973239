"""``text-generation``: continue a text prompt."""

from __future__ import annotations

from typing import Any

from openmind.nlp.pipelines.base import Generation
from openmind.nlp.pipelines.generative import GenerativeWrapper


class TextGenerationPipeline(GenerativeWrapper):
    """Text in, ``[{"generated_text": ...}]`` out as in openMind 1.0 / transformers (one dict per
    ``num_return_sequences``; a list of such lists for a list of inputs); ``return_format="openmind"``:
    one ``{"generated_text": ...}`` per input. The text is the prompt followed by its continuation,
    unless ``return_full_text=False``. The prompt is tokenized with the tokenizer's special tokens (BOS).

    Example::

        generate = pipeline("text-generation", model="./model", max_new_tokens=32)
        generate("Once upon a time")[0]["generated_text"]
        for delta in generate("Once upon a time", stream=True):
            print(delta, end="", flush=True)
    """

    task = "text-generation"
    options = ("return_full_text",)
    return_full_text = True

    def output(self, generation: Generation, item: Any, overrides: dict[str, Any]) -> Any:
        full = overrides.get("return_full_text", self.return_full_text)
        return {"generated_text": item + generation.text if full else generation.text}

    def to_text(self, output: Any) -> str:
        return output["generated_text"]
