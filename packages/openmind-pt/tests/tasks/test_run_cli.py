"""``openmind run`` for media tasks: files in, files out (--output-dir), JSON for the rest."""

from __future__ import annotations

import json

import pytest

from openmind.core.cli.main import main


def test_run_text2image_writes_an_image_of_the_requested_size(sd_dir, tmp_path, capsys):
    from PIL import Image

    out = tmp_path / "out"
    code = main(
        [
            "run",
            "text2image",
            "--model",
            str(sd_dir),
            "--input",
            "a cat",
            "--output-dir",
            str(out),
            "--set",
            "size=32x40",
            "--set",
            "num_inference_steps=2",
            "--set",
            "seed=0",
            "--json",
        ]
    )
    assert code == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    path = record["output"]
    assert path.startswith(str(out)) and Image.open(path).size == (32, 40)
    from openmind import pipeline

    same = pipeline("text2image", model=str(sd_dir), num_inference_steps=2)("a cat", seed=0, size="32x40")
    assert Image.open(path).convert("RGB").tobytes() == same.tobytes()


def test_run_text2image_without_output_dir_is_a_coded_error(sd_dir, capsys):
    assert main(["run", "text2image", "--model", str(sd_dir), "--input", "a cat"]) != 0
    assert "OM-A004" in capsys.readouterr().err


def test_run_image_classification_over_a_folder_of_files(vit_dir, images, tmp_path, capsys):
    folder = tmp_path / "photos"
    folder.mkdir()
    for i, im in enumerate(images):
        im.save(folder / f"{i}.png")
    assert (
        main(
            [
                "run",
                "image-classification",
                "--model",
                str(vit_dir),
                "--input",
                str(folder),
                "--json",
                "--set",
                "top_k=1",
            ]
        )
        == 0
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert [r["input"] for r in lines] == [str(folder / f"{i}.png") for i in range(len(images))]
    from openmind import pipeline

    expected = pipeline("image-classification", model=str(vit_dir))(
        [str(folder / f"{i}.png") for i in range(4)], top_k=1
    )
    assert [r["output"] for r in lines] == expected


@pytest.mark.parametrize("task", ["question-answering"])
def test_run_question_answering_from_jsonl(task, qa_dir, tmp_path, capsys):
    rows = tmp_path / "q.jsonl"
    rows.write_text(json.dumps({"question": "Where do I live?", "context": "I live in Berlin."}) + "\n")
    assert main(["run", task, "--model", str(qa_dir), "--input", str(rows), "--json"]) == 0
    record = json.loads(capsys.readouterr().out.strip())
    assert set(record["output"]) == {"score", "start", "end", "answer"}
