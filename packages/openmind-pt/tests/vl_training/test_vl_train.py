"""``openmind train`` on a vision-language model (issue 15 item 4): stage routing, finetuning types
and the VLM freeze flags, the run folder, coded errors before loading, and export of a merged
adapter that loads in transformers and answers like model + adapter."""

from __future__ import annotations

import json

import pytest
from safetensors.torch import load_file

from openmind.core.cli import main

COMMON = [
    "--max-steps",
    "2",
    "--per-device-train-batch-size",
    "4",
    "--report-to",
    "none",
    "--save-steps",
    "2",
    "--logging-steps",
    "1",
]


def _train(vl_dir, data, out, *extra) -> int:
    argv = ["train", "--model", str(vl_dir), "--dataset", str(data), "--output-dir", str(out), *COMMON, *extra]
    return main(argv)


def _weights(folder):
    from transformers import AutoModelForImageTextToText

    model = AutoModelForImageTextToText.from_pretrained(str(folder))
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_sft_on_a_vl_folder_trains_lora_on_the_language_model(vl_dir, squares, tmp_path):
    out = tmp_path / "run"
    assert _train(vl_dir, squares, out, "--stage", "sft", "--finetuning-type", "lora") == 0
    args = (out / "openmind_args.yaml").read_text()
    assert "stage: mm-sft" in args  # --stage sft on a VLM folder trains as mm-sft
    for name in ("adapter_model.safetensors", "preprocessor_config.json", "train_summary.json", "chat_template.jinja"):
        assert (out / name).is_file(), name
    assert (out / "checkpoint-2" / "openmind_checkpoint.json").is_file()
    assert (out / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # the run folder of text SFT
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["stage"] == "mm-sft" and summary["global_step"] == 2 and summary["tokens"] > 0
    lora = load_file(str(out / "adapter_model.safetensors"))
    assert lora and all(".language_model." in k for k in lora)  # LoRA on the language model only
    assert not any("visual" in k for k in lora)  # the vision tower and projector stay frozen


def test_lora_with_a_trainable_projector_keeps_it_in_the_adapter(vl_dir, squares, tmp_path):
    out = tmp_path / "run"
    argv = ["--stage", "mm-sft", "--finetuning-type", "lora", "--freeze-multi-modal-projector", "false"]
    assert _train(vl_dir, squares, out, *argv) == 0
    saved = load_file(str(out / "adapter_model.safetensors"))
    merger = [k for k in saved if ".visual.merger." in k]
    assert merger and not any(".visual.blocks." in k for k in saved)
    config = json.loads((out / "adapter_config.json").read_text())
    assert config["modules_to_save"] == ["model.visual.merger"]


@pytest.mark.parametrize(
    ("flags", "changed", "unchanged"),
    [
        ([], ["model.language_model."], ["model.visual.blocks.", "model.visual.merger."]),
        (
            ["--freeze-language-model", "true", "--freeze-multi-modal-projector", "false"],
            ["model.visual.merger."],
            ["model.language_model.", "model.visual.blocks.", "lm_head."],
        ),
        (
            ["--freeze-vision-tower", "false"],
            ["model.visual.blocks.", "model.language_model."],
            ["model.visual.merger."],
        ),
    ],
    ids=["defaults", "projector-only", "vision-tower"],
)
def test_full_sft_freeze_flags(vl_dir, squares, tmp_path, flags, changed, unchanged):
    out = tmp_path / "run"
    assert (
        _train(
            vl_dir, squares, out, "--stage", "mm-sft", "--finetuning-type", "full", "--learning-rate", "1e-2", *flags
        )
        == 0
    )
    before, after = _weights(vl_dir), _weights(out)

    def moved(prefix):
        return any(not before[k].equal(after[k]) for k in before if k.startswith(prefix))

    for prefix in changed:
        assert moved(prefix), prefix
    for prefix in unchanged:
        assert not moved(prefix), prefix


def test_freeze_trains_the_last_language_layers_only(vl_dir, squares, tmp_path):
    out = tmp_path / "run"
    argv = [
        "--stage",
        "mm-sft",
        "--finetuning-type",
        "freeze",
        "--freeze-trainable-layers",
        "1",
        "--learning-rate",
        "1e-2",
    ]
    assert _train(vl_dir, squares, out, *argv) == 0
    before, after = _weights(vl_dir), _weights(out)
    changed = {k for k in before if not before[k].equal(after[k])}
    assert changed and all(k.startswith("model.language_model.layers.1.") for k in changed)


@pytest.mark.parametrize(
    ("extra", "code", "where"),
    [
        (["--packing", "true"], "OM-T008", "packing"),
        (
            ["--finetuning-type", "full", "--freeze-language-model", "true"],
            "OM-T008",
            "freeze_language_model",
        ),
        (["--finetuning-type", "qlora"], "OM-T008", "finetuning_type"),
    ],
    ids=["packing", "all-frozen", "qlora"],
)
def test_setup_errors_before_any_model_is_loaded(squares, tmp_path, capsys, extra, code, where):
    argv = ["train", "--stage", "mm-sft", "--model", str(tmp_path / "no-such-model"), "--dataset", str(squares)]
    assert main([*argv, "--output-dir", str(tmp_path / "run"), *extra]) != 0
    err = capsys.readouterr().err
    assert code in err and where in err and "no-such-model" not in err


def test_mm_sft_refuses_a_text_model(squares, tmp_path, capsys):
    from openmind.pt.testing import tiny_llama

    text = tiny_llama(tmp_path / "llama")
    assert _train(text, squares, tmp_path / "run", "--stage", "mm-sft") != 0
    assert "not a vision-language model" in capsys.readouterr().err


def test_export_merges_the_adapter_and_answers_like_model_plus_adapter(vl_dir, squares, tmp_path):
    import torch
    from peft import PeftModel
    from PIL import Image
    from transformers import AutoModelForImageTextToText
    from vl_helpers import COLOURS, qwen2_vl_processor, square

    run, merged = tmp_path / "run", tmp_path / "merged"
    flags = ["--stage", "mm-sft", "--finetuning-type", "lora", "--freeze-multi-modal-projector", "false"]
    assert _train(vl_dir, squares, run, *flags, "--learning-rate", "5e-2") == 0
    assert main(["export", "--model", str(vl_dir), "--adapter", str(run), "--out", str(merged)]) == 0
    assert (merged / "preprocessor_config.json").is_file() and not (merged / "adapter_config.json").exists()
    processor = qwen2_vl_processor(merged)
    import random

    rng = random.Random(5)
    images = [square(c, rng) for c in COLOURS] + [Image.new("RGB", (56, 56), (90, 90, 90))]
    prompt = processor.apply_chat_template(
        [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "What colour is the square?"}]}],
        add_generation_prompt=True,
        tokenize=False,
    )
    base = AutoModelForImageTextToText.from_pretrained(str(vl_dir))
    adapted = PeftModel.from_pretrained(base, str(run)).eval()
    exported = AutoModelForImageTextToText.from_pretrained(str(merged)).eval()
    for image in images:
        inputs = processor(text=[prompt], images=[image], return_tensors="pt")
        with torch.no_grad():
            a = adapted.generate(**inputs, max_new_tokens=5, do_sample=False)
            b = exported.generate(**inputs, max_new_tokens=5, do_sample=False)
            la, lb = adapted(**inputs).logits, exported(**inputs).logits
        assert a.tolist() == b.tolist()
        torch.testing.assert_close(la, lb, rtol=1e-4, atol=1e-4)


