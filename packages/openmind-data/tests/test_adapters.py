"""The data CLI and the public API. (The framework adapters moved to openmind-pt / openmind-ms and are
tested there.)"""

import json

from data_helpers import chat, write_jsonl


def _ds(rows):
    import datasets

    return datasets.Dataset.from_list(rows)


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


def test_data_cli_stages_come_from_the_registry(tmp_path, capsys):
    """``--stage`` is every stage whose format openmind-data checks (kto, grpo, orpo ... too, not a
    closed list), and a registered DatasetSpec gives a plugin's training task a stage."""
    from openmind.core.cli import main
    from openmind.core.registry import Registry
    from openmind.core.specs import DatasetSpec, TaskSpec
    from openmind.data.formats import stage_formats

    stages = stage_formats()
    assert {"pt", "sft", "dpo", "rm", "kto", "orpo", "simpo", "grpo", "mm-sft"} <= set(stages)
    kto = write_jsonl(
        tmp_path / "kto.jsonl",
        [
            {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], "label": True},
            {
                "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "go away"}],
                "label": False,
            },
        ],
    )
    assert main(["data", "validate", str(kto), "--stage", "kto", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["read"], report["rejected"]) == (2, 0)
    # the same rows for a stage that needs chosen/rejected pairs: located problems, exit 1
    assert main(["data", "validate", str(kto), "--stage", "dpo"]) == 1
    capsys.readouterr()

    registry = Registry()
    registry.add(TaskSpec(name="reflect-sft", kind_of="training", aliases=("reflect",), description="x"))
    registry.add(DatasetSpec(name="sft", task="reflect-sft", description="rows for reflect-sft"))
    extended = stage_formats(registry)
    assert extended["reflect-sft"] == extended["reflect"] == "sft"
    assert "reflect-sft" not in stages
