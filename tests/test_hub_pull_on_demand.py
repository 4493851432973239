"""pipeline() and resolve_model take hub ids: the model is pulled on demand from a loopback hub
through the real huggingface_hub client, then used offline from the cache."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HUB_TESTS = Path(__file__).resolve().parent.parent / "packages" / "openmind-core" / "tests" / "hub"

pytest.importorskip("torch")
pytest.importorskip("huggingface_hub")


@pytest.fixture
def hf_hub(monkeypatch, tmp_path):
    sys.path.insert(0, str(HUB_TESTS))
    try:
        from server import HubServer, HubState
    finally:
        sys.path.remove(str(HUB_TESTS))
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # nox runs tests with HF_HUB_OFFLINE=1
    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENMIND_OFFLINE", raising=False)
    state = HubState()
    server = HubServer(state).start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    yield state, server
    server.stop()


def test_pipeline_pulls_a_hub_id_on_demand_then_works_offline(hf_hub, tmp_path, monkeypatch):
    import openmind
    from openmind.pt.testing import tiny_llama

    state, server = hf_hub
    model = Path(tiny_llama(tmp_path / "tiny"))
    state.add_repo("org/tiny-llama", {p.relative_to(model).as_posix(): p for p in model.rglob("*") if p.is_file()})
    messages = [{"role": "user", "content": "Hi"}]
    local = openmind.pipeline("chat", model=str(model), device="cpu")(messages, max_new_tokens=6)
    pulled = openmind.pipeline("chat", model="hf::org/tiny-llama", device="cpu")(messages, max_new_tokens=6)
    assert pulled == local  # same weights and tokenizer, same greedy answer
    requests = len(state.log)
    server.stop()
    monkeypatch.setenv("OPENMIND_OFFLINE", "1")
    again = openmind.pipeline("chat", model="hf::org/tiny-llama", device="cpu")(messages, max_new_tokens=6)
    assert again == local and len(state.log) == requests


@pytest.fixture
def modelers_hub(monkeypatch, tmp_path):
    """A loopback Modelers hub over TLS (openmind-hub insists on https) with a test certificate."""
    pytest.importorskip("openmind_hub")
    trustme = pytest.importorskip("trustme")
    import ssl

    sys.path.insert(0, str(HUB_TESTS))
    try:
        from server import HubServer, HubState
    finally:
        sys.path.remove(str(HUB_TESTS))
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert.configure_cert(context)
    state = HubState()
    server = HubServer(state, tls=context).start()
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca_file))
    monkeypatch.setenv("OPENMIND_HUB_ENDPOINT", server.url)
    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENMIND_OFFLINE", raising=False)
    monkeypatch.delenv("OPENMIND_HUB", raising=False)
    yield state
    server.stop()


def test_sentiment_analysis_without_a_model_pulls_the_registered_default(modelers_hub, tmp_path):
    """pipeline("sentiment-analysis") resolves 1.0's default (Modelers id + revision, registered on
    the task spec) and pulls it through the hub layer; served here from a tiny model under that id."""
    import openmind
    from openmind.core.plugins import get_registry
    from openmind.pt.testing import tiny_bert

    default = get_registry().task("sentiment-analysis").default_model("pt")
    assert default.label() == "om::PyTorch-NPU/distilbert_base_uncased_finetuned_sst_2_english@5a5cb27"
    model = tiny_bert(tmp_path / "tiny", "BertForSequenceClassification", ["NEGATIVE", "POSITIVE"])
    files = {p.relative_to(model).as_posix(): p for p in model.rglob("*") if p.is_file()}
    modelers_hub.add_repo(default.model_id.split("::")[1], files, branch=default.revision)
    pulled = openmind.pipeline("sentiment-analysis", device="cpu")
    local = openmind.pipeline("text-classification", model=str(model), device="cpu")
    text = ["what a great movie", "awful"]
    assert pulled(text) == local(text)
    assert modelers_hub.log  # it really went through the hub
    assert (tmp_path / "cache" / "hub" / "modelers").is_dir()


def test_a_task_without_a_default_model_needs_one():
    import openmind
    from openmind.core.errors import OpenMindError

    with pytest.raises(OpenMindError) as info:
        openmind.pipeline("chat")
    assert info.value.code == "OM-A004" and "default model" in str(info.value)


def test_openmind1_builtin_dataset_names_are_pulled_from_the_modelers_hub(modelers_hub, tmp_path, monkeypatch):
    """A 1.0 train YAML naming 1.0's built-in datasets (alpaca_zh_51k, sharegpt_gpt4) loads them from
    the Modelers repositories 1.0 named, pulled on demand through the hub layer, then offline."""
    import json

    from openmind.core import args as A
    from openmind.core.errors import OpenMindError
    from openmind.data.api import load_dataset

    monkeypatch.chdir(tmp_path)
    alpaca = [
        {"instruction": "把这句话翻译成英文", "input": "你好", "output": "Hello"},
        {"instruction": "1+1等于几？", "input": "", "output": "2"},
    ]
    sharegpt = [{"conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello!"}]}]
    (tmp_path / "alpaca_zh_51k.json").write_text(json.dumps(alpaca, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "sharegpt.jsonl").write_text("".join(json.dumps(r) + "\n" for r in sharegpt), encoding="utf-8")
    modelers_hub.add_repo("AI-Research/alpaca_zh_51k", {"alpaca_zh_51k.json": tmp_path / "alpaca_zh_51k.json"})
    modelers_hub.add_repo("AI-Research/sharegpt_gpt4", {"data/train.jsonl": tmp_path / "sharegpt.jsonl"})
    config = tmp_path / "sft.yaml"
    config.write_text(
        "model_name_or_path: ./never-loaded\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
        "lora_target_modules: q_proj,v_proj\ndataset: alpaca_zh_51k,sharegpt_gpt4\noutput_dir: ./saves\n",
        encoding="utf-8",
    )
    ns = A.parse(["model", "template", "data", "finetuning", "training"], config=config)
    assert ns.dialect == "openmind1"
    rows = load_dataset(ns.data, stage="sft", quiet=True)
    expected = [
        [{"role": "user", "content": "把这句话翻译成英文\n你好"}, {"role": "assistant", "content": "Hello"}],
        [{"role": "user", "content": "1+1等于几？"}, {"role": "assistant", "content": "2"}],
        [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}],
    ]
    messages = [[{k: m[k] for k in ("role", "content")} for m in row] for row in rows["messages"]]
    assert messages == expected
    pulled = {line for line in map(str, modelers_hub.log)}
    assert any("alpaca_zh_51k" in line for line in pulled) and any("sharegpt_gpt4" in line for line in pulled)
    monkeypatch.setenv("OPENMIND_OFFLINE", "1")  # pulled once: the cached copies serve the next run
    requests = len(modelers_hub.log)
    again = load_dataset(ns.data, stage="sft", quiet=True)
    assert [[{k: m[k] for k in ("role", "content")} for m in row] for row in again["messages"]] == expected
    assert len(modelers_hub.log) == requests
    config.write_text(config.read_text(encoding="utf-8").replace("alpaca_zh_51k,sharegpt_gpt4", "alpaca"))
    with pytest.raises(OpenMindError) as info:  # never pulled, offline: at once, no retries
        load_dataset(A.parse(["model", "template", "data", "finetuning", "training"], config=config).data)
    assert info.value.code == "OM-H011" and "AI_Connect/alpaca" in info.value.message
