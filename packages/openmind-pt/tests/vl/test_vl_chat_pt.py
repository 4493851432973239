"""Vision-language chat on PyTorch: the pipeline equals transformers' own path (the processor's
``apply_chat_template(tokenize=True)`` + ``model.generate``) for a tiny Qwen2-VL and a tiny LLaVA,
with one image, two images, batches of rows with different image counts, streaming; the prompt is
the stored official template's rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from openmind.core.errors import OpenMindError

TEMPLATES = Path(__file__).parents[3] / "openmind-mm" / "tests" / "data" / "chat_templates"


def template(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


FAMILIES = ("qwen2-vl", "qwen2.5-vl", "llava-1.5")
MAX_NEW = 8


def ask(image_parts, text="What colour is the square?"):
    return [{"role": "user", "content": [*image_parts, {"type": "text", "text": text}]}]


def reference(pipe, messages, max_new_tokens=MAX_NEW):
    """transformers' own path: processor.apply_chat_template(tokenize=True) -> model.generate."""
    import torch

    processor, model = pipe.backend.processor, pipe.backend.model
    inputs = processor.apply_chat_template(
        messages, add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt"
    )
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
    tokens = out[0, inputs["input_ids"].shape[1] :].tolist()
    eos = set(pipe.backend.eos_ids)
    for i, token in enumerate(tokens):
        if token in eos:
            return tokens[:i], inputs
    return tokens, inputs


@pytest.mark.parametrize("family", FAMILIES)
def test_chat_on_a_vl_folder_is_mm_chat(vl_pipes, family):
    pipe = vl_pipes[family]
    assert type(pipe).__name__ == "VLChatPipeline" and pipe.task == "mm-chat"
    assert (
        type(pipe.model).__name__
        == {
            "qwen2-vl": "Qwen2VLForConditionalGeneration",
            "qwen2.5-vl": "Qwen2_5_VLForConditionalGeneration",
            "llava-1.5": "LlavaForConditionalGeneration",
        }[family]
    )
    assert pipe.selection["impl"] == "openmind.pt.pipelines.vl_chat:TorchVLChat"


@pytest.mark.parametrize("family", FAMILIES)
def test_prompt_is_the_official_template(vl_dirs, vl_pipes, images, family):
    from transformers.utils.chat_template_utils import render_jinja_template

    official = template("llava-1.5.jinja" if family == "llava-1.5" else "qwen2-vl.jinja")
    assert (Path(vl_dirs[family]) / "chat_template.jinja").read_text() == official
    pipe = vl_pipes[family]
    conversation = [
        {"role": "user", "content": [{"type": "image", "image": images["red"]}, {"type": "text", "text": "Colour?"}]},
        {"role": "assistant", "content": "Red."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "And these?"}, {"type": "image", "image": images["blue"]}],
        },
    ]
    canonical = [
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Colour?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Red."}]},
        {"role": "user", "content": [{"type": "text", "text": "And these?"}, {"type": "image"}]},
    ]
    rendered, _ = render_jinja_template(
        conversations=[canonical],
        chat_template=official,
        add_generation_prompt=True,
        **pipe.backend.tokenizer.special_tokens_map,
    )
    assert pipe.render(conversation) == rendered[0]
    # and what each family documents, written by hand
    expected = {
        "qwen2-vl": "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Colour?<|im_end|>\n"
        "<|im_start|>assistant\nRed.<|im_end|>\n"
        "<|im_start|>user\nAnd these?<|vision_start|><|image_pad|><|vision_end|><|im_end|>\n"
        "<|im_start|>assistant\n",
        "llava-1.5": "USER: <image>\nColour? ASSISTANT: Red. USER: <image>\nAnd these? ASSISTANT:",
    }
    expected["qwen2.5-vl"] = expected["qwen2-vl"]  # the same official template
    assert pipe.render(conversation) == expected[family]


