"""``openmind-cli``: openMind 1.0 command lines translated to the 2.x verbs."""

from __future__ import annotations

import io

import pytest

from openmind.core.cli import legacy
from openmind.core.errors import OpenMindError


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (["list"], ["cache", "ls"]),
        (["list", "--cache_dir", "/x"], ["cache", "ls"]),
        (["pull", "PyTorch-NPU/bloom_1b1", "--revision", "main", "--cache_dir", "/c"],
         ["pull", "PyTorch-NPU/bloom_1b1", "--revision", "main"]),
        (["push", "me/model", "--folder_path", "./out", "--commit_message", "hi"],
         ["push", "./out", "me/model", "-m", "hi"]),
        (["rm", "org/m"], ["rm", "org/m"]),
        (["run", "./model", "--input", '{"text_inputs": "Hello"}', "--task", "text-generation"],
         ["run", "text-generation", "--model", "./model", "--input", "Hello"]),
        (["run", "./model", "--input", "plain text", "--backend", "transformers"],
         ["run", "--model", "./model", "--input", "plain text", "--framework", "pt"]),
        (["lmeval", "--model", "./m", "--tasks", "arc_easy", "--batch_size", "4", "--limit", "2"],
         ["eval", "--model", "./m", "--tasks", "arc_easy", "--limit", "2", "--eval-backend", "lm-eval",
          "--eval-batch-size", "4"]),
        (["train", "sft.yaml"], ["train", "sft.yaml"]),
        (["env"], ["env"]),
        (["deploy", "./m", "--npu_device_ids", "0"], ["deploy", "./m", "--device", "npu:0"]),
    ],
)  # fmt: skip
def test_translate(old, new):
    assert legacy.translate(old)[0] == new


def test_run_with_a_registered_task_name(monkeypatch):
    monkeypatch.setattr(legacy, "_is_task", lambda name: name == "text-generation")
    assert legacy.translate(["run", "text-generation", "--input", "Hi"])[0] == [
        "run",
        "text-generation",
        "--input",
        "Hi",
    ]


def test_json_input_without_a_text_key_is_a_coded_error():
    with pytest.raises(OpenMindError) as info:
        legacy.translate(["run", "./m", "--input", '{"images": "x.png"}'])
    assert info.value.code == "OM-A002" and info.value.location == "--input"


def test_export_yaml_becomes_flags(tmp_path, capsys):
    merge = tmp_path / "merge.yaml"
    merge.write_text("model_name_or_path: ./base\nadapter_models: ./lora\noutput_dir: ./merged\nper_shard_size: 1\n")
    new, _ = legacy.translate(["export", str(merge)])
    assert new == ["export", "--adapter", "./lora", "--max-shard-size", "1GB", "--model", "./base", "--out", "./merged"]


def test_chat_words_of_1_0():
    stdin = legacy._OneZeroStdin(io.StringIO("hello\nclear\nexit\n"))
    assert [stdin.readline() for _ in range(4)] == ["hello\n", "/clear\n", "/exit\n", ""]


def test_main_prints_the_new_form(capsys):
    assert legacy.main(["env", "--json"]) == 0
    assert "openmind-cli" not in capsys.readouterr().err  # unchanged command line: nothing to say
    assert legacy.main(["list", "--cache_dir", "/nowhere"]) == 0
    err = capsys.readouterr().err
    assert "openmind-cli: deprecated form; the 2.x command is: openmind cache ls (--cache_dir dropped" in err
