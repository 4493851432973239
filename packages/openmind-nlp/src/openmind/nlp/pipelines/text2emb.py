"""``text2emb``: sentence embeddings with pooling and normalisation."""

from __future__ import annotations

from typing import Any

from openmind.nlp.pipelines.base import EmbeddingParams
from openmind.nlp.pipelines.wrapper import PipelineWrapper


class Text2EmbPipeline(PipelineWrapper):
    """Text in, one vector out (``list[float]``; unit length unless ``normalize=False``).

    Example::

        from openmind import pipeline
        embed = pipeline("text2emb", model="./all-MiniLM-L6-v2")
        a, b = embed(["A man is eating food.", "A man eats something."])
        sum(x * y for x, y in zip(a, b))  # cosine similarity (vectors are unit length)

    Options (per pipeline or per call): ``pooling`` (``auto``: the folder's sentence-transformers
    pooling, else ``mean``; ``mean``, ``cls``, ``last``, ``max``), ``normalize`` (default true),
    ``max_length``.
    """

    task = "text2emb"
    params_cls = EmbeddingParams

    def to_text(self, output: Any) -> str:
        import json

        return json.dumps([round(x, 6) for x in output])
