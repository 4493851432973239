"""The data engine's MindSpore source (openmind.data.adapters.mindspore_source) feeding a real
``mindspore.dataset.GeneratorDataset``: static shapes, padding and label masking survive batching.
(The framework-free parts are tested in openmind-data, which has no MindSpore.)"""

from __future__ import annotations

import datasets
import mindspore.dataset as mds

from openmind.data.adapters import mindspore_source


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
