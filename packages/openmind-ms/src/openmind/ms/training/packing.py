"""Packed rows (``--packing``) on MindSpore, kept apart exactly as the PyTorch trainer keeps them
(``openmind.pt.training.adapters.TorchCollator``; transformers reads the sample boundaries from the
restarting ``position_ids``):

* rotary positions are the row's ``position_ids`` (they restart at 0 for every sample);
* a token attends causally within its own sample only (block-diagonal causal mask); the padding
  after the last sample forms a segment of its own (positions ``0..pad-1``, never trained);
* the first label of every sample is ignored (no loss predicting a sample from the previous one).

Everything here is host-side numpy: the compiled step gets the same tensor shapes as for plain rows.
"""

from __future__ import annotations

import numpy as np

from openmind.core.training.layout import IGNORE_INDEX


def segment_starts(position_ids: np.ndarray) -> np.ndarray:
    """Indices where a sample starts (position 0), the first index always included."""
    starts = np.flatnonzero(np.asarray(position_ids) == 0)
    return starts if len(starts) and starts[0] == 0 else np.concatenate([[0], starts]).astype(np.int64)


def mask_boundaries(labels: np.ndarray, position_ids: np.ndarray) -> np.ndarray:
    """``labels`` with the first label of every packed sample set to -100 (a copy)."""
    out = np.array(labels, copy=True)
    out[segment_starts(position_ids)] = IGNORE_INDEX
    return out


def padded_positions(position_ids: np.ndarray, width: int) -> np.ndarray:
    """Row positions padded to ``width``: the padding gets ``0..pad-1`` (its own segment)."""
    pos = np.asarray(position_ids, np.int64)
    return np.concatenate([pos, np.arange(width - len(pos), dtype=np.int64)])


def block_causal_mask(positions: np.ndarray, mask_value: float, *, sliding_window: int | None = None) -> np.ndarray:
    """Additive ``(batch, 1, width, width)`` mask from padded ``positions`` ``(batch, width)``: 0 where
    a query may attend (same segment, not in the future), ``mask_value`` elsewhere."""
    positions = np.asarray(positions, np.int64)
    segment = np.cumsum(positions == 0, axis=1)
    same = segment[:, :, None] == segment[:, None, :]
    width = positions.shape[1]
    q, k = np.arange(width)[:, None], np.arange(width)[None, :]
    allowed = same & (k <= q)[None]
    if sliding_window:
        allowed &= (k > q - sliding_window)[None]
    return np.where(allowed, 0.0, mask_value).astype(np.float32)[:, None]
