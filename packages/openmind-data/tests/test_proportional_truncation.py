"""``truncation: proportional``: LLaMA-Factory's cut of prompts and answers (infer_seqlen, 0.9.5)."""

from __future__ import annotations

import pytest

from openmind.data.encoding import IGNORE_INDEX, infer_seqlen, proportional_cut


def lf_infer_seqlen(source_len: int, target_len: int, cutoff_len: int) -> tuple[int, int]:
    # LLaMA-Factory 0.9.5, src/llamafactory/data/processor/processor_utils.py, verbatim
    if target_len * 2 < cutoff_len:  # truncate source
        max_target_len = cutoff_len
    elif source_len * 2 < cutoff_len:  # truncate target
        max_target_len = cutoff_len - source_len
    else:  # truncate both
        max_target_len = int(cutoff_len * (target_len / (source_len + target_len)))

    new_target_len = min(max_target_len, target_len)
    max_source_len = max(cutoff_len - new_target_len, 0)
    new_source_len = min(max_source_len, source_len)
    return new_source_len, new_target_len


@pytest.mark.parametrize("cutoff", [1, 2, 7, 16, 33, 100])
def test_infer_seqlen_is_llamafactorys(cutoff):
    for s in range(0, 60, 3):
        for t in range(0, 60, 5):
            assert infer_seqlen(s, t, cutoff) == lf_infer_seqlen(s, t, cutoff)


def lf_multiturn(pairs: list[tuple[list[int], list[int]]], cutoff: int) -> tuple[list[int], list[int]]:
    # LLaMA-Factory's SupervisedDatasetProcessor._encode_data_example loop (train_on_prompt=False)
    input_ids, labels, total = [], [], 0
    for source_ids, target_ids in pairs:
        if total >= cutoff:
            break
        s_len, t_len = lf_infer_seqlen(len(source_ids), len(target_ids), cutoff - total)
        source_ids, target_ids = source_ids[:s_len], target_ids[:t_len]
        total += s_len + t_len
        input_ids += source_ids + target_ids
        labels += [IGNORE_INDEX] * s_len + target_ids
    return input_ids, labels


@pytest.mark.parametrize("cutoff", [4, 10, 25, 40, 1000])
def test_proportional_cut_matches_the_multiturn_loop(cutoff):
    pairs = [(list(range(100, 130)), list(range(200, 208))), (list(range(300, 305)), list(range(400, 440)))]
    ids = [t for s, a in pairs for t in s + a]
    labels = [t for s, a in pairs for t in [IGNORE_INDEX] * len(s) + a]
    assert proportional_cut(ids, labels, cutoff) == lf_multiturn(pairs, cutoff)
    cut_ids, cut_labels = proportional_cut(ids, labels, cutoff)
    assert len(cut_ids) <= cutoff
    if cutoff >= 10:  # unlike right-truncation (30 prompt tokens first), the answer keeps tokens
        assert any(x != IGNORE_INDEX for x in cut_labels)
