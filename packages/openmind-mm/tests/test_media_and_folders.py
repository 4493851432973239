"""Framework-neutral parts of openmind-mm: media inputs, model folders by kind, task inference,
diffusion parameter checks."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from PIL import Image

from openmind.core.errors import OpenMindError
from openmind.mm.folders import folder_kind, infer_media_task, resolve_media_model
from openmind.mm.media import image_to_data_url, load_audio, load_image, write_wav
from openmind.mm.pipelines.diffusion import DiffusionParams, parse_size


@pytest.fixture
def picture(tmp_path):
    image = Image.fromarray((np.arange(12 * 10 * 3) % 255).astype("uint8").reshape(12, 10, 3))
    path = tmp_path / "p.png"
    image.save(path)
    return image, path


def test_every_image_form_gives_the_same_pixels(picture):
    image, path = picture
    forms = [image, str(path), f"file://{path}", image_to_data_url(image), np.asarray(image), np.asarray(image) / 255.0]
    for form in forms:
        assert load_image(form).tobytes() == image.tobytes(), type(form)
    chw = np.asarray(image).transpose(2, 0, 1)
    assert load_image(chw).tobytes() == image.tobytes()
    assert load_image(np.asarray(image)[..., 0]).mode == "RGB"  # greyscale converted


@pytest.mark.parametrize(
    "bad",
    [
        "missing.png",
        "data:image/png;base64," + base64.b64encode(b"nope").decode(),
        "http://example.com/x.png",
        np.zeros((2, 3, 5)),
        np.full((4, 4), 2.0),
        42,
    ],
)
def test_bad_images_name_the_input(bad):
    with pytest.raises(OpenMindError) as info:
        load_image(bad, "input[3]")
    assert info.value.code == "OM-I301" and info.value.location == "input[3]"


def test_wav_round_trip_and_audio_errors(tmp_path):
    samples = np.sin(np.linspace(0, 100, 8000)).astype("float32") * 0.5
    path = write_wav(tmp_path / "a.wav", samples, 8000)
    audio = load_audio(str(path))
    assert audio["sampling_rate"] == 8000 and np.allclose(audio["array"], samples, atol=1e-4)
    assert load_audio(samples, sampling_rate=8000)["array"].dtype == np.float32
    for bad, kwargs in [(samples, {}), (str(tmp_path / "none.wav"), {}), ({"array": samples}, {})]:
        with pytest.raises(OpenMindError) as info:
            load_audio(bad, "input", **kwargs)
        assert info.value.code == "OM-I302"
    (tmp_path / "b.wav").write_bytes(b"RIFF....")
    with pytest.raises(OpenMindError) as info:
        load_audio(str(tmp_path / "b.wav"))
    assert info.value.code == "OM-I302"


def _write(folder, files):
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content if isinstance(content, str) else json.dumps(content))
    return folder


def test_folders_by_kind_and_inferred_tasks(tmp_path):
    sd = _write(
        tmp_path / "sd", {"model_index.json": {"_class_name": "StableDiffusionXLPipeline"}, "unet/w.safetensors": ""}
    )
    inpaint = _write(
        tmp_path / "inp",
        {"model_index.json": {"_class_name": "StableDiffusionInpaintPipeline"}, "unet/w.safetensors": ""},
    )
    vit = _write(
        tmp_path / "vit",
        {
            "config.json": {"architectures": ["ViTForImageClassification"]},
            "preprocessor_config.json": {},
            "m.safetensors": "",
        },
    )
    ast = _write(
        tmp_path / "ast",
        {
            "config.json": {"architectures": ["Wav2Vec2ForSequenceClassification"]},
            "preprocessor_config.json": {"feature_size": 1, "sampling_rate": 16000},
            "m.safetensors": "",
        },
    )
    bert = _write(tmp_path / "bert", {"config.json": {"architectures": ["BertModel"]}, "m.safetensors": ""})
    assert [folder_kind(f) for f in (sd, vit, bert)] == ["diffusers", "processor", "transformers"]
    assert infer_media_task(sd) == "text2image" and infer_media_task(inpaint) == "inpainting"
    assert infer_media_task(vit) == "image-classification" and infer_media_task(ast) == "audio-classification"
    assert infer_media_task(bert) is None  # a text encoder is openmind-nlp's
    assert resolve_media_model(str(sd), kinds=("diffusers",)).config["_class_name"] == "StableDiffusionXLPipeline"
    with pytest.raises(OpenMindError) as info:
        resolve_media_model(str(vit), kinds=("diffusers",))
    assert info.value.code == "OM-M301"
    pickled = _write(tmp_path / "pk", {"model_index.json": {"_class_name": "X"}, "unet/w.bin": ""})
    with pytest.raises(OpenMindError) as info:
        resolve_media_model(str(pickled))
    assert info.value.code == "OM-M102"


def test_diffusion_parameter_checks():
    assert parse_size("512x768") == (512, 768)
    for bad in ({"height": 30}, {"num_inference_steps": 0}, {"guidance_scale": -1}, {"strength": 1.5}):
        with pytest.raises(OpenMindError) as info:
            DiffusionParams(**bad).check()
        assert info.value.code == "OM-I303" and info.value.location == next(iter(bad))
    with pytest.raises(OpenMindError):
        parse_size("huge")