@pytest.mark.parametrize("family", FAMILIES)
def test_build_vl_inputs_equals_apply_chat_template(vl_pipes, images, family):
    import torch

    from openmind.mm.vl.inputs import build_vl_inputs

    pipe = vl_pipes[family]
    processor = pipe.backend.processor
    parts = [{"type": "image", "image": images["red"]}, {"type": "image", "image": images["blue"]}]
    ours = build_vl_inputs(processor, ask(parts))
    _, theirs = reference(pipe, ask(parts), 1)
    assert set(ours.keys()) == set(theirs.keys())
    for key in theirs:
        assert torch.equal(ours[key], theirs[key]), key
    image_token = processor.tokenizer.convert_tokens_to_ids(processor.image_token)
    # the processor expanded each image to its own number of visual tokens (4 + 6 here)
    assert int((ours["input_ids"] == image_token).sum()) == {"qwen2-vl": 10, "qwen2.5-vl": 10, "llava-1.5": 8}[family]
    # LLaMA-Factory rows (<image> placeholders + images) give the same inputs
    row = build_vl_inputs(
        processor,
        [{"role": "user", "content": "<image><image>What colour is the square?"}],
        images=[images["red"], images["blue"]],
    )
    for key in theirs:
        assert torch.equal(row[key], theirs[key]), key


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("n_images", [1, 2])
def test_pipeline_equals_generate(vl_pipes, images, family, n_images):
    pipe = vl_pipes[family]
    parts = [{"type": "image", "image": images[c]} for c in ("red", "blue")[:n_images]]
    expected, _ = reference(pipe, ask(parts))
    [generation] = pipe.generate([ask(parts)])
    assert generation.token_ids == expected
    text = pipe.backend.tokenizer.decode(expected, skip_special_tokens=True, clean_up_tokenization_spaces=False)
    assert pipe(ask(parts)) == {"role": "assistant", "content": text}
    # the same images as data URLs / files through OpenAI's image_url parts
    from openmind.mm.media import image_to_data_url

    urls = [
        {"type": "image_url", "image_url": {"url": image_to_data_url(images[c])}} for c in ("red", "blue")[:n_images]
    ]
    assert pipe.generate([ask(urls)])[0].token_ids == expected


@pytest.mark.parametrize("family", FAMILIES)
def test_batch_with_mixed_image_counts(vl_pipes, images, family):
    pipe = vl_pipes[family]
    rows = [
        ask([{"type": "image", "image": images["red"]}]),
        ask([{"type": "image", "image": images["blue"]}, {"type": "image", "image": images["green"]}], "Compare them."),
        [{"role": "user", "content": "No picture here, just text."}],
        ask([{"type": "image", "image": images["green"]}], "Short?"),
    ]
    batched = pipe.generate(rows, batch_size=4)
    for row, generation in zip(rows, batched):
        as_parts = [
            {**m, "content": [{"type": "text", "text": m["content"]}]} if isinstance(m["content"], str) else m
            for m in row
        ]
        expected, _ = reference(pipe, as_parts)
        assert generation.token_ids == expected
    assert pipe(rows, batch_size=4) == [pipe(row) for row in rows]


@pytest.mark.parametrize("family", FAMILIES)
def test_streaming_equals_non_streaming(vl_pipes, images, family):
    pipe = vl_pipes[family]
    messages = ask([{"type": "image", "image": images["blue"]}, {"type": "image", "image": images["red"]}])
    deltas = list(pipe(messages, stream=True))
    assert len(deltas) >= 1
    assert "".join(deltas) == pipe(messages)["content"]


def test_session_attaches_images(vl_pipes, images, tmp_path):
    pipe = vl_pipes["qwen2-vl"]
    path = tmp_path / "red.png"
    images["red"].save(path)
    session = pipe.session()
    session.attach(str(path))
    answer = session.send("What colour?")
    assert answer == pipe(ask([{"type": "image", "image": str(path)}], "What colour?"))["content"]
    assert session.history[0]["content"][0]["type"] == "image" and not session.pending
    follow = session.send("Sure?")
    assert follow == pipe([*session.history[:2], {"role": "user", "content": "Sure?"}])["content"]
    with pytest.raises(OpenMindError) as info:
        session.attach(str(tmp_path / "missing.png"))
    assert info.value.code == "OM-I301"
    (tmp_path / "bad.png").write_bytes(b"not an image")
    with pytest.raises(OpenMindError) as info:
        session.attach(str(tmp_path / "bad.png"))
    assert info.value.code == "OM-I301"


