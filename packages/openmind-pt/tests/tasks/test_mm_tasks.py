"""openmind-mm's tasks on PyTorch: outputs equal transformers' / diffusers' own pipelines on the
same inputs (tiny random models), media inputs in every accepted form, coded errors for bad ones."""

from __future__ import annotations

import base64

import pytest
import torch

from openmind import pipeline
from openmind.core.errors import OpenMindError


def hf(task, folder):
    from transformers import pipeline as hf_pipeline

    return hf_pipeline(task, model=str(folder))


# ---- image inputs -------------------------------------------------------------------------------


def test_image_classification_equals_transformers_for_every_input_form(vit_dir, image, tmp_path):
    import numpy as np

    ours = pipeline("image-classification", model=str(vit_dir))
    expected = hf("image-classification", vit_dir)(image, top_k=2)
    assert ours(image, top_k=2) == expected
    path = tmp_path / "cat.png"
    image.save(path)
    data_url = "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()
    forms = [str(path), f"file://{path}", data_url, np.asarray(image)]
    assert ours(forms, top_k=2) == [expected] * len(forms)


def test_image_classification_batches_equal_one_by_one(vit_dir, images):
    ours = pipeline("image-classification", model=str(vit_dir))
    one_by_one = [ours(im) for im in images]
    batched = ours(images, batch_size=4)
    for a, b in zip(one_by_one, batched, strict=True):
        assert [x["label"] for x in a] == [x["label"] for x in b]
        assert [x["score"] for x in a] == pytest.approx([x["score"] for x in b], abs=1e-5)


def test_bad_images_are_coded_errors_naming_the_input(vit_dir, image, tmp_path):
    import numpy as np

    ours = pipeline("image-classification", model=str(vit_dir))
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not an image")
    for bad, where in [
        ([image, str(broken)], "input[1]"),
        ([image, str(tmp_path / "missing.png")], "input[1]"),
        (np.zeros((2, 3, 4, 5)), "input"),
        ("data:image/png,abc", "input"),
        ("https://example.com/cat.png", "input"),
    ]:
        with pytest.raises(OpenMindError) as info:
            ours(bad)
        assert info.value.code == "OM-I301" and info.value.location == where, bad


def test_object_detection_equals_transformers(detr_dir, image):
    ours = pipeline("object-detection", model=str(detr_dir))
    got = ours(image, threshold=0.0)
    assert got == hf("object-detection", detr_dir)(image, threshold=0.0)
    assert got and set(got[0]) == {"score", "label", "box"} and set(got[0]["box"]) == {"xmin", "ymin", "xmax", "ymax"}


def test_zero_shot_image_tasks_equal_transformers(owlvit_dir, clip_dir, image):
    labels = ["a cat", "a dog"]
    detect = pipeline("zero-shot-object-detection", model=str(owlvit_dir))
    assert detect(image, candidate_labels=labels) == hf("zero-shot-object-detection", owlvit_dir)(
        image, candidate_labels=labels
    )
    classify = pipeline("zero-shot-image-classification", model=str(clip_dir))
    assert classify(image, candidate_labels=labels) == hf("zero-shot-image-classification", clip_dir)(
        image, candidate_labels=labels
    )
    with pytest.raises(OpenMindError) as info:
        classify(image)
    assert info.value.code == "OM-I102" and info.value.location == "candidate_labels"


def test_depth_and_image_features_equal_transformers(dpt_dir, vit_encoder_dir, image):
    ours = pipeline("depth-estimation", model=str(dpt_dir))(image)
    ref = hf("depth-estimation", dpt_dir)(image)
    assert torch.equal(torch.tensor(ours["predicted_depth"]), ref["predicted_depth"])
    assert ours["depth"].tobytes() == ref["depth"].tobytes()
    features = pipeline("image-feature-extraction", model=str(vit_encoder_dir))(image)
    assert features == hf("image-feature-extraction", vit_encoder_dir)(image)


