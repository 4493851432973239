"""Hand prepared (framework-neutral) data to MindSpore (moved here from ``openmind.data.adapters``:
openmind-data imports no framework). ``mindspore`` is imported only inside :func:`mindspore_source`.

* :class:`MindSporeSource` — a random-access source (numpy rows) for
  ``mindspore.dataset.GeneratorDataset``; :func:`mindspore_source` builds either.
"""

from __future__ import annotations

from typing import Any

from openmind.core.training.layout import IGNORE_INDEX

__all__ = ["IGNORE_INDEX", "MindSporeSource", "mindspore_source"]


def _pad_id(tokenizer: Any) -> int:
    for attr in ("pad_token_id", "eos_token_id", "unk_token_id"):
        value = getattr(tokenizer, attr, None) if tokenizer is not None else None
        if value is not None:
            return int(value)
    return 0


class MindSporeSource:
    """Random-access source: ``source[i]`` is a tuple of int32 numpy arrays in :attr:`columns` order.

    With ``pad_to`` every row is padded/truncated to that length (static shapes for graph mode)
    and an ``attention_mask`` column is appended (for packed rows: position ids keep their own
    column and padding gets its own segment).
    """

    def __init__(
        self, dataset: Any, columns: tuple[str, ...] | None = None, *, pad_to: int | None = None, pad_id: int = 0
    ) -> None:
        self.dataset = dataset.with_format("numpy") if hasattr(dataset, "with_format") else dataset
        names = list(getattr(dataset, "column_names", []) or [])
        default = [c for c in ("input_ids", "labels", "position_ids") if c in names] or [
            c for c in ("chosen_input_ids", "chosen_labels", "rejected_input_ids", "rejected_labels") if c in names
        ]
        self.data_columns = tuple(columns or default)
        self.pad_to = pad_to
        self.pad_id = pad_id
        self.columns = self.data_columns + (("attention_mask",) if pad_to else ())

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int):
        import numpy as np

        row = self.dataset[int(index)]
        out = []
        length = None
        for col in self.data_columns:
            arr = np.asarray(row[col], dtype=np.int32)
            if self.pad_to:
                length = min(len(arr), self.pad_to) if length is None else length
                arr = arr[: self.pad_to]
                pad = self.pad_to - len(arr)
                if pad:
                    fill = IGNORE_INDEX if "labels" in col else (0 if col != "position_ids" else None)
                    if col == "position_ids":
                        tail = np.arange(pad, dtype=np.int32)
                    else:
                        tail = np.full(pad, self.pad_id if fill == 0 and "input_ids" in col else fill, dtype=np.int32)
                    arr = np.concatenate([arr, tail])
            out.append(arr)
        if self.pad_to:
            mask = np.zeros(self.pad_to, dtype=np.int32)
            mask[: length or 0] = 1
            out.append(mask)
        return tuple(out)


def mindspore_source(
    dataset: Any,
    columns: tuple[str, ...] | None = None,
    *,
    pad_to: int | None = None,
    pad_id: int = 0,
    dataset_kwargs: dict | None = None,
    as_dataset: bool = False,
):
    """A source for ``mindspore.dataset.GeneratorDataset`` (``as_dataset=True`` builds that dataset).

    Example::

        import mindspore.dataset as mds
        src = mindspore_source(data.train, pad_to=1024, pad_id=tokenizer.pad_token_id or 0)
        ds = mds.GeneratorDataset(src, column_names=list(src.columns), shuffle=True).batch(8)
    """
    source = MindSporeSource(dataset, columns, pad_to=pad_to, pad_id=pad_id)
    if not as_dataset:
        return source
    import mindspore.dataset as mds

    return mds.GeneratorDataset(source, column_names=list(source.columns), **(dataset_kwargs or {}))