def test_bad_inputs_are_located(vl_pipes, images):
    pipe = vl_pipes["llava-1.5"]
    with pytest.raises(OpenMindError) as info:
        pipe([ask([{"type": "image", "image": images["red"]}]), ask([{"type": "image", "image": "missing.png"}])])
    assert info.value.code == "OM-I301" and info.value.location == "input[1].messages[0].content[0].image"
    with pytest.raises(OpenMindError) as info:
        pipe({"messages": [{"role": "user", "content": "<image><image>Two?"}], "images": [images["red"]]})
    assert info.value.code == "OM-I305"


def test_mindspore_is_refused_with_a_reason(qwen2_vl_dir, monkeypatch):
    from openmind import pipeline

    with pytest.raises(OpenMindError) as info:
        pipeline("chat", model=qwen2_vl_dir, framework="ms")
    assert info.value.code == "OM-M303" and "PyTorch" in info.value.hint
    monkeypatch.setenv("OPENMIND_FRAMEWORK", "ms")
    with pytest.raises(OpenMindError) as info:
        pipeline("mm-chat", model=qwen2_vl_dir)
    assert info.value.code == "OM-M303"


def test_cli_chat_image_command(qwen2_vl_dir, vl_pipes, images, tmp_path):
    """``openmind chat --model VL_DIR``: /image PATH attaches an image to the next message; a missing
    or corrupt file is a coded notice and the conversation goes on."""
    import os
    import subprocess
    import sys

    red = tmp_path / "red.png"
    images["red"].save(red)
    (tmp_path / "bad.png").write_bytes(b"not an image")
    script = f"/image {tmp_path / 'missing.png'}\n/image {tmp_path / 'bad.png'}\n/image {red}\nWhat colour?\nSure?\n/history\n/exit\n"
    env = {**os.environ, "OPENMIND_LOG_DIR": str(tmp_path / "logs")}
    exe = Path(sys.executable).with_name("openmind")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "openmind.core.cli.main"]
    args = ["chat", "--model", qwen2_vl_dir, "--max-new-tokens", "6", "--temperature", "0"]
    out = subprocess.run(cmd + args, input=script, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    session = vl_pipes["qwen2-vl"].session(max_new_tokens=6, temperature=0)
    session.attach(str(red))
    expected = [session.send("What colour?"), session.send("Sure?")]
    assert out.stdout.splitlines() == expected
    assert out.stderr.count("image not attached: OM-I301") == 2
    assert "image attached to the next message" in out.stderr
    assert "[user] [image] What colour?" in out.stderr


def test_run_over_llamafactory_rows(llava_dir, vl_pipes, images, tmp_path):
    """``openmind run chat --model VL_DIR --input rows.jsonl``: mllm_demo-style rows keep their images."""
    import json
    import os
    import subprocess
    import sys

    images["red"].save(tmp_path / "red.png")
    images["blue"].save(tmp_path / "blue.png")
    rows = [
        {"messages": [{"role": "user", "content": "<image>What colour?"}], "images": [str(tmp_path / "red.png")]},
        {
            "messages": [{"role": "user", "content": "<image><image>Which differ?"}],
            "images": [str(tmp_path / "red.png"), str(tmp_path / "blue.png")],
        },
    ]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {**os.environ, "OPENMIND_LOG_DIR": str(tmp_path / "logs")}
    exe = Path(sys.executable).with_name("openmind")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "openmind.core.cli.main"]
    args = ["run", "chat", "--model", llava_dir, "--input", str(tmp_path / "rows.jsonl"), "--json"]
    args += ["--max-new-tokens", "8", "--temperature", "0", "--batch-size", "2"]
    out = subprocess.run(cmd + args, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    answers = [json.loads(line)["output"]["content"] for line in out.stdout.splitlines()]
    assert answers == [vl_pipes["llava-1.5"](row)["content"] for row in rows]
