"""Packing tokenised samples into sequences of at most ``cutoff_len`` tokens.

Samples are placed by best-fit decreasing (each sample, longest first, goes into the open
sequence with the least room that still fits it), then concatenated with Arrow/numpy — no
per-token Python. Each packed row keeps the samples intact and in one piece and gets
``position_ids`` that restart at 0 for every sample; that is what keeps packed samples apart
("neat packing"): attention kernels that take position ids (flash-attention's varlen path in
transformers) or a block-diagonal mask built from them (:mod:`openmind.pt.training.adapters`) stop a
token from attending to another sample. Rows are stored without padding (padding-free); the
collator pads a batch or flattens it.

Pre-training text longer than ``cutoff_len`` is split into ``cutoff_len`` chunks first
(nothing is cut away).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import Any

import numpy as np


def plan(lengths: list[int] | np.ndarray, capacity: int) -> list[list[int]]:
    """Indices of the samples in each packed sequence (best-fit decreasing; deterministic).

    Every index appears exactly once; each sequence's total length is at most ``capacity``.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    if len(lengths) and int(lengths.max()) > capacity:
        raise ValueError(f"a sample of {int(lengths.max())} tokens does not fit capacity {capacity}")
    order = np.argsort(-lengths, kind="stable")
    bins: list[list[int]] = []
    room: list[tuple[int, int]] = []  # sorted (remaining capacity, bin id)
    for index in order.tolist():
        n = int(lengths[index])
        k = bisect_left(room, (n, -1))
        if k < len(room):
            free, b = room.pop(k)
            bins[b].append(index)
            if free - n > 0:
                insort(room, (free - n, b))
        else:
            bins.append([index])
            if capacity - n > 0:
                insort(room, (capacity - n, len(bins) - 1))
    for b in bins:
        b.sort()  # samples keep their original order inside a sequence
    bins.sort(key=lambda b: b[0])
    return bins


def _lists(column) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, flat values) of an Arrow list column."""
    import pyarrow as pa

    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    offsets = arr.offsets.to_numpy()
    values = arr.values.to_numpy(zero_copy_only=False)
    return offsets - offsets[0], values[offsets[0] : offsets[-1]] if len(offsets) else values


def lengths(dataset: Any, column: str = "input_ids") -> np.ndarray:
    """Lengths of a list column, read from the Arrow offsets (no Python lists)."""
    table = dataset.with_format("arrow")[:]
    offsets, _ = _lists(table.column(column))
    return np.diff(offsets)


def _list_array(offsets: np.ndarray, values: np.ndarray):
    import pyarrow as pa

    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(values))


def split_long(dataset: Any, capacity: int, columns: tuple[str, ...] = ("input_ids", "labels")):
    """Pre-training rows longer than ``capacity`` -> consecutive chunks of at most ``capacity``."""
    import datasets
    import pyarrow as pa

    table = dataset.with_format("arrow")[:]
    offsets, _ = _lists(table.column(columns[0]))
    lengths = np.diff(offsets)
    if len(lengths) == 0 or int(lengths.max()) <= capacity:
        return dataset
    pieces = np.maximum(1, -(-lengths // capacity))
    starts = np.concatenate([np.arange(0, n * capacity, capacity) + off for n, off in zip(pieces, offsets[:-1])])
    ends = np.minimum(starts + capacity, np.repeat(offsets[1:], pieces))
    new_offsets = np.concatenate([[0], np.cumsum(ends - starts)])
    take = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)]) if len(starts) else np.array([], int)
    out = {}
    for col in columns:
        _, values = _lists(table.column(col))
        out[col] = _list_array(new_offsets, values[take])
    return datasets.Dataset(pa.table(out))


def pack(dataset: Any, capacity: int, columns: tuple[str, ...] = ("input_ids", "labels")):
    """Pack a tokenised dataset: returns a dataset with ``columns`` + ``position_ids``.

    Concatenation order inside a sequence is the samples' original order.
    """
    import datasets
    import pyarrow as pa

    table = dataset.with_format("arrow")[:]
    offsets, _ = _lists(table.column(columns[0]))
    lengths = np.diff(offsets)
    bins = plan(lengths, capacity)
    order = np.fromiter((i for b in bins for i in b), dtype=np.int64, count=len(lengths))
    bin_sizes = np.fromiter((len(b) for b in bins), dtype=np.int64, count=len(bins))
    sample_lengths = lengths[order]
    # token gather index: the tokens of the samples in packed order
    starts = offsets[:-1][order]
    total = int(sample_lengths.sum())
    sample_first = np.concatenate([[0], np.cumsum(sample_lengths)[:-1]])
    within = np.arange(total, dtype=np.int64) - np.repeat(sample_first, sample_lengths)
    take = np.repeat(starts, sample_lengths) + within
    bin_tokens = np.add.reduceat(sample_lengths, np.concatenate([[0], np.cumsum(bin_sizes)[:-1]])) if len(bins) else []
    new_offsets = np.concatenate([[0], np.cumsum(bin_tokens)]).astype(np.int64)
    out = {}
    for col in columns:
        _, values = _lists(table.column(col))
        out[col] = _list_array(new_offsets, values[take])
    out["position_ids"] = _list_array(new_offsets, within.astype(np.int32))
    return datasets.Dataset(pa.table(out))


def unpack(row: dict[str, list[int]], columns: tuple[str, ...] = ("input_ids", "labels")) -> list[dict[str, list[int]]]:
    """The samples of one packed row (split where ``position_ids`` restart at 0)."""
    pos = row["position_ids"]
    starts = [i for i, p in enumerate(pos) if p == 0] + [len(pos)]
    return [{c: list(row[c][a:b]) for c in columns} for a, b in zip(starts, starts[1:])]


def padding_stats(
    lengths: list[int] | np.ndarray,
    capacity: int,
    packed_lengths: list[int] | np.ndarray | None = None,
    batch_size: int = 8,
) -> dict[str, Any]:
    """Padding waste (share of pad tokens) before and after packing.

    ``before_cutoff``: every sample padded to ``cutoff_len``; ``before_batch``: padded to the
    longest sample of batches of ``batch_size`` in dataset order (what a plain collator does);
    ``after``: packed sequences padded to ``cutoff_len`` (the padding-free format stores and
    flattens them without any padding at all).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    tokens = int(lengths.sum())
    n = len(lengths)
    stats: dict[str, Any] = {"samples": n, "tokens": tokens}
    if n == 0:
        return stats
    # a sample longer than the capacity (a preference pair, an uncut document) pads to its own length:
    # waste is a share of padding, never negative
    stats["padding_waste_before_cutoff"] = round(1 - tokens / int(np.maximum(lengths, capacity).sum()), 4)
    padded = sum(
        int(lengths[i : i + batch_size].max()) * len(lengths[i : i + batch_size]) for i in range(0, n, batch_size)
    )
    stats[f"padding_waste_before_batch{batch_size}"] = round(1 - tokens / padded, 4)
    if packed_lengths is not None:
        packed_lengths = np.asarray(packed_lengths, dtype=np.int64)
        stats["packed_sequences"] = len(packed_lengths)
        stats["padding_waste_after"] = (
            round(1 - tokens / int(np.maximum(packed_lengths, capacity).sum()), 4) if len(packed_lengths) else 0
        )
        stats["padding_waste_padding_free"] = 0.0
    return stats
