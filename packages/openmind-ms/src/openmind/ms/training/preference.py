"""DPO on the native MindSpore trainer: trl's ``DPOTrainer`` (``loss_type="sigmoid"``) computed natively.

* rows: the data engine's preference rows (``chosen_input_ids``/``chosen_labels``/``rejected_*``) split
  as PyTorch's trainer hands them to trl (:func:`openmind.pt.training.adapters.trl_preference`): the
  prompt is the shared prefix before the first trained token, the completion everything after it;
* a batch of ``B`` pairs is ``2B`` sequences, the chosen ones first (trl's ``[chosen, rejected]``);
* per-sequence log-prob: the sum (not the mean) of the completion tokens' log-probs, each token
  scored by the logits of the position before it (trl's shifted ``log_probs`` summed over the sequence);
* reference log-probs: computed once before step 1 with the start weights (a LoRA adapter starts as
  the identity, so this is trl's "adapter disabled" reference) and kept per row;
* loss: ``mean(-logsigmoid(beta * ((c - c_ref) - (r - r_ref))))`` over the batch's pairs; gradient
  accumulation averages the micro-batch losses (the Trainer's ``loss / accumulation_steps``).
"""

from __future__ import annotations

from typing import Any

import mindspore as ms
import numpy as np
from mindspore import ops

from openmind.core.training.layout import IGNORE_INDEX


def completion_labels(ids: np.ndarray, labels: np.ndarray, other_ids: np.ndarray, other_labels: np.ndarray):
    """``ids`` with the shared prompt masked: trl scores every token after the prompt, the prompt
    being the common prefix of the two sequences before either one's first trained token."""
    limit = min(_first_trained(labels, len(ids)), _first_trained(other_labels, len(other_ids)))
    n = 0
    while n < limit and ids[n] == other_ids[n]:
        n += 1
    out = np.array(ids, np.int32)
    out[:n] = IGNORE_INDEX
    return out


def _first_trained(labels: np.ndarray, default: int) -> int:
    hits = np.nonzero(np.asarray(labels) != IGNORE_INDEX)[0]
    return int(hits[0]) if len(hits) else default


def pair_rows(dataset: Any) -> list[tuple]:
    """``(chosen_ids, chosen_completion, rejected_ids, rejected_completion)`` per prepared row."""
    if dataset is None:
        return []
    rows = []
    for r in dataset.with_format("numpy"):
        ci, cl = np.asarray(r["chosen_input_ids"], np.int32), np.asarray(r["chosen_labels"], np.int32)
        ri, rl = np.asarray(r["rejected_input_ids"], np.int32), np.asarray(r["rejected_labels"], np.int32)
        rows.append((ci, completion_labels(ci, cl, ri, rl), ri, completion_labels(ri, rl, ci, cl)))
    return rows


def pair_batch(pairs: list[tuple], width: int, size: int, pad: int):
    """``(ids, labels, key_mask, valid)``: ``2 * size`` sequences (chosen rows, then rejected rows);
    filler pairs are all padding (one attended slot, no label) with ``valid`` 0."""
    ids = np.full((2 * size, width), pad, np.int32)
    labels = np.full((2 * size, width), IGNORE_INDEX, np.int32)
    mask = np.zeros((2 * size, width), np.int32)
    mask[:, 0] = 1
    valid = np.zeros(size, np.float32)
    for i, (ci, cl, ri, rl) in enumerate(pairs):
        for row, x, y in ((i, ci, cl), (size + i, ri, rl)):
            ids[row, : len(x)] = x
            labels[row, : len(y)] = y
            mask[row, : len(x)] = 1
        valid[i] = 1.0
    return ids, labels, mask, valid


def segments(positions: np.ndarray, weights: np.ndarray, rows: int, width: int) -> np.ndarray:
    """``(rows, slots)`` matrix summing the scored slots of each sequence."""
    seg = np.zeros((rows, len(positions)), np.float32)
    real = np.nonzero(weights > 0)[0]
    seg[positions[real] // width, real] = 1.0
    return seg


def sequence_logps(model: Any, input_ids, cos, sin, mask, positions, targets, segs):
    """Per-sequence sum of the scored tokens' log-probs (only the scored rows reach the vocabulary)."""
    hidden, _ = model.model(input_ids, cos, sin, mask)
    flat = hidden.reshape(-1, hidden.shape[-1])
    picked = ops.gather(flat, positions, 0)
    logits = model.logits(picked).astype(ms.float32)
    logp = ops.log_softmax(logits, -1)
    token = ops.gather_elements(logp, -1, targets.expand_dims(-1)).squeeze(-1)
    return ops.matmul(segs, token)


def dpo_loss(logps, ref, valid, beta: float):
    """trl's sigmoid DPO loss averaged over the valid pairs, and the per-pair rewards
    ``beta * (logp - ref)`` of chosen and rejected."""
    size = valid.shape[0]
    chosen = beta * (logps[:size] - ref[:size])
    rejected = beta * (logps[size:] - ref[size:])
    per_pair = -ops.logsigmoid(chosen - rejected)
    loss = (per_pair * valid).sum() / ops.maximum(valid.sum(), ops.ones_like(valid.sum()))
    return loss, chosen, rejected
