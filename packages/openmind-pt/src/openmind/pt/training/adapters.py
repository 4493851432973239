"""Hand prepared (framework-neutral) data to PyTorch (moved here from ``openmind.data.adapters``:
openmind-data imports no framework). torch / trl are imported only inside these functions.

* :func:`torch_collator` — a ``DataLoader`` ``collate_fn``: pads, builds attention masks; for
  packed rows it passes ``position_ids`` that restart per sample (transformers then keeps packed
  samples apart in every attention implementation), optionally an explicit 4-D block-diagonal
  mask, or flattens the batch into one padding-free row.
* :func:`trl_preference` — preference columns in the layout trl's trainers expect.
"""

from __future__ import annotations

from typing import Any

from openmind.core.training.layout import IGNORE_INDEX

__all__ = ["IGNORE_INDEX", "TorchCollator", "torch_collator", "trl_preference"]


def _pad_id(tokenizer: Any) -> int:
    for attr in ("pad_token_id", "eos_token_id", "unk_token_id"):
        value = getattr(tokenizer, attr, None) if tokenizer is not None else None
        if value is not None:
            return int(value)
    return 0


def _segments(position_ids: list[int]) -> list[tuple[int, int]]:
    starts = [i for i, p in enumerate(position_ids) if p == 0] or [0]
    return list(zip(starts, starts[1:] + [len(position_ids)]))


