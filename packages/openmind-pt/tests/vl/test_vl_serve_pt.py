"""``openmind deploy`` on a vision-language folder: the real ``openai`` client sends images as data
URLs and gets what the pipeline answers; remote URLs are refused unless allowed; file URLs are
confined to --media-root; the caps are 400s naming the request field."""

from __future__ import annotations

import openai
import pytest

from openmind.mm.media import image_to_data_url
from openmind.nlp.serve.app import ServeSettings, create_app
from openmind.nlp.serve.server import ServerThread


def build(model: str, **overrides):
    from openmind.core.args import parse
    from openmind.nlp.serve.pipeline_engine import build_engine

    values = {"model": model, "framework": "pt", "device": "cpu", **overrides}
    return build_engine(parse(["model", "template", "deploy"], overrides=values))


@pytest.fixture(scope="module")
def media_root(tmp_path_factory):
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="module")
def server(qwen2_vl_dir, media_root):
    engine = build(qwen2_vl_dir, media_root=[str(media_root)], max_images=2, max_image_pixels=84 * 84)
    assert "chat" in engine.kinds
    with ServerThread(create_app(engine, ServeSettings(served_model_name="tiny-vl", max_batch_size=4))) as s:
        yield s


def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0, timeout=120)


def image_part(url):
    return {"type": "image_url", "image_url": {"url": url}}


def test_openai_client_with_data_urls_equals_the_pipeline(server, vl_pipes, images):
    c = client(server)
    for colours in (("red",), ("blue", "green")):
        parts = [image_part(image_to_data_url(images[k])) for k in colours]
        messages = [{"role": "user", "content": [*parts, {"type": "text", "text": "What colour is it?"}]}]
        served = c.chat.completions.create(model="tiny-vl", messages=messages, max_tokens=8, temperature=0)
        direct = vl_pipes["qwen2-vl"](messages, max_new_tokens=8)
        assert served.choices[0].message.content == direct["content"]
        [generation] = vl_pipes["qwen2-vl"].generate([messages], max_new_tokens=8)
        assert served.usage.completion_tokens == len(generation.token_ids)
        assert served.usage.prompt_tokens == generation.prompt_tokens
        stream = c.chat.completions.create(model="tiny-vl", messages=messages, max_tokens=8, temperature=0, stream=True)
        assert "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices) == direct["content"]


def test_file_urls_are_confined_to_the_media_root(server, vl_pipes, images, media_root, tmp_path):
    c = client(server)
    inside = media_root / "red.png"
    images["red"].save(inside)
    messages = [{"role": "user", "content": [image_part(inside.as_uri()), {"type": "text", "text": "Colour?"}]}]
    served = c.chat.completions.create(model="tiny-vl", messages=messages, max_tokens=6, temperature=0)
    assert served.choices[0].message.content == vl_pipes["qwen2-vl"](messages, max_new_tokens=6)["content"]
    outside = tmp_path / "secret.png"
    images["red"].save(outside)
    for url in (outside.as_uri(), f"file://{media_root}/../{outside.parent.name}/secret.png", str(outside)):
        bad = [{"role": "user", "content": [{"type": "text", "text": "hi"}, image_part(url)]}]
        with pytest.raises(openai.BadRequestError) as info:
            c.chat.completions.create(model="tiny-vl", messages=bad, max_tokens=4)
        assert "OM-I307" in str(info.value) and info.value.body["param"] == "messages[0].content[1].image_url"


def test_remote_urls_are_refused(server):
    c = client(server)
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [image_part("https://example.com/cat.png"), {"type": "text", "text": "What?"}]},
    ]
    with pytest.raises(openai.BadRequestError) as info:
        c.chat.completions.create(model="tiny-vl", messages=messages, max_tokens=4)
    assert "OM-I307" in str(info.value) and info.value.body["param"] == "messages[1].content[0].image_url"


def test_caps_are_located_400s(server, images):
    from PIL import Image

    c = client(server)
    small = image_part(image_to_data_url(images["red"]))
    cases = [
        ([small, small, small], "messages[2].content[2].image_url", "more than 2 images"),
        ([image_part(image_to_data_url(Image.new("RGB", (90, 90))))], "messages[2].content[0].image_url", "pixels"),
        ([image_part("data:image/png;base64,AAAA")], "messages[2].content[0].image_url", "OM-I301"),
    ]
    for parts, param, text in cases:
        messages = [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello"},
            {"role": "user", "content": [*parts, {"type": "text", "text": "and?"}]},
        ]
        with pytest.raises(openai.BadRequestError) as info:
            c.chat.completions.create(model="tiny-vl", messages=messages, max_tokens=4)
        assert info.value.body["param"] == param and text in str(info.value)


def test_remote_urls_are_downloaded_with_allow_remote_media(qwen2_vl_dir, vl_pipes, images, tmp_path):
    """--allow-remote-media: the server downloads the URL (here from a local HTTP server)."""
    import functools
    import http.server
    import threading

    images["green"].save(tmp_path / "green.png")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/green.png"
        engine = build(qwen2_vl_dir, allow_remote_media=True)
        with ServerThread(create_app(engine, ServeSettings(served_model_name="tiny-vl"))) as s:
            messages = [{"role": "user", "content": [image_part(url), {"type": "text", "text": "Colour?"}]}]
            served = client(s).chat.completions.create(model="tiny-vl", messages=messages, max_tokens=6, temperature=0)
            local = [
                {
                    "role": "user",
                    "content": [{"type": "image", "image": images["green"]}, {"type": "text", "text": "Colour?"}],
                }
            ]
            assert served.choices[0].message.content == vl_pipes["qwen2-vl"](local, max_new_tokens=6)["content"]
    finally:
        httpd.shutdown()
        thread.join()


def test_a_text_model_answers_image_parts_with_a_400(tmp_path, images):
    from openmind.pt.testing import tiny_llama

    engine = build(str(tiny_llama(tmp_path / "text")))
    with ServerThread(create_app(engine, ServeSettings(served_model_name="text"))) as s:
        messages = [
            {"role": "user", "content": [image_part(image_to_data_url(images["red"])), {"type": "text", "text": "x"}]}
        ]
        with pytest.raises(openai.BadRequestError) as info:
            client(s).chat.completions.create(model="text", messages=messages, max_tokens=4)
        assert "reads text only" in str(info.value)


def test_template_options_do_not_apply_to_vl_folders(qwen2_vl_dir):
    from openmind import pipeline
    from openmind.core.errors import OpenMindError

    # a named template that renders text exactly as the folder's own (LLaMA-Factory's qwen2_vl for
    # Qwen2-VL) is accepted; the prompt stays the processor's
    own = pipeline("chat", model=str(qwen2_vl_dir), max_new_tokens=2)
    named = pipeline("chat", model=str(qwen2_vl_dir), template="qwen2_vl", max_new_tokens=2)
    assert named.template is None and named.render([{"role": "user", "content": "Hi"}]) == own.render(
        [{"role": "user", "content": "Hi"}]
    )
    # one that renders differently is refused, located, saying where the prompts differ
    with pytest.raises(OpenMindError) as info:
        build(qwen2_vl_dir, template="llama2")
    assert info.value.code == "OM-I102" and info.value.location == "template"
    assert "renders text differently" in info.value.message and "first difference at character 1:" in info.value.message
    with pytest.raises(OpenMindError) as info:
        build(qwen2_vl_dir, template="no-such-template")
    assert info.value.code == "OM-I102" and info.value.location == "template"
    with pytest.raises(OpenMindError) as info:
        build(qwen2_vl_dir, max_images=0)
    assert info.value.location == "--max-images"
