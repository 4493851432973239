"""``openmind run`` (in process) and ``openmind chat`` (a subprocess fed through stdin)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from openmind.core.cli import main


@pytest.fixture(scope="module")
def chat_pipe(llama2_dir):
    from openmind import pipeline

    return pipeline("chat", model=str(llama2_dir), max_new_tokens=6, temperature=0)


def test_run_one_input(llama2_dir, chat_pipe, capsys):
    argv = ["run", "chat", "--model", str(llama2_dir), "--input", "Hi", "--max-new-tokens", "6", "--temperature", "0"]
    assert main(argv) == 0
    assert capsys.readouterr().out == chat_pipe("Hi")["content"] + "\n"


def test_run_infers_the_task_and_batches_a_jsonl_file(llama2_dir, chat_pipe, tmp_path, capsys):
    rows = ["Hi", {"messages": [{"role": "user", "content": "Name a colour."}]}, {"input": "What is 2+2?"}]
    path = tmp_path / "inputs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    config = tmp_path / "infer.yaml"
    config.write_text("max_new_tokens: 6\ntemperature: 0\nbatch_size: 2\n")
    assert main(["run", str(llama2_dir), "--config", str(config), "--input", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    expected = chat_pipe(["Hi", [{"role": "user", "content": "Name a colour."}], "What is 2+2?"])
    assert [line["output"] for line in lines] == expected
    assert lines[0]["input"] == "Hi"
    assert "3/3" in captured.err  # the progress bar


def test_run_errors_are_coded(llama2_dir, tmp_path, capsys):
    assert main(["run", "chatt", "--model", str(llama2_dir), "--input", "x"]) == 1
    err = capsys.readouterr().err
    assert "OM-I001" in err and "chat" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('"ok"\n{not json\n')
    assert main(["run", "chat", "--model", str(llama2_dir), "--input", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "OM-I101" in err and "bad.jsonl:2" in err
    assert main(["run", "text2emb", "--model", str(llama2_dir), "--input", "x", "--temperature", "0.5"]) == 2
    assert "OM-A002" in capsys.readouterr().err
    assert main(["run", "chat", "--model", str(tmp_path), "--input", "x"]) == 1
    assert "OM-M002" in capsys.readouterr().err


def test_run_text2emb(minilm_dir, capsys):
    assert main(["run", str(minilm_dir), "--input", "A sentence", "--json"]) == 0
    vector = json.loads(capsys.readouterr().out)["output"]
    assert len(vector) == 384 and abs(sum(x * x for x in vector) - 1) < 1e-4


def test_chat_repl_through_stdin(llama2_dir, chat_pipe):
    script = "Hi\n/system Be brief.\nName a colour.\nAnd another?\n/clear\n/bogus\nHi\n/exit\nnever sent\n"
    env = {**os.environ, "OPENMIND_LOG_DIR": str(Path(llama2_dir).parent / "logs")}
    exe = Path(sys.executable).with_name("openmind")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "openmind.core.cli.main"]
    args = ["chat", "--model", str(llama2_dir), "--max-new-tokens", "6", "--temperature", "0"]
    out = subprocess.run(cmd + args, input=script, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    answers = out.stdout.splitlines()
    session = chat_pipe.session()
    first = session.send("Hi")
    session.system = "Be brief."
    session.clear()
    second = session.send("Name a colour.")
    third = session.send("And another?")
    assert answers == [first, second, third, chat_pipe("Hi", system="Be brief.")["content"]]
    assert "system prompt set" in out.stderr and "unknown command /bogus" in out.stderr
