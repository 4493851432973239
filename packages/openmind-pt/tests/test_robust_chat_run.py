"""Issue 22: one bad chat message leaves the session alive; empty input to ``openmind run`` is refused."""

from __future__ import annotations

import io
import os

import pytest

from openmind.core.cli import main


@pytest.fixture(scope="module")
def chat_pipe(llama2_dir):
    from openmind import pipeline

    return pipeline("chat", model=str(llama2_dir), max_new_tokens=6, temperature=0)


def test_an_overlong_message_is_dropped_and_the_session_goes_on(chat_pipe):
    from openmind.core.errors import OpenMindError
    from openmind.nlp.cli.chat import repl

    overlong = "word " * 200_000  # far beyond the tiny model's context
    with pytest.raises(OpenMindError) as info:  # what the pipeline itself says about it
        chat_pipe(overlong)
    stdin = io.StringIO(f"Hi\n{overlong}\nAnd another?\n/history\n")
    stdout, stderr = io.StringIO(), io.StringIO()
    assert repl(chat_pipe, stdin, stdout, stderr) == 0
    session = chat_pipe.session()
    first = session.send("Hi")
    second = session.send("And another?")  # the dropped message is not in the history
    answers = [line for line in stdout.getvalue().splitlines() if line]
    assert answers == [first, second]
    err = stderr.getvalue()
    assert f"message dropped, the conversation is kept: {info.value.code}" in err
    assert "[user] Hi" in err and "[user] And another?" in err and "word word" not in err


def test_run_refuses_empty_input(llama2_dir, tmp_path, capsys):
    base = ["run", "chat", "--model", str(llama2_dir), "--max-new-tokens", "2"]
    assert main([*base, "--input", ""]) != 0
    err = capsys.readouterr().err
    assert "OM-A002" in err and "--input is empty" in err
    for name, text in (("empty.txt", ""), ("blank.txt", "\n  \n"), ("empty.jsonl", "")):
        path = tmp_path / name
        path.write_text(text)
        assert main([*base, "--input", str(path)]) == 1
        err = capsys.readouterr().err
        assert "OM-I101" in err and f"no inputs in {path}" in err


def test_quickstart_next_commands_work_as_typed(tmp_path, monkeypatch):
    import shlex
    import subprocess
    import sys
    from pathlib import Path

    from openmind.pt.quickstart.run import next_commands

    bin_dir = Path(sys.executable).parent
    # the user's shell after `bash quickstart.sh`: the venv is not on the PATH
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != bin_dir)
    monkeypatch.setenv("PATH", path)
    monkeypatch.chdir(bin_dir.parent.parent)
    lines = next_commands(tmp_path / "run")
    assert lines[0].split()[0] != "openmind" and lines[0].split()[1] == "chat"
    assert "activate" in lines[-1]
    first = shlex.split(lines[0])[0]  # as typed, with the shell's PATH
    out = subprocess.run([first, "chat", "--help"], capture_output=True, text=True, env={**os.environ, "PATH": path})
    assert out.returncode == 0 and "usage: openmind chat" in out.stdout
    # on the PATH: the bare name
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{path}")
    assert next_commands(tmp_path / "run")[0].startswith("openmind chat ")
