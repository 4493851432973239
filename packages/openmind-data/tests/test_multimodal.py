"""The multimodal-sft format (issue 15 item 3, issue 22 ``mllm_*``): media checks located before any
model loads, LLaMA-Factory's mllm_demo and LLaVA/ShareGPT-4V rows, and preparation whose
``input_ids`` / pixel inputs equal transformers' own Qwen2-VL processor on the same conversation.

LLaMA-Factory's ``mllm_demo`` files under ``fixtures/llamafactory`` are from llamafactory 0.9.5's
``data/`` (Apache-2.0, see SOURCE.md and LICENSE there).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from data_helpers import data_args, write_jsonl
from PIL import Image
from vl_helpers import as_parts, qwen2_vl_folder, qwen2_vl_processor

from openmind.core.cli import main
from openmind.core.errors import OpenMindError
from openmind.data.loading import load
from openmind.data.preparation import prepare

LF = Path(__file__).parent / "fixtures" / "llamafactory"


@pytest.fixture(scope="module")
def vl_dir(tmp_path_factory):
    return qwen2_vl_folder(tmp_path_factory.mktemp("vl") / "qwen2vl")


def _row(content: str, images: list[str]) -> dict:
    return {
        "messages": [{"role": "user", "content": content}, {"role": "assistant", "content": "ok"}],
        "images": images,
    }


def _media(folder: Path) -> Path:
    Image.new("RGB", (40, 30), (200, 10, 10)).save(folder / "ok.png")
    (folder / "corrupt.jpg").write_bytes((folder / "ok.png").read_bytes()[:40])
    (folder / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(200))
    Image.new("1", (9000, 8000)).save(folder / "huge.png")  # 72M pixels: a decompression bomb
    return folder


# ---- bad data: located, coded, before any model ------------------------------------------
BAD = [
    (_row("<image><image>two placeholders", ["ok.png"]), "OM-D001", "images", "2 <image> placeholder(s)"),
    (_row("no placeholder", ["ok.png"]), "OM-D001", "images", "but only 0 <image>"),
    (_row("<image>missing", ["nowhere.png"]), "OM-D014", "images[0]", "file not found: 'nowhere.png'"),
    (_row("<image>corrupt", ["corrupt.jpg"]), "OM-D014", "images[0]", "cannot be decoded as an image"),
    (_row("<image>a video", ["clip.mp4"]), "OM-D014", "images[0]", "is a video file"),
    (_row("<image>huge", ["huge.png"]), "OM-D014", "images[0]", "larger than the limit"),
    (_row("<image><image>second bad", ["ok.png", "corrupt.jpg"]), "OM-D014", "images[1]", "cannot be decoded"),
    (_row("<image>remote", ["https://example.com/a.png"]), "OM-D014", "images[0]", "remote URL"),
]


@pytest.mark.parametrize(("row", "code", "field", "reason"), BAD, ids=[b[3][:20] for b in BAD])
def test_bad_media_rows_are_located_coded_errors(tmp_path, row, code, field, reason):
    _media(tmp_path)
    data = write_jsonl(tmp_path / "d.jsonl", [_row("<image>fine", ["ok.png"]), row])
    with pytest.raises(OpenMindError) as info:
        load(data_args(dataset=[str(data)]), stage="mm-sft")
    err = info.value
    assert err.code == code and reason in err.message
    assert err.location == f"{data}:2 field {field!r}"


def test_validate_lists_every_bad_media_row(tmp_path, capsys):
    _media(tmp_path)
    rows = [_row("<image>fine", ["ok.png"])] + [b[0] for b in BAD]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    assert main(["data", "validate", str(data), "--stage", "mm-sft"]) == 1
    out = capsys.readouterr().out
    for line, (_, _, field, reason) in enumerate(BAD, start=2):
        assert f"{data}:{line} field {field!r}" in out and reason in out
    assert "kept 1, rejected 8" in out


# ---- formats ------------------------------------------------------------------------------
def test_llava_sharegpt4v_rows_convert_to_the_standard_format(tmp_path):
    _media(tmp_path)
    rows = [
        {
            "id": "000000033471",
            "image": "ok.png",
            "conversations": [
                {"from": "human", "value": "<image>\nWhat are the colors of the bus in the image?"},
                {"from": "gpt", "value": "The bus in the image is white and red."},
                {"from": "human", "value": "What feature can be seen on the back of the bus?"},
                {"from": "gpt", "value": "The back of the bus features an advertisement."},
            ],
        },
        {"id": "text-only", "conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello"}]},
    ]
    data = tmp_path / "llava.json"
    data.write_text(json.dumps(rows), encoding="utf-8")
    loaded = load(data_args(dataset=[str(data)]), stage="mm-sft")
    first = loaded.dataset[0]
    assert first["images"] == ["ok.png"] and loaded.dataset[1]["images"] == []
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "user", "assistant"]
    assert first["messages"][0]["content"] == "<image>\nWhat are the colors of the bus in the image?"
    # the same rows are refused by text sft (media columns), not silently trained without images
    with pytest.raises(OpenMindError) as info:
        load(data_args(dataset=[str(data)]), stage="sft")
    assert info.value.code == "OM-D012"


def test_mllm_demo_prepares_like_transformers_qwen2_vl_processor(tmp_path, vl_dir):
    """Issue 22: LLaMA-Factory's mllm_demo prepares; ids and pixel inputs equal the processor's."""
    from transformers import AutoTokenizer

    from openmind.data.multimodal import load_media_parts
    from openmind.nlp.templates import resolve_template

    tok = AutoTokenizer.from_pretrained(str(vl_dir))
    processor, config = load_media_parts(vl_dir)
    template = resolve_template(None, model_dir=str(vl_dir), tokenizer=tok)
    args = data_args(dataset=["mllm_demo"], dataset_dir=str(LF), data_cache_dir=str(tmp_path / "c"))
    prepared = prepare(args, tok, template, stage="mm-sft", image_processor=processor, model_config=config)
    assert prepared.stats["kept"] == 2 and not prepared.from_cache
    raw = json.loads((LF / "mllm_demo.json").read_text(encoding="utf-8"))
    reference = qwen2_vl_processor(vl_dir)
    for row, source in zip(prepared.train, raw):
        text = reference.apply_chat_template(as_parts(source["messages"]), tokenize=False)
        images = [Image.open(LF / p).convert("RGB") for p in source["images"]]
        # as processor.apply_chat_template(tokenize=True) calls it: the template holds the special tokens
        expected = reference(text=[text], images=images, return_tensors="np", add_special_tokens=False)
        assert row["input_ids"] == expected["input_ids"][0].tolist()
        shape = row["pixel_values_shape"]
        assert shape == list(expected["pixel_values"].shape)
        np.testing.assert_array_equal(
            np.asarray(row["pixel_values"], dtype=np.float32).reshape(shape), expected["pixel_values"]
        )
        assert row["image_grid_thw"] == expected["image_grid_thw"].reshape(-1).tolist()
        # labels: the assistant answers (and their end token) only
        trained = tok.decode([t for t, y in zip(row["input_ids"], row["labels"]) if y != -100])
        answers = [m["content"] for m in source["messages"] if m["role"] == "assistant"]
        assert trained == "<|im_end|>".join(answers) + "<|im_end|>"
    # the second run is a cache hit; a changed image is not
    again = prepare(args, tok, template, stage="mm-sft", image_processor=processor, model_config=config)
    assert again.from_cache
    copy = tmp_path / "lf"
    import shutil

    shutil.copytree(LF, copy)
    args2 = data_args(dataset=["mllm_demo"], dataset_dir=str(copy), data_cache_dir=str(tmp_path / "c"))
    assert prepare(args2, tok, template, stage="mm-sft", image_processor=processor, model_config=config).from_cache
    Image.open(copy / "mllm_demo_data" / "2.jpg").transpose(Image.Transpose.FLIP_LEFT_RIGHT).save(
        copy / "mllm_demo_data" / "2.jpg"
    )
    changed = prepare(args2, tok, template, stage="mm-sft", image_processor=processor, model_config=config)
    assert not changed.from_cache


def test_data_prepare_cli_takes_mm_sft(tmp_path, vl_dir, capsys):
    argv = ["data", "prepare", "--stage", "mm-sft", "--dataset", "mllm_demo", "--dataset-dir", str(LF)]
    assert main([*argv, "--model", str(vl_dir), "--data-cache-dir", str(tmp_path / "c"), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["kept"] == 2 and stats["train_rows"] == 2
    # packing is refused for multimodal rows
    assert main([*argv, "--model", str(vl_dir), "--data-cache-dir", str(tmp_path / "c"), "--packing", "true"]) != 0
    assert "packing" in capsys.readouterr().err
    # preview shows the visual tokens and the trained spans
    assert (
        main(
            [
                "data",
                "preview",
                "--stage",
                "mm-sft",
                "--dataset",
                "mllm_demo",
                "--dataset-dir",
                str(LF),
                "--model",
                str(vl_dir),
                "-n",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "<|vision_start|><|image_pad|>" in out and "«They're Kane and Gretzka from Bayern Munich.<|im_end|>»" in out


def test_a_cutoff_that_cuts_an_image_is_refused_with_the_row(tmp_path, vl_dir):
    from transformers import AutoTokenizer

    from openmind.data.multimodal import load_media_parts
    from openmind.nlp.templates import resolve_template

    _media(tmp_path)
    data = write_jsonl(tmp_path / "d.jsonl", [_row("<image>" + "a long question " * 6, ["ok.png"])])
    tok = AutoTokenizer.from_pretrained(str(vl_dir))
    processor, config = load_media_parts(vl_dir)
    template = resolve_template(None, model_dir=str(vl_dir), tokenizer=tok)
    # left truncation keeps the answer and cuts the start, where the image is
    args = data_args(dataset=[str(data)], cutoff_len=30, truncation="left", data_cache_dir=str(tmp_path / "c"))
    with pytest.raises(OpenMindError) as info:
        prepare(args, tok, template, stage="mm-sft", image_processor=processor, model_config=config)
    assert info.value.code == "OM-D007" and f"{data}:1" in info.value.location
    assert "visual tokens" in info.value.message
