"""openMind 1.0 names that need the PyTorch stack: processors, trainers, OmDataset."""

from __future__ import annotations

import json

import pytest

from openmind.core.errors import OpenMindError


def test_auto_processor_classes_load_like_transformers(llama2_dir):
    import transformers

    from openmind import AutoProcessor

    ours = AutoProcessor.from_pretrained(str(llama2_dir))
    reference = transformers.AutoProcessor.from_pretrained(str(llama2_dir))
    assert type(ours) is type(reference)
    assert ours("Hello world")["input_ids"] == reference("Hello world")["input_ids"]


def test_trainers_module_and_top_level_trainer():
    import transformers

    import openmind
    from openmind.trainers import Trainer, TrainingArguments

    assert Trainer is transformers.Trainer is openmind.Trainer
    assert TrainingArguments is transformers.TrainingArguments
    with pytest.raises(OpenMindError) as info:
        from openmind.trainers import PreTrainer  # noqa: F401
    assert info.value.code == "OM-C001"


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_om_dataset_load_dataset_local_file_equals_datasets(tmp_path, suffix):
    import datasets

    from openmind import OmDataset

    rows = [{"instruction": f"q{i}", "output": f"a{i}"} for i in range(5)]
    path = tmp_path / f"train{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        builder = "json"
    else:
        path.write_text("instruction,output\n" + "".join(f"{r['instruction']},{r['output']}\n" for r in rows))
        builder = "csv"
    ours = OmDataset.load_dataset(str(path), split="train", cache_dir=str(tmp_path / "c"))
    reference = datasets.load_dataset(builder, data_files=str(path), split="train", cache_dir=str(tmp_path / "r"))
    assert ours.to_list() == reference.to_list() == rows


def test_om_dataset_load_dataset_folder_with_data_files(tmp_path):
    import datasets

    from openmind import OmDataset

    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "a.jsonl").write_text('{"text": "one"}\n{"text": "two"}\n')
    ours = OmDataset.load_dataset(str(folder), data_files="a.jsonl", split="train", cache_dir=str(tmp_path / "c"))
    reference = datasets.load_dataset(str(folder), data_files="a.jsonl", split="train", cache_dir=str(tmp_path / "r"))
    assert ours.to_list() == reference.to_list() == [{"text": "one"}, {"text": "two"}]
    with pytest.raises(OpenMindError) as info:
        OmDataset.load_dataset(str(folder), trust_remote_code=True)
    assert info.value.code == "OM-C001"
