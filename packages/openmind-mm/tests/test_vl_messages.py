"""Vision-language messages (framework neutral): canonical form, images in order, located errors,
limits, groups matched from config.json, the stored official templates unchanged."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from PIL import Image

from openmind.core.errors import OpenMindError
from openmind.mm.media import image_to_data_url
from openmind.mm.vl.groups import VL_GROUPS, vl_group_of, vl_group_of_dir
from openmind.mm.vl.messages import MediaLimits, has_images, normalise_conversation, read_image

DATA = Path(__file__).parent / "data" / "chat_templates"


def code(exc: pytest.ExceptionInfo) -> str:
    return exc.value.code


@pytest.fixture
def red(tmp_path):
    path = tmp_path / "red.png"
    Image.new("RGB", (8, 6), (255, 0, 0)).save(path)
    return path


def test_content_parts_become_canonical_with_images_in_order(red):
    blue = Image.new("RGB", (4, 4), (0, 0, 255))
    conv = normalise_conversation(
        [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": image_to_data_url(blue)}},
                    {"type": "text", "text": "and"},
                    {"type": "image_url", "image_url": {"url": red.as_uri()}},
                    {"type": "image", "image": str(red)},
                ],
            },
            {"role": "assistant", "content": "ok"},
        ]
    )
    assert conv.messages == [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {
            "role": "user",
            "content": [{"type": "image"}, {"type": "text", "text": "and"}, {"type": "image"}, {"type": "image"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    ]
    assert [im.size for im in conv.images] == [(4, 4), (8, 6), (8, 6)]
    assert conv.images[0].getpixel((0, 0)) == (0, 0, 255)


def test_llamafactory_placeholders_take_the_images_list(red):
    conv = normalise_conversation(
        [{"role": "user", "content": "<image>Left<image>right?"}, {"role": "assistant", "content": "yes"}],
        [str(red), Image.new("RGB", (2, 2))],
    )
    assert conv.messages[0]["content"] == [
        {"type": "image"},
        {"type": "text", "text": "Left"},
        {"type": "image"},
        {"type": "text", "text": "right?"},
    ]
    assert [im.size for im in conv.images] == [(8, 6), (2, 2)]


def test_placeholder_count_mismatch_is_located(red):
    with pytest.raises(OpenMindError) as info:
        normalise_conversation([{"role": "user", "content": "<image><image>Two?"}], [str(red)])
    assert code(info) == "OM-I305" and info.value.location == "messages[0].content"
    with pytest.raises(OpenMindError) as info:
        normalise_conversation([{"role": "user", "content": "<image>One"}], [str(red), str(red)])
    assert code(info) == "OM-I305" and info.value.location == "images[1]"


def test_bad_parts_and_images_are_located(tmp_path, red):
    with pytest.raises(OpenMindError) as info:
        normalise_conversation([{"role": "user", "content": [{"type": "audio", "audio": "x.wav"}]}])
    assert code(info) == "OM-I304" and info.value.location == "messages[0].content[0].type"
    with pytest.raises(OpenMindError) as info:
        normalise_conversation([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}])
    assert code(info) == "OM-I304" and info.value.location == "messages[0].content[0].image_url"
    with pytest.raises(OpenMindError) as info:
        normalise_conversation(
            [{"role": "user", "content": "hi"}, {"role": "user", "content": [{"type": "image", "image": "nope.png"}]}]
        )
    assert code(info) == "OM-I301" and info.value.location == "messages[1].content[0].image"
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG not really")
    with pytest.raises(OpenMindError) as info:
        normalise_conversation(
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": str(broken)}}]}]
        )
    assert code(info) == "OM-I301" and info.value.location == "messages[0].content[0].image_url"
    with pytest.raises(OpenMindError) as info:
        normalise_conversation([{"role": "robot", "content": "hi"}])
    assert info.value.location == "messages[0].role"


def test_remote_urls_are_refused_unless_fetched(red):
    msg = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}]
    with pytest.raises(OpenMindError) as info:
        normalise_conversation(msg)
    assert code(info) == "OM-I307" and info.value.location == "messages[0].content[0].image_url"
    seen = []

    def fetch(url, limit):
        seen.append((url, limit))
        return red.read_bytes()

    conv = normalise_conversation(msg, limits=MediaLimits(fetch=fetch, max_image_bytes=10_000))
    assert conv.images[0].size == (8, 6) and seen == [("https://example.com/a.png", 10_000)]


def test_limits_count_bytes_pixels_and_roots(tmp_path, red):
    part = {"type": "image_url", "image_url": {"url": image_to_data_url(Image.new("RGB", (8, 6)))}}
    msg = [{"role": "user", "content": [part, part, part]}]
    with pytest.raises(OpenMindError) as info:
        normalise_conversation(msg, limits=MediaLimits(max_images=2))
    assert code(info) == "OM-I306" and info.value.location == "messages[0].content[2].image_url"
    with pytest.raises(OpenMindError) as info:
        normalise_conversation(msg, limits=MediaLimits(max_image_bytes=10))
    assert code(info) == "OM-I306" and info.value.location == "messages[0].content[0].image_url"
    with pytest.raises(OpenMindError) as info:
        normalise_conversation(msg, limits=MediaLimits(max_image_pixels=47))
    assert code(info) == "OM-I306" and "8x6" in str(info.value)
    assert len(normalise_conversation(msg, limits=MediaLimits(max_images=3, max_image_pixels=48)).images) == 3
    # file URLs are confined to the allowed roots (no escape through .. or symlinks)
    inside = tmp_path / "media"
    inside.mkdir()
    (inside / "ok.png").write_bytes(red.read_bytes())
    (inside / "link.png").symlink_to(red)
    roots = MediaLimits(file_roots=(str(inside),))
    assert read_image((inside / "ok.png").as_uri(), "x", roots).size == (8, 6)
    for escape in (f"file://{inside}/../red.png", (inside / "link.png").as_uri(), str(red)):
        with pytest.raises(OpenMindError) as info:
            read_image(escape, "messages[0].content[0].image_url", roots)
        assert code(info) == "OM-I307" and info.value.location == "messages[0].content[0].image_url"
    with pytest.raises(OpenMindError) as info:
        read_image(str(red), "x", MediaLimits(file_roots=()))
    assert code(info) == "OM-I307" and "none allowed" in str(info.value)


def test_has_images():
    assert has_images([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}])
    assert not has_images([{"role": "user", "content": [{"type": "text", "text": "x"}]}])
    assert not has_images("hello")


def test_groups_match_config_and_are_registered(tmp_path):
    assert vl_group_of({"model_type": "qwen2_vl"}).name == "qwen2-vl"
    assert vl_group_of({"model_type": "qwen2_5_vl"}).name == "qwen2.5-vl"
    assert vl_group_of({"model_type": "llava"}).name == "llava-1.5"
    assert vl_group_of({"architectures": ["LlavaNextForConditionalGeneration"]}).name == "llava-next"
    assert vl_group_of({"model_type": "llama", "architectures": ["LlamaForCausalLM"]}) is None
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen3_vl"}))
    assert vl_group_of_dir(tmp_path).name == "qwen3-vl"
    assert vl_group_of_dir(tmp_path / "missing") is None

    from openmind.core.plugins import get_registry
    from openmind.core.specs import ModelGroupSpec

    registry = get_registry()
    names = {g.name for g in registry.all(ModelGroupSpec)}
    assert {g.name for g in VL_GROUPS} <= names
    assert registry.task("mm-chat").capabilities == ("generative", "chat")
    assert registry.task("image-text-to-text").name == "mm-chat"
    for group in VL_GROUPS:
        assert group.tasks == ("mm-chat", "mm-sft") and group.frameworks == ("pt",)


def test_mm_chat_is_inferred_for_a_vl_processor_folder(tmp_path):
    from openmind.mm.folders import infer_media_task

    (tmp_path / "config.json").write_text(
        json.dumps({"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"]})
    )
    (tmp_path / "processor_config.json").write_text("{}")
    assert infer_media_task(tmp_path) == "mm-chat"


def test_stored_official_templates_are_unchanged():
    sources = json.loads((DATA / "SOURCES.json").read_text())
    assert set(sources) == {p.name for p in DATA.glob("*.jinja")}
    for name, entry in sources.items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == entry["sha256"], name
        assert entry["source"] and entry["model"]
    # the Qwen2-VL copy is the one openmind-nlp stores for its text part
    nlp = Path(__file__).parents[2] / "openmind-nlp" / "tests" / "data" / "chat_templates" / "qwen2-vl.jinja"
    if nlp.is_file():
        assert nlp.read_bytes() == (DATA / "qwen2-vl.jinja").read_bytes()
