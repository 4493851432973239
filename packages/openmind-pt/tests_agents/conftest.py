from __future__ import annotations


def build(model: str, **deploy):
    """The engine ``openmind deploy`` builds for ``model`` (PyTorch, CPU)."""
    from openmind.core.args import parse
    from openmind.nlp.serve.pipeline_engine import build_engine

    overrides = {"model": model, "framework": "pt", "device": "cpu", **deploy}
    return build_engine(parse(["model", "template", "deploy"], overrides=overrides))