def _generate_reference(folder, image, auto, text=None, **kwargs):
    import transformers

    processor = transformers.AutoProcessor.from_pretrained(folder)
    model = getattr(transformers, auto).from_pretrained(folder).eval()
    inputs = processor(images=[image], text=[text] if text else None, return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**inputs, **kwargs)
    return processor.batch_decode(out, skip_special_tokens=True)[0].strip()


def test_captioning_and_vqa_equal_generate(blip_dir, blip_vqa_dir, image):
    caption = pipeline("image-to-text", model=str(blip_dir))(image, max_new_tokens=6)
    assert caption == [
        {"generated_text": _generate_reference(blip_dir, image, "AutoModelForImageTextToText", max_new_tokens=6)}
    ]
    vqa = pipeline("visual-question-answering", model=str(blip_vqa_dir))
    answer = vqa(image=image, question="what is it?", max_new_tokens=5)
    expected = _generate_reference(
        blip_vqa_dir, image, "AutoModelForVisualQuestionAnswering", text="what is it?", max_new_tokens=5
    )
    assert answer == [{"answer": expected}]
    with pytest.raises(OpenMindError) as info:
        vqa({"question": "what?"})
    assert info.value.code == "OM-I003"


def test_mask_generation_needs_torchvision_or_runs(sam_dir, image):
    import importlib.util

    if importlib.util.find_spec("torchvision") is None:
        with pytest.raises(OpenMindError) as info:
            pipeline("mask-generation", model=str(sam_dir))
        assert "torchvision" in str(info.value)
    else:  # pragma: no cover - torchvision does not import beside torch 2.13 here
        out = pipeline("mask-generation", model=str(sam_dir))(image, points_per_batch=16)
        assert set(out) >= {"masks", "scores"}


# ---- audio ----------------------------------------------------------------------------------------


def test_speech_recognition_equals_transformers_from_arrays_and_wav_files(ctc_dir, speech, tmp_path):
    from openmind.mm.media import write_wav

    asr = pipeline("automatic-speech-recognition", model=str(ctc_dir))
    expected = hf("automatic-speech-recognition", ctc_dir)({"raw": speech, "sampling_rate": 16000})
    assert asr(speech, sampling_rate=16000) == expected
    wav = write_wav(tmp_path / "speech.wav", speech, 16000)
    from openmind.mm.media import load_audio

    decoded = load_audio(str(wav))["array"]
    assert asr(str(wav)) == hf("automatic-speech-recognition", ctc_dir)({"raw": decoded, "sampling_rate": 16000})
    with pytest.raises(OpenMindError) as info:
        asr(speech)  # no sampling rate
    assert info.value.code == "OM-I302"


def test_audio_classification_equals_transformers(audio_cls_dir, speech):
    ours = pipeline("audio-classification", model=str(audio_cls_dir))
    assert ours(speech, sampling_rate=16000) == hf("audio-classification", audio_cls_dir)(
        {"raw": speech, "sampling_rate": 16000}
    )


def test_text_to_speech_equals_transformers_for_a_seed(vits_dir):
    """A tiny VITS (MMS-TTS's architecture) samples noise: with the same seed the openmind pipeline's
    audio equals transformers' text-to-audio pipeline's, sample for sample, batched or not."""
    import numpy as np
    import transformers

    speak = pipeline("text-to-speech", model=str(vits_dir))
    ref = transformers.pipeline("text-to-audio", model=str(vits_dir))
    out = speak("hello world", seed=3)
    torch.manual_seed(3)
    expected = ref("hello world")
    assert set(out) == {"audio", "sampling_rate"} and out["sampling_rate"] == expected["sampling_rate"] == 16000
    assert np.asarray(out["audio"]).shape == expected["audio"].shape and len(expected["audio"]) > 100
    assert np.array_equal(np.asarray(out["audio"], dtype=np.float32), expected["audio"])
    texts = ["hello world", "good night, moon!"]
    batch = speak(texts, seed=3, batch_size=2)
    assert [b["audio"] for b in batch] == [speak(t, seed=3)["audio"] for t in texts]
    assert speak("hello world", seed=4)["audio"] != out["audio"]  # the seed is what makes it repeatable
    with pytest.raises(OpenMindError) as info:
        speak("hello", seed=-1)
    assert info.value.location == "seed"


