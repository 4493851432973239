"""`openmind run` / `openmind chat` argument handling and input files (no framework needed)."""

from __future__ import annotations

import json

import pytest

from openmind.core.cli import main
from openmind.core.errors import OpenMindError
from openmind.nlp.cli.run import read_input_file


def test_help_lists_the_verbs_and_their_arguments(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "run" in out and "chat" in out
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    for flag in ("--input", "--json", "--max-new-tokens", "--system", "--adapter", "--batch-size", "--config"):
        assert flag in out
    with pytest.raises(SystemExit):
        main(["chat", "--help"])
    assert "/system TEXT" in capsys.readouterr().out


class _Wrapper:
    task = "chat"
    record_keys = ("messages", "input")

    def from_record(self, record, where):
        from openmind.nlp.pipelines.wrapper import PipelineWrapper

        return PipelineWrapper.from_record(self, record, where)


def test_input_files(tmp_path):
    txt = tmp_path / "in.txt"
    txt.write_text("one\n\ntwo\n")
    assert read_input_file(txt, _Wrapper()) == ["one", "two"]
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text('"a"\n{"messages": [{"role": "user", "content": "b"}]}\n{"input": "c"}\n')
    assert read_input_file(jsonl, _Wrapper()) == ["a", [{"role": "user", "content": "b"}], "c"]
    jsonl.write_text('"a"\n{"question": "b"}\n')
    with pytest.raises(OpenMindError) as info:
        read_input_file(jsonl, _Wrapper())
    assert info.value.code == "OM-I101" and info.value.location.endswith("in.jsonl:2")
    as_json = tmp_path / "in.json"
    as_json.write_text(json.dumps(["x", {"input": "y"}]))
    assert read_input_file(as_json, _Wrapper()) == ["x", "y"]


def test_run_without_model_or_with_unknown_task(capsys, tmp_path):
    assert main(["run", "chat", "--input", "x"]) == 2
    assert "OM-A004" in capsys.readouterr().err
    assert main(["run", "chatt", "--model", str(tmp_path), "--input", "x"]) == 1
    err = capsys.readouterr().err
    assert "OM-I001" in err and "Did you mean" in err
    assert main(["chat"]) == 2
    assert "OM-A004" in capsys.readouterr().err
