"""``translation`` as a chat-style instruction task."""

from __future__ import annotations

from typing import Any

from openmind.nlp.pipelines.instruction import InstructionPipeline


class TranslationPipeline(InstructionPipeline):
    """Text in, ``[{"translation_text": ...}]`` out (``return_format="openmind"``:
    ``{"translation_text"}``), by asking the chat model to translate it.

    Options: ``target_lang`` (default English), ``source_lang`` (default: let the model tell),
    ``instruction`` (a pattern with ``{text}``, ``{source}``, ``{target}``), ``system``, generation
    parameters.

    Example::

        translate = pipeline("translation", model="./chat-model", target_lang="French")
        translate("Good morning")[0]["translation_text"]
    """

    task = "translation"
    options = ("system", "tools", "template", "model_group", "instruction", "source_lang", "target_lang")
    instruction = "Translate the following text{source} into {target}. Answer with the translation only.\n\n{text}"
    output_key = "translation_text"
    source_lang: str | None = None
    target_lang: str = "English"

    def fields(self, overrides: dict[str, Any]) -> dict[str, Any]:
        source = overrides.get("source_lang") or self.source_lang
        return {
            "source": f" from {source}" if source else "",
            "target": overrides.get("target_lang") or self.target_lang,
        }
