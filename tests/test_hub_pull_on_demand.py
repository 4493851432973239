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