def _row(content: str, image: str) -> dict:
    return {
        "messages": [{"role": "user", "content": content}, {"role": "assistant", "content": "ok"}],
        "images": [image],
    }


def test_train_reports_bad_media_before_any_model_is_loaded(tmp_path, capsys):
    """The model path does not exist: the data error comes first, so the model was never reached."""
    from PIL import Image

    Image.new("RGB", (8, 8)).save(tmp_path / "ok.png")
    (tmp_path / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(200))
    data = tmp_path / "d.jsonl"
    rows = [_row("<image>fine", "ok.png"), _row("<image>x", "clip.mp4")]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["train", "--stage", "mm-sft", "--model", str(tmp_path / "no-such-model"), "--dataset", str(data)]
    assert main([*argv, "--output-dir", str(tmp_path / "run")]) != 0
    err = capsys.readouterr().err
    assert "OM-D014" in err and f"{data}:2" in err and "images[0]" in err
    assert "no-such-model" not in err


def test_the_sdk_routes_sft_on_a_vl_folder_too(vl_dir, squares, tmp_path):
    import openmind

    result = openmind.train(
        model=str(vl_dir),
        dataset=[str(squares)],
        stage="sft",
        finetuning_type="lora",
        output_dir=str(tmp_path / "run"),
        max_steps=1,
        report_to=["none"],
    )
    assert result.stage == "mm-sft" and result.global_step == 1
