"""The MindSpore source (``openmind.ms.training.data_source``, moved from ``openmind.data.adapters``)
alone and feeding a real ``mindspore.dataset.GeneratorDataset``: static shapes, padding and label
masking survive batching."""

from __future__ import annotations

import datasets
import mindspore.dataset as mds
import numpy as np

from openmind.ms.training.data_source import mindspore_source


def test_mindspore_generator_dataset_batches_static_shapes():
    rows = [{"input_ids": [1, 5, 6], "labels": [-100, 5, 6]}, {"input_ids": [1, 7], "labels": [-100, 7]}] * 2
    src = mindspore_source(datasets.Dataset.from_list(rows), pad_to=4, pad_id=0)
    ds = mds.GeneratorDataset(src, column_names=list(src.columns), shuffle=False).batch(2)
    batches = list(ds.create_tuple_iterator(output_numpy=True))
    assert len(batches) == 2
    ids, labels, mask = batches[0]
    assert ids.shape == labels.shape == mask.shape == (2, 4)
    assert ids.tolist() == [[1, 5, 6, 0], [1, 7, 0, 0]]
    assert labels.tolist() == [[-100, 5, 6, -100], [-100, 7, -100, -100]]
    assert mask.tolist() == [[1, 1, 1, 0], [1, 1, 0, 0]]


def test_mindspore_source_static_shapes():
    src = mindspore_source(
        datasets.Dataset.from_list([{"input_ids": [1, 5, 6], "labels": [-100, 5, 6]}]), pad_to=5, pad_id=0
    )
    assert src.columns == ("input_ids", "labels", "attention_mask") and len(src) == 1
    ids, labels, mask = src[0]
    assert ids.dtype == np.int32
    assert ids.tolist() == [1, 5, 6, 0, 0] and labels.tolist() == [-100, 5, 6, -100, -100]
    assert mask.tolist() == [1, 1, 1, 0, 0]
    packed = mindspore_source(
        datasets.Dataset.from_list([{"input_ids": [1, 5, 1], "labels": [1, 5, 1], "position_ids": [0, 1, 0]}]), pad_to=4
    )
    assert [a.tolist() for a in packed[0]] == [[1, 5, 1, 0], [1, 5, 1, -100], [0, 1, 0, 0], [1, 1, 1, 0]]
