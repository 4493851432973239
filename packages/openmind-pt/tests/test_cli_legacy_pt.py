"""``openmind-cli`` (openMind 1.0's command) running real models: run with JSON input, chat with exit/clear."""

from __future__ import annotations

import io
import sys

from openmind.core.cli import legacy


def test_run_with_1_0_json_input_equals_the_pipeline(llama2_dir, capsys):
    from openmind import pipeline

    argv = ["run", str(llama2_dir), "--input", '{"text_inputs": "Hello there"}', "--task", "text-generation"]
    rc = legacy.main([*argv, "--max_new_tokens", "5", "--device", "cpu"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "the 2.x command is: openmind run text-generation --model" in err
    expected = pipeline("text-generation", model=str(llama2_dir), device="cpu")("Hello there", max_new_tokens=5)
    assert expected[0]["generated_text"] in out


def test_chat_understands_exit_and_clear(llama2_dir, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("Hi\nclear\nexit\nnever sent\n"))
    rc = legacy.main(["chat", str(llama2_dir), "--max_new_tokens", "3", "--device", "cpu"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "(conversation cleared)" in err
    assert "never sent" not in out + err
