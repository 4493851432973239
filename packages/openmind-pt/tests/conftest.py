"""Model folders shared by the PyTorch tests (built once per session: real tokenizers, random weights)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from openmind.nlp.testing.assets import MISTRAL_CHAT_TEMPLATE


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

    folder = tiny_llama(tmp_path_factory.mktemp("tiny-mistral"), tokenizer="mistral", seed=1)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = MISTRAL_CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def minilm_dir():
    from openmind.nlp.testing.assets import minilm_path

    return minilm_path()


def _tiny_bert(folder, head: str, labels: list[str] | None = None):
    import torch
    import transformers
    from transformers import AutoTokenizer, BertConfig

    from openmind.nlp.testing.assets import minilm_path

    folder.mkdir(parents=True, exist_ok=True)
    AutoTokenizer.from_pretrained(minilm_path()).save_pretrained(folder)
    extra = {}
    if labels:
        extra = {"id2label": dict(enumerate(labels)), "label2id": {label: i for i, label in enumerate(labels)}}
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, **extra
    )
    torch.manual_seed(0)
    model = getattr(transformers, head)(config)
    # scale up the head so that classes are well separated (random heads are nearly uniform)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.startswith(("classifier", "cls.predictions.decoder")) and param.dim() == 2:
                param.mul_(50)
    model.save_pretrained(folder, safe_serialization=True)
    return folder


@pytest.fixture(scope="session")
def seq_cls_model_dir(tmp_path_factory):
    return _tiny_bert(
        tmp_path_factory.mktemp("seq-cls"), "BertForSequenceClassification", ["negative", "neutral", "positive"]
    )


@pytest.fixture(scope="session")
def token_cls_model_dir(tmp_path_factory):
    return _tiny_bert(
        tmp_path_factory.mktemp("tok-cls"), "BertForTokenClassification", ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    )


@pytest.fixture(scope="session")
def masked_lm_model_dir(tmp_path_factory):
    return _tiny_bert(tmp_path_factory.mktemp("mlm"), "BertForMaskedLM")


@pytest.fixture(scope="session")
def reference_models():
    """Raw transformers models by folder, loaded once (the references of the conformance suite)."""
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


@pytest.fixture(autouse=True)
def _console_handlers():
    """CLI verbs attach a console handler to the "openmind" logger; drop it after each test so that
    it does not outlive the test's captured stderr."""
    import logging

    logger = logging.getLogger("openmind")
    before = list(logger.handlers)
    yield
    for handler in logger.handlers[len(before) :]:
        logger.removeHandler(handler)
