"""``summarization`` as a chat-style instruction task."""

from __future__ import annotations

from openmind.nlp.pipelines.instruction import InstructionPipeline


class SummarizationPipeline(InstructionPipeline):
    """Text in, ``[{"summary_text": ...}]`` out (``return_format="openmind"``: ``{"summary_text"}``),
    by asking the chat model to summarise it.

    Options: ``instruction`` (a pattern with ``{text}``), ``system``, generation parameters.

    Example::

        summarize = pipeline("summarization", model="./chat-model", max_new_tokens=128)
        summarize(long_text)[0]["summary_text"]
    """

    task = "summarization"
    options = ("system", "tools", "template", "model_group", "instruction")
    instruction = "Summarize the following text concisely.\n\n{text}"
    output_key = "summary_text"
