"""Fixtures of the MindSpore tests: the same tiny checkpoints as the PyTorch suite (real 32k
tokenizers, random weights, written by transformers), the real MiniLM, and reference callables.

The whole suite needs MindSpore (it runs in its own nox session and venv, with numpy<2).
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("mindspore", reason="the MindSpore tests run in nox -s \"tests(framework='ms')\"")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("GLOG_v", "3")

from openmind.nlp.testing.assets import MISTRAL_CHAT_TEMPLATE


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    """Tiny models on a shared 2-core machine run fastest on one intra-op thread (torch side)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _logs(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENMIND_LOG_DIR", str(tmp_path / "logs"))


@pytest.fixture(scope="session")
def llama2_dir(tmp_path_factory):
    from openmind.pt.testing import tiny_llama

    return tiny_llama(tmp_path_factory.mktemp("tiny-llama2"), tokenizer="llama2")


@pytest.fixture(scope="session")
def mistral_dir(tmp_path_factory):
    from transformers import AutoTokenizer

    from openmind.pt.testing import tiny_llama

    folder = tiny_llama(tmp_path_factory.mktemp("tiny-mistral"), tokenizer="mistral", seed=1, kv_heads=2)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = MISTRAL_CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def minilm_dir():
    from openmind.nlp.testing.assets import minilm_path

    return minilm_path()


@pytest.fixture(scope="session")
def seq_cls_model_dir(tmp_path_factory):
    """A tiny BertForSequenceClassification saved by transformers (classes well separated)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from openmind.nlp.testing.assets import minilm_path

    folder = tmp_path_factory.mktemp("seq-cls")
    AutoTokenizer.from_pretrained(minilm_path()).save_pretrained(folder)
    labels = ["negative", "neutral", "positive"]
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.mul_(50)
    model.save_pretrained(folder, safe_serialization=True)
    return folder


@pytest.fixture(scope="session")
def masked_lm_model_dir(tmp_path_factory):
    """A tiny BertForMaskedLM saved by transformers (decoder tied to the word embeddings)."""
    from openmind.pt.testing import tiny_bert

    return tiny_bert(tmp_path_factory.mktemp("mlm"), head="BertForMaskedLM")


@pytest.fixture(scope="session")
def torch_models():
    """Raw transformers models by folder, loaded once (the PyTorch side of the equality tests)."""
    cache = {}

    def get(folder, auto: str):
        import transformers

        key = (str(folder), auto)
        if key not in cache:
            cache[key] = (
                getattr(transformers, auto).from_pretrained(str(folder)).eval(),
                transformers.AutoTokenizer.from_pretrained(str(folder)),
            )
        return cache[key]

    return get


@pytest.fixture(scope="session")
def native_models():
    """Native MindSpore models by folder and head, loaded once (the backend without openmind's pipeline)."""
    cache = {}

    def get(folder, head: str):
        from openmind.ms import runtime

        runtime.set_device("cpu")
        from openmind.ms.models import auto

        key = (str(folder), head)
        if key not in cache:
            cache[key] = auto.load(str(folder), head)[0]
        return cache[key]

    return get
