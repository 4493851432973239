"""LLaMA-Factory's own example YAMLs (vendored in tests/data/llamafactory) train through `openmind train`.

Overrides on the command line, llamafactory-cli style (``key=value``):

* ``model_name_or_path`` / ``output_dir``: the tiny local model and a temporary run folder;
* ``max_steps=2`` (+ ``save_steps=2`` where a checkpoint is inspected): a 2-step run;
* the tiny model is test_llamafactory_examples.py's: the Llama-2 BPE plus Qwen3's ChatML special
  tokens, so the YAML's ``template: qwen3_nothink`` is used unchanged;
* ``preprocessing_num_workers=1 dataloader_num_workers=0 max_samples=16``: the YAML's 16 + 4 worker
  processes and 1000 samples would only cost time on a 2-core test machine.

Everything else (LoRA settings, bf16, cutoff_len, ``dataset_dir: data`` by LLaMA-Factory's default,
the trainer pass-through keys) comes from the unchanged file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from openmind.core import args as A
from openmind.core.cli import main

LF = Path(__file__).resolve().parents[4] / "tests" / "data" / "llamafactory"
FAST = ["max_steps=2", "preprocessing_num_workers=1", "dataloader_num_workers=0", "max_samples=16"]


@pytest.fixture(scope="module")
def lf_tiny_dir(tmp_path_factory):
    from test_llamafactory_examples import tiny_text_model

    return tiny_text_model(tmp_path_factory.mktemp("lf-tiny") / "model")


@pytest.fixture
def in_lf_folder(monkeypatch):
    monkeypatch.chdir(LF)  # LLaMA-Factory's default dataset_dir is ./data


def test_lora_sft_example_trains_two_steps(lf_tiny_dir, tmp_path, in_lf_folder, capsys):
    import torch

    out = tmp_path / "sft"
    argv = [
        "train",
        "examples/train_lora/qwen3_lora_sft.yaml",
        f"model_name_or_path={lf_tiny_dir}",
        f"output_dir={out}",
    ]
    rc = main([*argv, *FAST, "save_steps=2"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "LLaMA-Factory key 'ddp_timeout' passed to the trainer" in err
    saved = A.load_run(out)
    assert saved["model"] == str(lf_tiny_dir) and saved["dataset_dir"] == "data"
    assert saved["template"] == "qwen3_nothink"  # the file's template, unchanged
    assert saved["dataset"] == ["identity", "alpaca_en_demo"] and saved["mixed_precision"] == "bf16"
    assert saved["trainer_args"] == {"dataloader_num_workers": 0, "save_only_model": False, "ddp_timeout": 180000000}
    # the pass-through keys reached transformers' TrainingArguments
    hf_args = torch.load(out / "checkpoint-2" / "training_args.bin", weights_only=False)
    assert hf_args.ddp_timeout == 180000000 and hf_args.save_only_model is False
    assert hf_args.learning_rate == 1e-4 and hf_args.gradient_accumulation_steps == 8 and hf_args.bf16 is True
    assert (out / "checkpoint-2" / "adapter_model.safetensors").is_file()  # finetuning_type: lora
    summary = (out / "train_summary.json").read_text()
    assert '"global_step": 2' in summary


def test_lora_pretrain_example_trains_two_steps(lf_tiny_dir, tmp_path, in_lf_folder, capsys):
    out = tmp_path / "pt"
    argv = ["train", "examples/train_lora/qwen3_lora_pretrain.yaml", f"model_name_or_path={lf_tiny_dir}"]
    rc = main([*argv, f"output_dir={out}", *FAST])
    assert rc == 0, capsys.readouterr().err
    saved = A.load_run(out)
    assert saved["stage"] == "pt" and saved["dataset"] == ["c4_demo"]
    assert '"global_step": 2' in (out / "train_summary.json").read_text()


def test_kto_example_resolves_to_the_kto_stage(tiny_dir, tmp_path, in_lf_folder):
    # LLaMA-Factory's kto example names a stage openmind now has (trl's KTOTrainer): its keys map
    # without a problem and the stage is kto (the KTO stage itself is tested in test_rl_stages.py)
    from openmind.core import args as A

    path = "examples/train_lora/qwen3_lora_kto.yaml"
    ns = A.parse(
        ["model", "template", "data", "finetuning", "training"],
        config=path,
        overrides={"model": str(tiny_dir), "output_dir": str(tmp_path / "kto")},
    )
    assert ns.dialect == "llamafactory"
    assert ns.finetuning.stage == "kto"


def test_openmind1_train_yaml_with_underscore_flags(tiny_dir, sft_file, tmp_path, capsys):
    import json

    # 1.0's default format is alpaca: the reversal rows as instruction/output, in a local_path entry
    rows = [json.loads(line)["messages"] for line in sft_file.read_text().splitlines()]
    data = tmp_path / "data"
    data.mkdir()
    (data / "train.jsonl").write_text(
        "".join(json.dumps({"instruction": m[0]["content"], "output": m[1]["content"]}) + "\n" for m in rows)
    )
    (tmp_path / "custom_dataset_info.json").write_text(
        json.dumps({"reversal": {"local_path": "data", "file_name": "train.jsonl"}})
    )
    config = tmp_path / "train_sft_full.yaml"
    config.write_text(
        f"model_name_or_path: {tiny_dir}\n"
        "dataset: reversal\n"
        f"custom_dataset_info: {tmp_path / 'custom_dataset_info.json'}\n"
        "stage: sft\n"
        "do_train: true\n"
        "per_device_train_batch_size: 4\n"
        "gradient_accumulation_steps: 1\n"
        "learning_rate: 1.0e-3\n"
        "max_length: 64\n"
        "use_gradient_checkpointing: false\n"
        "logging_steps: 1\n"
        "report_to: none\n"
    )
    out = tmp_path / "run"
    rc = main(["train", str(config), "--output_dir", str(out), "--max_steps", "2"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "openMind 1.0 key 'max_length' ignored" in err
    saved = A.load_run(out)
    # openMind 1.0's default finetuning type is full: the run folder holds full weights, no adapter
    assert saved["finetuning_type"] == "full" and saved["max_steps"] == 2 and saved["dataset"] == ["reversal"]
    assert (out / "model.safetensors").is_file() and not (out / "adapter_model.safetensors").exists()


def test_short_cutoff_truncates_like_llamafactory_instead_of_failing(lf_tiny_dir, tmp_path, in_lf_folder, capsys):
    """A cutoff shorter than the prompts: LLaMA-Factory keeps part of each answer (proportional
    truncation, its default here); openmind's right-truncation would leave no trained token (OM-T003)."""
    argv = ["train", "examples/train_lora/qwen3_lora_sft.yaml", f"model_name_or_path={lf_tiny_dir}", *FAST]
    rc = main([*argv, f"output_dir={tmp_path / 'a'}", "cutoff_len=24"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert A.load_run(tmp_path / "a")["truncation"] == "proportional"
    rc = main([*argv, f"output_dir={tmp_path / 'b'}", "cutoff_len=24", "truncation=right"])
    assert rc == 1 and "error OM-T003" in capsys.readouterr().err