def test_run_text_to_speech_writes_the_wav(vits_dir, tmp_path, capsys):
    import json
    import wave

    import numpy as np

    from openmind.core.api import infer_task
    from openmind.core.cli.main import main

    assert infer_task(str(vits_dir)) == "text-to-speech"  # a VITS folder has no processor file
    code = main(
        ["run", "tts", "--model", str(vits_dir), "--input", "hello world", "--output-dir", str(tmp_path), "--json"]
        + ["--set", "seed=5"]
    )
    assert code == 0
    path = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["output"]["audio"]
    with wave.open(path) as wav:
        assert wav.getframerate() == 16000
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")
    audio = np.asarray(pipeline("text-to-speech", model=str(vits_dir))("hello world", seed=5)["audio"])
    assert np.array_equal(pcm, (np.clip(audio.astype(np.float32), -1, 1) * 32767).astype("<i2"))  # 16-bit PCM


# ---- diffusion ----------------------------------------------------------------------------------


def _diffusers(auto, folder):
    import diffusers

    pipe = getattr(diffusers, auto).from_pretrained(str(folder))
    pipe.set_progress_bar_config(disable=True)
    return pipe


def _gen(seed):
    return torch.Generator(device="cpu").manual_seed(seed)


def test_text_to_image_equals_diffusers_same_bytes_for_a_seed(sd_dir):
    import numpy as np

    draw = pipeline("text-to-image", model=str(sd_dir), num_inference_steps=2)
    ref = _diffusers("StableDiffusionPipeline", sd_dir)
    image = draw("a cat", seed=7, size="32x40", negative_prompt="blurry", guidance_scale=5.0)
    expected = ref(
        "a cat",
        generator=_gen(7),
        height=40,
        width=32,
        num_inference_steps=2,
        negative_prompt="blurry",
        guidance_scale=5.0,
    ).images[0]
    assert image.size == (32, 40) and image.tobytes() == expected.tobytes()
    # batches and several images per prompt: diffusers' own batched call with one generator per
    # image (seed + j for image j of a prompt), byte for byte
    batch = draw(["a cat", "a dog"], seed=7, height=32, width=32, batch_size=2)
    expected = ref(["a cat", "a dog"], generator=[_gen(7), _gen(7)], height=32, width=32, num_inference_steps=2)
    assert [b.tobytes() for b in batch] == [e.tobytes() for e in expected.images]
    two = draw("a cat", seed=3, num_images_per_prompt=2, height=32, width=32)
    expected = ref(
        "a cat", generator=[_gen(3), _gen(4)], num_images_per_prompt=2, height=32, width=32, num_inference_steps=2
    )
    assert len(two) == 2 and [t.tobytes() for t in two] == [e.tobytes() for e in expected.images]
    # each image has its own noise, so it is the picture of its run alone: the same up to how batched
    # kernels round (a CPU may sum a batch of 2 in another order than a batch of 1: a level, rarely)
    single = [draw(p, seed=7, height=32, width=32) for p in ("a cat", "a dog")] + [
        draw("a cat", seed=4, height=32, width=32)
    ]
    for got, alone in zip([*batch, two[1]], single):
        diff = np.abs(np.asarray(got, dtype=int) - np.asarray(alone, dtype=int))
        assert diff.max() <= 2 and (diff > 0).mean() < 0.01, (diff.max(), (diff > 0).mean())


