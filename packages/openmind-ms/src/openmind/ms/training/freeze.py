"""``finetuning_type freeze`` on MindSpore: the same parameter selection as the PyTorch trainer
(``openmind.pt.training.model.apply_freeze``): the last ``n`` decoder layers train (the first
``-n`` when negative); embeddings, the final norm and the LM head stay frozen."""

from __future__ import annotations

import re
from typing import Any

from openmind.core.training.errors import T_BAD_SETUP


def decoder_layer_count(model: Any) -> int:
    layers = getattr(getattr(model, "model", None), "layers", None)
    if layers is None:
        raise T_BAD_SETUP.error(f"cannot tell the number of layers of {type(model).__name__} for freeze training")
    return len(layers)


def apply_freeze(model: Any, n: int) -> list[str]:
    """Set ``requires_grad`` on the parameters of the trained layers only; returns their names."""
    total = decoder_layer_count(model)
    if n == 0 or abs(n) > total:
        raise T_BAD_SETUP.error(
            f"freeze_trainable_layers={n}: the model has {total} layers (use 1..{total} for the last N, "
            f"-1..-{total} for the first N)",
            location="freeze_trainable_layers",
        )
    layers = range(total - n, total) if n > 0 else range(0, -n)
    pattern = re.compile(r"\.layers\.(" + "|".join(str(i) for i in layers) + r")\.")
    trained = []
    for name, param in model.parameters_and_names():
        param.requires_grad = bool(pattern.search(name))
        if param.requires_grad:
            trained.append(name)
    if not trained:
        raise T_BAD_SETUP.error(
            f"freeze training found no parameters named '*.layers.<i>.*' in {type(model).__name__}",
            location="finetuning_type",
        )
    return trained
