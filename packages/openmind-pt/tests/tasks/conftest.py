"""Tiny models (random weights from configs, real or offline-built tokenizers/processors), built once."""

from __future__ import annotations

import pytest


def _build(factory, name, **kwargs):
    @pytest.fixture(scope="session")
    def fixture(tmp_path_factory):
        from openmind.pt import testing

        return getattr(testing, factory)(tmp_path_factory.mktemp(name), **kwargs)

    return fixture


vit_dir = _build("tiny_vit", "vit", labels=["cat", "dog", "bird"])
vit_encoder_dir = _build("tiny_vit", "vit-encoder")
detr_dir = _build("tiny_detr", "detr", labels=["cat", "dog"])
owlvit_dir = _build("tiny_owlvit", "owlvit")
clip_dir = _build("tiny_clip", "clip")
dpt_dir = _build("tiny_dpt", "dpt")
blip_dir = _build("tiny_blip", "blip")
blip_vqa_dir = _build("tiny_blip", "blip-vqa", vqa=True)
ctc_dir = _build("tiny_wav2vec2", "wav2vec2-ctc")
audio_cls_dir = _build("tiny_wav2vec2", "wav2vec2-cls", labels=["yes", "no"])
sd_dir = _build("tiny_stable_diffusion", "sd")
video_dir = _build("tiny_text_to_video", "t2v")
sam_dir = _build("tiny_sam", "sam")
qa_dir = _build("tiny_bert", "qa", head="BertForQuestionAnswering")
nli_dir = _build(
    "tiny_bert", "nli", head="BertForSequenceClassification", labels=["entailment", "neutral", "contradiction"]
)
encoder_dir = _build("tiny_bert", "enc", head="BertModel")
t5_dir = _build("tiny_t5", "t5")
bart_dir = _build("tiny_bart", "bart")
tapas_dir = _build("tiny_tapas", "tapas")
mt5_dir = _build("tiny_mt5", "mt5")
marian_dir = _build("tiny_marian", "marian")
vits_dir = _build("tiny_vits", "vits")


@pytest.fixture(scope="session")
def image():
    import numpy as np
    from PIL import Image

    return Image.fromarray((np.random.RandomState(0).rand(40, 48, 3) * 255).astype("uint8"))


@pytest.fixture(scope="session")
def images():
    import numpy as np
    from PIL import Image

    rng = np.random.RandomState(1)
    return [Image.fromarray((rng.rand(24 + 4 * i, 32, 3) * 255).astype("uint8")) for i in range(4)]


@pytest.fixture(scope="session")
def speech():
    import numpy as np

    return (np.random.RandomState(0).randn(16000) * 0.1).astype("float32")
