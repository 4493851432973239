"""``POST /v1/images/generations`` (openmind-mm's route) on a deployed tiny Stable Diffusion folder
(random UNet/VAE/CLIP text encoder from configs, offline-built CLIP tokenizer): the real ``openai``
client's ``images.generate`` returns the text2image pipeline's image bytes for the same seed,
as base64 or as files under the server's images folder; bad sizes and n over the cap are coded
400s naming the request field."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from urllib.parse import unquote, urlparse

import httpx
import openai
import pytest
from PIL import Image

from openmind import pipeline
from openmind.core.args import parse
from openmind.core.errors import OpenMindError
from openmind.nlp.serve.app import ServeSettings, create_app
from openmind.nlp.serve.pipeline_engine import TaskEngine, build_engine
from openmind.nlp.serve.schemas import Limits
from openmind.nlp.serve.server import ServerThread

GROUPS = ["model", "template", "deploy", "images"]


@pytest.fixture(scope="module")
def sd_dir(tmp_path_factory):
    from openmind.pt.testing import tiny_stable_diffusion

    return str(tiny_stable_diffusion(tmp_path_factory.mktemp("sd") / "tiny-sd"))


@pytest.fixture(scope="module")
def draw(sd_dir):
    return pipeline("text2image", model=sd_dir, framework="pt", device="cpu")


@pytest.fixture(scope="module")
def server(sd_dir, tmp_path_factory):
    images = tmp_path_factory.mktemp("served-images")
    ns = parse(
        GROUPS,
        overrides={"model": sd_dir, "framework": "pt", "device": "cpu", "images_dir": str(images), "max_n": 3},
    )
    engine = build_engine(ns)
    assert isinstance(engine, TaskEngine) and engine.kinds == {"text2image"}
    settings = ServeSettings(served_model_name="tiny-sd", limits=Limits(max_n=3), arguments=ns)
    with ServerThread(create_app(engine, settings)) as s:
        s.images = images
        yield s


def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0, timeout=120)


def decoded(blob: bytes) -> Image.Image:
    return Image.open(io.BytesIO(blob))


STEPS = {"num_inference_steps": 2}


def test_images_generate_b64_equals_the_pipeline_for_a_seed(server, draw):
    out = client(server).images.generate(
        model="tiny-sd",
        prompt="a cat",
        size="32x40",
        response_format="b64_json",
        extra_body={"seed": 7, "negative_prompt": "blurry", "guidance_scale": 5.0, **STEPS},
    )
    expected = draw("a cat", seed=7, width=32, height=40, negative_prompt="blurry", guidance_scale=5.0, **STEPS)
    assert len(out.data) == 1 and out.size == "32x40" and out.output_format == "png"
    image = decoded(base64.b64decode(out.data[0].b64_json))
    assert image.size == (32, 40) and image.tobytes() == expected.tobytes()
    # n images: image j is the pipeline's image for seed + j (what the pipeline does itself)
    two = client(server).images.generate(
        prompt="a dog", n=2, size="32x32", response_format="b64_json", extra_body={"seed": 3, **STEPS}
    )
    got = [decoded(base64.b64decode(d.b64_json)).tobytes() for d in two.data]
    assert got == [draw("a dog", seed=s, width=32, height=32, **STEPS).tobytes() for s in (3, 4)]


def test_images_generate_url_is_a_file_under_the_images_folder(server, draw):
    out = client(server).images.generate(
        prompt="a cat", size="32x32", response_format="url", output_format="png", extra_body={"seed": 1, **STEPS}
    )
    url = urlparse(out.data[0].url)
    path = Path(unquote(url.path))
    assert url.scheme == "file" and path.parent == server.images.resolve() and path.suffix == ".png"
    expected = draw("a cat", seed=1, width=32, height=32, **STEPS)
    assert decoded(path.read_bytes()).tobytes() == expected.tobytes()
    # OpenAI's default response_format is url
    default = httpx.post(server.url + "/v1/images/generations", json={"prompt": "x", "size": "32x32", **STEPS})
    assert default.status_code == 200 and default.json()["data"][0]["url"].startswith("file://")


@pytest.mark.parametrize(
    ("body", "param", "words"),
    [
        ({"size": "big"}, "size", "WIDTHxHEIGHT"),
        ({"size": "30x32"}, "size", "multiples of 8"),
        ({"size": "4096x4096"}, "size", "at most 2048"),
        ({"n": 4}, "n", "limit of 3"),
        ({"n": 0}, "n", "between 1 and"),
        ({"num_inference_steps": 0}, "num_inference_steps", ">= 1"),
        ({"scheduler": "nope"}, None, "scheduler"),
        ({"response_format": "gif"}, "response_format", "url"),
    ],
)
def test_bad_requests_are_coded_400s_naming_the_field(server, body, param, words):
    response = httpx.post(server.url + "/v1/images/generations", json={"prompt": "a cat", **body}, timeout=60)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert words in error["message"]
    if param is not None:
        assert error["param"] == param
    if "response_format" not in body:
        assert error["message"].startswith("[OM-I303]")


def test_openai_client_sees_the_400(server):
    with pytest.raises(openai.BadRequestError) as info:
        client(server).images.generate(prompt="a cat", size="33x33")
    assert info.value.body["param"] == "size" and "OM-I303" in info.value.body["message"]


def test_chat_routes_refuse_on_an_image_server_and_models_lists_it(server):
    response = httpx.post(server.url + "/v1/completions", json={"prompt": "hi", "max_tokens": 2})
    assert response.status_code == 400 and "text2image" in response.json()["error"]["message"]
    assert [m.id for m in client(server).models.list().data] == ["tiny-sd"]


def test_an_nlp_server_refuses_image_generation(tmp_path):
    from openmind.pt.testing import tiny_llama

    engine = build_engine(parse(GROUPS, overrides={"model": str(tiny_llama(tmp_path / "llama")), "device": "cpu"}))
    assert "text2image" not in engine.kinds
    with ServerThread(create_app(engine, ServeSettings(served_model_name="llama"))) as s:
        response = httpx.post(s.url + "/v1/images/generations", json={"prompt": "a cat"})
    assert response.status_code == 400 and "is not a text2image model" in response.json()["error"]["message"]


def test_deploy_refuses_adapters_and_unserved_tasks(sd_dir, tmp_path):
    with pytest.raises(OpenMindError) as info:
        build_engine(parse(GROUPS, overrides={"model": sd_dir, "lora_adapters": ["a=/nowhere"]}))
    assert info.value.code == "OM-S003" and info.value.location == "--lora-adapters"
    from openmind.pt.testing import tiny_vit

    vit = tiny_vit(tmp_path / "vit", labels=["a", "b"])
    with pytest.raises(OpenMindError) as info:
        build_engine(parse(GROUPS, overrides={"model": str(vit)}))
    assert info.value.code == "OM-S004" and "'image-classification'" in info.value.message
    assert "text2image (POST /v1/images/generations)" in info.value.message
