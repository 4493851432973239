"""``fill-mask``: predict the masked token."""

from __future__ import annotations

from typing import Any

from openmind.core.errors import I_BAD_INPUT
from openmind.nlp.pipelines.base import FillMaskParams
from openmind.nlp.pipelines.wrapper import PipelineWrapper


class FillMaskPipeline(PipelineWrapper):
    """Text with exactly one mask token in, the ``top_k`` candidates out
    (``{"score", "token", "token_str", "sequence"}``, best first).

    Example::

        fill = pipeline("fill-mask", model="./bert-model")
        fill(f"Paris is the {fill.mask_token} of France.")
    """

    task = "fill-mask"
    params_cls = FillMaskParams
    accepts = "a string with the mask token"

    @property
    def mask_token(self) -> str:
        return self.backend.tokenizer.mask_token

    def check_item(self, item: Any, index: int | None) -> Any:
        item = super().check_item(item, index)
        mask = self.mask_token
        count = item.count(mask) if mask else 0
        if count != 1:
            where = f"input[{index}]" if index is not None else "input"
            raise I_BAD_INPUT.error(
                f"fill-mask needs exactly one mask token {mask!r} in each input; {where} has {count}: {item[:80]!r}",
                location=where,
                hint=f"Write the position to fill as {mask!r}, e.g. 'Paris is the {mask} of France.'",
            )
        return item

    def to_text(self, output: Any) -> str:
        return ", ".join(f"{o['token_str']} ({o['score']:.4f})" for o in output)
