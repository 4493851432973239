"""Training data: the ONE entry point from the trainers to the data engine (openmind-data)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openmind.nlp.training.errors import T_CUTOFF


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
        from openmind.data.adapters import torch_collator

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


def build_datasets(args: Any, tokenizer: Any, template: Any, stage: str, *, quiet: bool = False) -> TrainData:
    """Prepared (tokenised, label-masked, optionally packed) train/eval sets and their collator.

    * ``pt`` / ``sft``: ``input_ids``/``labels`` (+ ``position_ids`` when packed); packed batches
      are flattened padding-free into one row, plain ones are padded per batch;
    * ``dpo``: trl's ``prompt_ids``/``chosen_ids``/``rejected_ids``; ``rm``: ``chosen_ids``/``rejected_ids``.

    Raises OM-T003 when ``cutoff_len`` leaves samples without any trained token (their prompt
    alone reaches it) unless ``truncation`` is ``drop``, and the data engine's OM-D0xx codes.
    """
    from openmind.core.errors import OpenMindError
    from openmind.data import prepare
    from openmind.data.errors import D_EMPTY

    data_args = args.data
    try:
        prepared = prepare(
            data_args, tokenizer, template if stage != "pt" else None, stage=stage, seed=args.training.seed, quiet=quiet
        )
    except OpenMindError as exc:
        if (
            exc.code == D_EMPTY.code
            and data_args.truncation in ("right", "left")
            and "dropped (too long) 0" not in exc.message
        ):
            raise T_CUTOFF.error(
                f"cutoff_len={data_args.cutoff_len} leaves no sample with a trained token: every prompt is at least "
                f"that long ({exc.message})",
                location="cutoff_len",
            ) from exc
        raise
    stats = dict(prepared.stats)
    dropped = int(stats.get("dropped", 0) or 0)
    if dropped and data_args.truncation in ("right", "left") and stage != "pt":
        raise T_CUTOFF.error(
            f"cutoff_len={data_args.cutoff_len} cuts away every trained token of {dropped} sample(s) "
            f"(their prompt is at least {data_args.cutoff_len} tokens long)",
            location="cutoff_len",
        )
    train, evald = prepared.train, prepared.eval
    if stage in ("dpo", "rm"):
        from openmind.data.adapters import trl_preference

        train = trl_preference(train, stage)
        evald = trl_preference(evald, stage) if evald is not None else None
        return TrainData(train, evald, stats, None)
    from openmind.data.adapters import torch_collator

    packed = "position_ids" in train.column_names
    collator = CountingCollator(torch_collator(tokenizer, padding_free=packed))
    return TrainData(train, evald, stats, collator, tokenizer)
