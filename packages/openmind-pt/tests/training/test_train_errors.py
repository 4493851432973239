"""Bad input fails with a coded error before any training step."""

from __future__ import annotations

import pytest
from conftest import quick, write_jsonl

import openmind
from openmind.core.errors import OpenMindError


@pytest.fixture
def no_step(monkeypatch):
    """Fail the test if a training step runs."""
    import transformers

    steps = []

    def training_step(self, *a, **k):
        steps.append(1)
        raise AssertionError("a training step ran")

    monkeypatch.setattr(transformers.Trainer, "training_step", training_step)
    return steps


def _train(tmp_path, **kw):
    base = dict(finetuning_type="lora", output_dir=str(tmp_path / "run"), **quick())
    base.update(kw)
    with pytest.raises(OpenMindError) as info:
        openmind.train(None, **base)
    return info.value


def test_missing_dataset_file(tiny_dir, tmp_path, no_step):
    err = _train(tmp_path, model=str(tiny_dir), dataset=[str(tmp_path / "nope.jsonl")])
    assert err.code == "OM-D003" and "nope.jsonl" in err.message
    assert not no_step


def test_no_dataset_at_all(tiny_dir, tmp_path, no_step):
    err = _train(tmp_path, model=str(tiny_dir))
    assert err.code == "OM-T001"


def test_template_that_does_not_match_the_tokenizer(tiny_dir, sft_file, tmp_path, no_step):
    err = _train(tmp_path, model=str(tiny_dir), dataset=[str(sft_file)], template="qwen2")
    assert err.code == "OM-T002" and "<|im_end|>" in err.message and err.location == "template"
    assert not no_step


def test_cutoff_shorter_than_the_prompt(tiny_dir, sft_file, tmp_path, no_step):
    err = _train(tmp_path, model=str(tiny_dir), dataset=[str(sft_file)], cutoff_len=6)
    assert err.code == "OM-T003" and "cutoff_len=6" in err.message and err.location == "cutoff_len"
    assert not no_step


def test_cutoff_shorter_than_some_prompts(tiny_dir, tmp_path, no_step):
    rows = [
        {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]},
        {"messages": [{"role": "user", "content": "word " * 60}, {"role": "assistant", "content": "ok"}]},
    ]
    data = write_jsonl(tmp_path / "mixed.jsonl", rows)
    err = _train(tmp_path, model=str(tiny_dir), dataset=[str(data)], cutoff_len=32)
    assert err.code == "OM-T003" and "1 sample(s)" in err.message


def test_lora_target_not_in_the_model(tiny_dir, sft_file, tmp_path, no_step):
    err = _train(tmp_path, model=str(tiny_dir), dataset=[str(sft_file)], lora_target=["q_proj", "query_key_value"])
    assert err.code == "OM-T004" and "'query_key_value'" in err.message and "q_proj" in err.message
    assert "o_proj" in err.message  # lists the model's linear layers
    assert not no_step


def test_qlora_without_cuda(tiny_dir, sft_file, tmp_path, no_step):
    err = _train(tmp_path, model=str(tiny_dir), dataset=[str(sft_file)], finetuning_type="qlora", device="cpu")
    assert err.code == "OM-T005" and "CUDA" in err.message
    assert not no_step


def test_output_dir_in_use(tiny_dir, sft_file, tmp_path, no_step):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "something.txt").write_text("x")
    err = _train(tmp_path, model=str(tiny_dir), dataset=[str(sft_file)])
    assert err.code == "OM-T006"


def test_resume_without_a_checkpoint(tiny_dir, sft_file, tmp_path, no_step):
    (tmp_path / "run" / "checkpoint-3").mkdir(parents=True)  # incomplete: no marker
    err = _train(tmp_path, model=str(tiny_dir), dataset=[str(sft_file)], resume=True)
    assert err.code == "OM-T007" and "checkpoint-3" in err.message


def test_freeze_more_layers_than_the_model_has(tiny_dir, sft_file, tmp_path, no_step):
    err = _train(
        tmp_path, model=str(tiny_dir), dataset=[str(sft_file)], finetuning_type="freeze", freeze_trainable_layers=5
    )
    assert err.code == "OM-T008" and "2 layers" in err.message


def test_cli_prints_the_code_and_exits_non_zero(tiny_dir, sft_file, tmp_path, capsys):
    from openmind.core.cli.main import main

    code = main(
        [
            "train",
            "--model",
            str(tiny_dir),
            "--dataset",
            str(sft_file),
            "--lora-target",
            "nope",
            "--output-dir",
            str(tmp_path / "run"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "OM-T004" in err and "hint:" in err
