"""Adapters: torch collator (plain and pairs), MindSpore source, and the CLI. (The source feeding a
real ``mindspore.dataset.GeneratorDataset`` is tested in openmind-ms, where MindSpore is installed.)"""

import json

import numpy as np
import pytest
from data_helpers import chat, write_jsonl

from openmind.data.adapters import mindspore_source


def _ds(rows):
    import datasets

    return datasets.Dataset.from_list(rows)


def test_torch_collator_pads_and_masks():
    torch = pytest.importorskip("torch")
    from openmind.data.adapters import torch_collator

    class Tok:
        pad_token_id = None
        eos_token_id = 2
        padding_side = "right"

    batch = torch_collator(Tok(), pad_to_multiple_of=4)(
        [{"input_ids": [1, 5, 6], "labels": [-100, 5, 6]}, {"input_ids": [1, 7], "labels": [-100, 7]}]
    )
    assert batch["input_ids"].tolist() == [[1, 5, 6, 2], [1, 7, 2, 2]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1, 0], [1, 1, 0, 0]]
    assert batch["labels"].tolist() == [[-100, 5, 6, -100], [-100, 7, -100, -100]]
    assert batch["input_ids"].dtype == torch.long
    pairs = torch_collator(Tok())(
        [
            {
                "chosen_input_ids": [1, 2],
                "chosen_labels": [-100, 2],
                "rejected_input_ids": [1, 3, 2],
                "rejected_labels": [-100, 3, 2],
            }
        ]
    )
    assert pairs["input_ids"].tolist() == [[1, 2, 2], [1, 3, 2]]
    assert pairs["labels"].tolist() == [[-100, 2, -100], [-100, 3, 2]]
    packed = torch_collator(Tok(), padding_free=True)(
        [
            {"input_ids": [1, 5, 1, 6], "labels": [1, 5, 1, 6], "position_ids": [0, 1, 0, 1]},
            {"input_ids": [1, 7], "labels": [1, 7], "position_ids": [0, 1]},
        ]
    )
    assert packed["input_ids"].tolist() == [[1, 5, 1, 6, 1, 7]]
    assert packed["labels"].tolist() == [[-100, 5, -100, 6, -100, 7]]  # no loss across sample boundaries
    assert packed["position_ids"].tolist() == [[0, 1, 0, 1, 0, 1]]


def test_mindspore_source_static_shapes():
    src = mindspore_source(_ds([{"input_ids": [1, 5, 6], "labels": [-100, 5, 6]}]), pad_to=5, pad_id=0)
    assert src.columns == ("input_ids", "labels", "attention_mask") and len(src) == 1
    ids, labels, mask = src[0]
    assert ids.dtype == np.int32
    assert ids.tolist() == [1, 5, 6, 0, 0] and labels.tolist() == [-100, 5, 6, -100, -100]
    assert mask.tolist() == [1, 1, 1, 0, 0]
    packed = mindspore_source(_ds([{"input_ids": [1, 5, 1], "labels": [1, 5, 1], "position_ids": [0, 1, 0]}]), pad_to=4)
    assert [a.tolist() for a in packed[0]] == [[1, 5, 1, 0], [1, 5, 1, -100], [0, 1, 0, 0], [1, 1, 1, 0]]


def test_cli_validate_convert_prepare_preview(tmp_path, capsys):
    from openmind.core.cli.main import main
    from openmind.nlp.testing.assets import save_llama2_tokenizer

    bad = write_jsonl(tmp_path / "bad.jsonl", [chat(0), {"messages": [{"role": "user", "content": "hi"}]}])
    assert main(["data", "validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:2 field 'messages[0].role': the conversation must end with an assistant turn" in out
    assert "read 2, kept 1, rejected 1" in out
    rejects = tmp_path / "rejected.jsonl"
    assert main(["data", "validate", str(bad), "--on-error", "skip", "--rejects", str(rejects), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["read"], report["rejected"]) == (2, 1) and report["problems"][0]["line"] == 2
    assert json.loads(rejects.read_text().splitlines()[0])["line"] == 2

    alpaca = tmp_path / "a.json"
    alpaca.write_text(json.dumps([{"instruction": "Say hi", "input": "", "output": "Hi!"}]))
    assert main(["data", "convert", str(alpaca), "--out", str(tmp_path / "std.jsonl")]) == 0
    assert json.loads((tmp_path / "std.jsonl").read_text()) == {
        "messages": [{"role": "user", "content": "Say hi"}, {"role": "assistant", "content": "Hi!"}]
    }
    capsys.readouterr()

    tok = save_llama2_tokenizer(tmp_path / "tok")
    good = write_jsonl(tmp_path / "good.jsonl", [chat(i) for i in range(6)])
    common = [
        "--dataset",
        str(good),
        "--model",
        str(tok),
        "--template",
        "llama2",
        "--data-cache-dir",
        str(tmp_path / "c"),
    ]
    assert main(["data", "prepare", *common, "--packing", "true", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["kept"] == 6 and stats["from_cache"] is False and stats["packed_sequences"] >= 1
    assert main(["data", "prepare", *common, "--packing", "true", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["from_cache"] is True
    assert main(["data", "preview", *common, "-n", "1"]) == 0
    text = capsys.readouterr().out
    assert "«" in text and "0 plus 0 is 0. </s>»" in text and "[INST] question 0.0" in text


def test_public_api_names_are_functions_whatever_was_imported_first():
    import importlib

    import openmind.data

    for module in ("openmind.data.cli", "openmind.data.preparation", "openmind.data.api"):
        importlib.import_module(module)
    from openmind.data import load_dataset, prepare

    assert callable(prepare) and prepare.__name__ == "prepare"
    assert callable(load_dataset) and openmind.data.PreparedData.__name__ == "PreparedData"