def test_text_to_image_scheduler_choice_equals_diffusers(sd_dir):
    from diffusers import EulerDiscreteScheduler

    draw = pipeline("text2image", model=str(sd_dir))
    ref = _diffusers("StableDiffusionPipeline", sd_dir)
    ref.scheduler = EulerDiscreteScheduler.from_config(ref.scheduler.config)
    expected = ref("a cat", generator=_gen(0), height=32, width=32, num_inference_steps=2).images[0]
    got = draw("a cat", seed=0, height=32, width=32, num_inference_steps=2, scheduler="euler")
    assert got.tobytes() == expected.tobytes()
    default = draw("a cat", seed=0, height=32, width=32, num_inference_steps=2)
    assert default.tobytes() != got.tobytes()  # the pipeline's own scheduler is back
    for bad in ({"scheduler": "nope"}, {"height": 30}, {"num_inference_steps": 0}, {"size": "big"}):
        with pytest.raises(OpenMindError) as info:
            draw("a cat", **bad)
        assert info.value.code == "OM-I303" and info.value.location == next(iter(bad))


def test_image_to_image_and_inpainting_equal_diffusers(sd_dir, image):
    from PIL import Image

    picture = image.resize((32, 32))
    edit = pipeline("image-to-image", model=str(sd_dir), num_inference_steps=4)
    ref = _diffusers("AutoPipelineForImage2Image", sd_dir)
    expected = ref(prompt="a cat", image=picture, strength=0.5, generator=_gen(1), num_inference_steps=4).images[0]
    got = edit({"image": picture, "prompt": "a cat"}, strength=0.5, seed=1)
    assert got.tobytes() == expected.tobytes()
    mask = Image.new("L", (32, 32), 0)
    mask.paste(255, (8, 8, 24, 24))
    paint = pipeline("inpainting", model=str(sd_dir), num_inference_steps=2)
    ref = _diffusers("AutoPipelineForInpainting", sd_dir)
    expected = ref(
        prompt="a sofa", image=picture, mask_image=mask, generator=_gen(2), num_inference_steps=2, height=32, width=32
    ).images[0]
    got = paint(image=picture, mask_image=mask, prompt="a sofa", seed=2, height=32, width=32)
    assert got.tobytes() == expected.tobytes()
    with pytest.raises(OpenMindError) as info:
        paint({"image": picture, "prompt": "a sofa"})
    assert info.value.code == "OM-I003" and "mask_image" in info.value.location


def test_text_to_video_equals_diffusers(video_dir):
    film = pipeline("text-to-video", model=str(video_dir))
    frames = film("a panda", num_frames=2, num_inference_steps=2, height=32, width=32, seed=0)
    ref = _diffusers("DiffusionPipeline", video_dir)
    expected = ref(
        "a panda", num_frames=2, num_inference_steps=2, height=32, width=32, generator=[_gen(0)], output_type="pil"
    ).frames[0]
    assert [f.tobytes() for f in frames] == [e.tobytes() for e in expected]


def test_tasks_inferred_from_model_folders(sd_dir, video_dir, vit_dir, detr_dir, ctc_dir, blip_dir, vit_encoder_dir):
    from openmind.core.api import infer_task

    assert infer_task(str(sd_dir)) == "text2image"
    assert infer_task(str(video_dir)) == "text-to-video"
    assert infer_task(str(vit_dir)) == "image-classification"
    assert infer_task(str(vit_encoder_dir)) == "image-feature-extraction"
    assert infer_task(str(detr_dir)) == "object-detection"
    assert infer_task(str(ctc_dir)) == "automatic-speech-recognition"
    assert infer_task(str(blip_dir)) == "image-to-text"


def test_a_text_model_is_not_a_diffusers_folder(vit_dir):
    with pytest.raises(OpenMindError) as info:
        pipeline("text-to-image", model=str(vit_dir))
    assert info.value.code == "OM-M301"
