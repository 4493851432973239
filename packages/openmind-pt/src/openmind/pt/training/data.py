"""Training data: the ONE entry point from the trainers to the data engine (openmind-data)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class TrainData:
    train: Any
    eval: Any
    stats: dict[str, Any]
    collator: Any
    tokenizer: Any = None

    @property
    def packed(self) -> bool:
        return "position_ids" in (getattr(self.train, "column_names", None) or [])

    def use_attention(self, attn_implementation: str | None) -> None:
        """Packed rows: flattened into one padding-free row where the attention kernel takes
        variable-length sequences (flash attention); kept as rows of ``cutoff_len`` otherwise,
        since a dense block-diagonal mask over one long row costs O(total length^2)."""
        if self.collator is None or not self.packed:
            return
        from openmind.pt.training.adapters import torch_collator

        flat = str(attn_implementation or "").startswith("flash")
        self.collator = CountingCollator(torch_collator(self.tokenizer, padding_free=flat))


TOKENS_KEY = "openmind_tokens"


class CountingCollator:
    """Adds the number of real (non-padding) tokens of the batch under :data:`TOKENS_KEY`; the
    trainer pops it before the forward pass."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        batch = self.inner(features)
        batch[TOKENS_KEY] = torch.tensor(sum(len(f["input_ids"]) for f in features), dtype=torch.int64)
        return batch


def build_datasets(
    args: Any, tokenizer: Any, template: Any, stage: str, *, quiet: bool = False, plan: Any = None
) -> TrainData:
    """Prepared (tokenised, label-masked, optionally packed) train/eval sets and their collator.

    The data preparation itself (data engine + OM-T003 cutoff errors) is the plan's framework-neutral
    step (:func:`openmind.nlp.training.base.prepare_data`); this only adapts it to torch:

    * ``pt`` / ``sft``: ``input_ids``/``labels`` (+ ``position_ids`` when packed); packed batches
      are flattened padding-free into one row, plain ones are padded per batch;
    * ``dpo``: trl's ``prompt_ids``/``chosen_ids``/``rejected_ids``; ``rm``: ``chosen_ids``/``rejected_ids``;
    * ``orpo``/``simpo``: trl's CPO/ORPO tokenised pairs; ``kto``: ``prompt_ids``/``completion_ids``/``label``;
      ``grpo``: ``prompt``/``prompt_ids``/``answer`` (see :mod:`openmind.pt.training.adapters`).
    """
    if plan is None:
        from openmind.nlp.training.base import TrainPlan, prepare_data

        plan = TrainPlan.from_args(args, stage)
        plan.data_step = prepare_data
    prepared = plan.prepare_data(tokenizer, template, quiet=quiet)
    stats = dict(prepared.stats)
    train, evald = prepared.train, prepared.eval
    if stage in ("dpo", "rm"):
        from openmind.pt.training.adapters import trl_preference

        train = trl_preference(train, stage)
        evald = trl_preference(evald, stage) if evald is not None else None
        return TrainData(train, evald, stats, None)
    layouts = {"orpo": "trl_paired_tokens", "simpo": "trl_paired_tokens", "kto": "trl_unpaired", "grpo": "trl_prompts"}
    if stage in layouts:
        from openmind.pt.training import adapters

        convert = getattr(adapters, layouts[stage])
        extra = (tokenizer,) if stage == "grpo" else ()
        train = convert(train, *extra)
        evald = convert(evald, *extra) if evald is not None else None
        return TrainData(train, evald, stats, None, tokenizer)
    from openmind.pt.training.adapters import torch_collator

    packed = "position_ids" in train.column_names
    collator = CountingCollator(torch_collator(tokenizer, padding_free=packed))
    return TrainData(train, evald, stats, collator, tokenizer)