class TorchCollator:
    """See :func:`torch_collator`."""

    def __init__(
        self,
        tokenizer: Any = None,
        *,
        pad_to_multiple_of: int | None = None,
        padding_free: bool = False,
        mask: str = "position_ids",
        mask_dtype: Any = None,
        padding_side: str | None = None,
    ) -> None:
        if mask not in ("position_ids", "4d"):
            raise ValueError("mask must be 'position_ids' or '4d'")
        self.pad_id = _pad_id(tokenizer)
        self.multiple = pad_to_multiple_of
        self.padding_free = padding_free
        self.mask = mask
        self.mask_dtype = mask_dtype
        self.side = padding_side or getattr(tokenizer, "padding_side", "right") or "right"

    def _width(self, n: int) -> int:
        if self.multiple:
            n = -(-n // self.multiple) * self.multiple
        return n

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        if "chosen_input_ids" in features[0]:
            return self._pairs(features)
        if "position_ids" in features[0]:
            return self._packed(features)
        return self._plain([list(f["input_ids"]) for f in features], [list(f["labels"]) for f in features])

    def _plain(self, ids: list[list[int]], labels: list[list[int]]) -> dict[str, Any]:
        import torch

        width = self._width(max(len(x) for x in ids))
        out_ids, out_labels, out_mask = [], [], []
        for x, y in zip(ids, labels):
            pad = width - len(x)
            if self.side == "left":
                out_ids.append([self.pad_id] * pad + x)
                out_labels.append([IGNORE_INDEX] * pad + y)
                out_mask.append([0] * pad + [1] * len(x))
            else:
                out_ids.append(x + [self.pad_id] * pad)
                out_labels.append(y + [IGNORE_INDEX] * pad)
                out_mask.append([1] * len(x) + [0] * pad)
        return {
            "input_ids": torch.tensor(out_ids, dtype=torch.long),
            "attention_mask": torch.tensor(out_mask, dtype=torch.long),
            "labels": torch.tensor(out_labels, dtype=torch.long),
        }

    def _packed(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        rows = []
        for f in features:
            ids, labels, pos = list(f["input_ids"]), list(f["labels"]), list(f["position_ids"])
            for a, _ in _segments(pos):
                labels[a] = IGNORE_INDEX  # no loss across a sample boundary
            rows.append((ids, labels, pos))
        if self.padding_free:  # one row, no padding: position_ids separate the samples
            ids = [t for r in rows for t in r[0]]
            labels = [t for r in rows for t in r[1]]
            pos = [t for r in rows for t in r[2]]
            out = {
                "input_ids": torch.tensor([ids], dtype=torch.long),
                "labels": torch.tensor([labels], dtype=torch.long),
                "position_ids": torch.tensor([pos], dtype=torch.long),
                "use_cache": False,
            }
            if self.mask == "4d":
                out["attention_mask"] = self._block_mask([pos], len(pos))
            return out
        width = self._width(max(len(r[0]) for r in rows))
        out_ids, out_labels, out_pos = [], [], []
        for ids, labels, pos in rows:
            pad = width - len(ids)
            out_ids.append(ids + [self.pad_id] * pad)
            out_labels.append(labels + [IGNORE_INDEX] * pad)
            out_pos.append(pos + list(range(pad)))  # padding forms its own segment
        out = {
            "input_ids": torch.tensor(out_ids, dtype=torch.long),
            "labels": torch.tensor(out_labels, dtype=torch.long),
            "position_ids": torch.tensor(out_pos, dtype=torch.long),
            # transformers reads sample boundaries from position_ids only without a KV cache
            "use_cache": False,
        }
        if self.mask == "4d":
            out["attention_mask"] = self._block_mask([r[2] for r in rows], width)
        return out

    def _block_mask(self, positions: list[list[int]], width: int):
        """Additive ``[batch, 1, width, width]`` mask: 0 where a token may attend (causal, same
        sample), the dtype's minimum elsewhere. Padding attends only to itself."""
        import torch

        dtype = self.mask_dtype or torch.float32
        mask = torch.full((len(positions), 1, width, width), torch.finfo(dtype).min, dtype=dtype)
        for b, pos in enumerate(positions):
            segs = _segments(pos) + ([(len(pos), width)] if len(pos) < width else [])
            for a, e in segs:
                mask[b, 0, a:e, a:e] = torch.triu(torch.full((e - a, e - a), torch.finfo(dtype).min, dtype=dtype), 1)
        return mask

    def _pairs(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        """Chosen rows first, then rejected rows, in one padded batch (``2 x batch``)."""
        ids = [list(f["chosen_input_ids"]) for f in features] + [list(f["rejected_input_ids"]) for f in features]
        labels = [list(f["chosen_labels"]) for f in features] + [list(f["rejected_labels"]) for f in features]
        return self._plain(ids, labels)


def torch_collator(
    tokenizer: Any = None,
    *,
    pad_to_multiple_of: int | None = None,
    padding_free: bool = False,
    mask: str = "position_ids",
    mask_dtype: Any = None,
    padding_side: str | None = None,
) -> TorchCollator:
    """A ``collate_fn`` for ``torch.utils.data.DataLoader`` over prepared rows.

    * plain rows (``input_ids``, ``labels``): padded (``tokenizer.pad_token_id``, else EOS) with
      ``attention_mask``; labels padded with -100;
    * packed rows (with ``position_ids``): the first label of every packed sample is set to -100
      (no loss across samples) and

      - ``mask="position_ids"`` (default): ``position_ids``, no ``attention_mask`` and
        ``use_cache=False`` — transformers (>= 5) then builds a block-diagonal causal mask from
        the restarts in sdpa/eager/flex and uses varlen kernels with flash-attention (with a KV
        cache it would not: the batch carries ``use_cache=False`` for that reason);
      - ``mask="4d"``: an explicit additive ``[batch, 1, L, L]`` block-diagonal mask
        (``mask_dtype``, default float32) for models that do not read position restarts;
      - ``padding_free=True``: the whole batch flattened into one row without any padding;

    * preference rows (``chosen_input_ids`` ...): chosen rows then rejected rows, padded together.

    Example::

        loader = DataLoader(data.train, batch_size=8, collate_fn=torch_collator(tokenizer))
    """
    return TorchCollator(
        tokenizer,
        pad_to_multiple_of=pad_to_multiple_of,
        padding_free=padding_free,
        mask=mask,
        mask_dtype=mask_dtype,
        padding_side=padding_side,
    )


def trl_preference(dataset: Any, stage: str = "dpo"):
    """Prepared preference rows -> trl's pre-tokenised layout.

    * ``dpo``: ``prompt_ids``, ``chosen_ids``, ``rejected_ids`` (trl's ``DataCollatorForPreference``;
      the prompt is the shared prefix before the first trained token);
    * ``rm``: ``chosen_ids``, ``rejected_ids`` as full sequences (trl's ``RewardTrainer`` skips
      its own tokenisation when these columns exist).
    """

    def convert(batch: dict[str, list]) -> dict[str, list]:
        out: dict[str, list] = {"chosen_ids": [], "rejected_ids": []}
        if stage == "dpo":
            out["prompt_ids"] = []
        for ci, cl, ri, rl in zip(
            batch["chosen_input_ids"], batch["chosen_labels"], batch["rejected_input_ids"], batch["rejected_labels"]
        ):
            if stage != "dpo":
                out["chosen_ids"].append(list(ci))
                out["rejected_ids"].append(list(ri))
                continue
            pc = next((i for i, x in enumerate(cl) if x != IGNORE_INDEX), len(ci))
            pr = next((i for i, x in enumerate(rl) if x != IGNORE_INDEX), len(ri))
            n = 0
            limit = min(pc, pr)
            while n < limit and ci[n] == ri[n]:
                n += 1
            out["prompt_ids"].append(list(ci[:n]))
            out["chosen_ids"].append(list(ci[n:]))
            out["rejected_ids"].append(list(ri[n:]))
        return out

    return dataset.map(convert, batched=True, remove_columns=dataset.column_names, desc="trl layout")


def _prompt_split(ids: list[int], labels: list[int]) -> int:
    """Index of the first trained token (where the answer starts)."""
    return next((i for i, x in enumerate(labels) if x != IGNORE_INDEX), len(ids))


def trl_paired_tokens(dataset: Any):
    """Prepared preference rows -> the tokenised layout of trl's CPO/ORPO trainers (their
    ``DPODataCollatorWithPadding``): ``prompt_input_ids``/``prompt_attention_mask`` (the shared prompt)
    and, for ``chosen`` and ``rejected``, ``*_input_ids``/``*_attention_mask``/``*_labels`` over the
    whole sequence with the prompt masked (-100) — exactly the template's labels."""

    def convert(batch: dict[str, list]) -> dict[str, list]:
        keys = [f"{p}_{k}" for p in ("prompt", "chosen", "rejected") for k in ("input_ids", "attention_mask")]
        out: dict[str, list] = {k: [] for k in (*keys, "chosen_labels", "rejected_labels")}
        for ci, cl, ri, rl in zip(
            batch["chosen_input_ids"], batch["chosen_labels"], batch["rejected_input_ids"], batch["rejected_labels"]
        ):
            limit = min(_prompt_split(ci, cl), _prompt_split(ri, rl))
            n = 0
            while n < limit and ci[n] == ri[n]:
                n += 1
            out["prompt_input_ids"].append(list(ci[:n]))
            out["prompt_attention_mask"].append([1] * n)
            for name, ids, labels in (("chosen", ci, cl), ("rejected", ri, rl)):
                out[f"{name}_input_ids"].append(list(ids))
                out[f"{name}_attention_mask"].append([1] * len(ids))
                out[f"{name}_labels"].append(list(labels))
        return out

    return dataset.map(convert, batched=True, remove_columns=dataset.column_names, desc="trl layout")


def trl_unpaired(dataset: Any):
    """Prepared KTO rows (``input_ids``/``labels``/``label``) -> trl's KTO layout: ``prompt_ids``
    (before the first trained token), ``completion_ids`` (the answer, end-of-turn included) and ``label``."""

    def convert(batch: dict[str, list]) -> dict[str, list]:
        out: dict[str, list] = {"prompt_ids": [], "completion_ids": [], "label": []}
        for ids, labels, label in zip(batch["input_ids"], batch["labels"], batch["label"]):
            k = _prompt_split(ids, labels)
            out["prompt_ids"].append(list(ids[:k]))
            out["completion_ids"].append(list(ids[k:]))
            out["label"].append(bool(label))
        return out

    return dataset.map(convert, batched=True, remove_columns=dataset.column_names, desc="trl layout")


def trl_prompts(dataset: Any, tokenizer: Any):
    """Prepared GRPO rows (``prompt_ids``/``answer``) -> trl's GRPO rows: ``prompt`` (the decoded
    prompt, which trl hands to the reward functions), ``prompt_ids`` (what the model is given:
    openmind's template, not a re-tokenisation) and ``answer`` (reward-function keyword)."""

    def convert(batch: dict[str, list]) -> dict[str, list]:
        return {
            "prompt": tokenizer.batch_decode(batch["prompt_ids"], skip_special_tokens=False),
            "prompt_ids": [list(x) for x in batch["prompt_ids"]],
            "answer": list(batch["answer"]),
        }

    return dataset.map(convert, batched=True, remove_columns=dataset.column_names, desc="trl layout")
