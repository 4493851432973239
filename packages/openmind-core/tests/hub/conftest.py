"""Fixtures: a loopback test hub (plain HTTP for Hugging Face / ModelScope, TLS for Modelers),
a fresh cache per test, and the real clients pointed at the server."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
# the modelscope client retries failed API calls on its own (read at import): keep tests fast
os.environ.setdefault("MODELSCOPE_API_MAX_RETRIES", "1")
os.environ.setdefault("MODELSCOPE_REPO_TREE_PAGE_MAX_ATTEMPTS", "1")

from server import HubServer, HubState  # noqa: E402

TOKEN = "secret-token"


def content(name: str, size: int) -> bytes:
    """Deterministic pseudo-random bytes (so hashes are stable and mismatches are real)."""
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{name}:{counter}".encode()).digest()
        counter += 1
    return bytes(out[:size])


def sample_files() -> dict[str, bytes]:
    return {
        "config.json": b'{"model_type": "llama", "hidden_size": 64}\n',
        "tokenizer.json": content("tok", 5_000),
        "model.safetensors": content("weights", 300_000),
        "sub/extra.bin": content("extra", 40_000),
        "README.md": b"# tiny\n",
    }


@pytest.fixture(autouse=True)
def _hub_env(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENMIND_OFFLINE", raising=False)
    monkeypatch.delenv("OPENMIND_HUB", raising=False)
    monkeypatch.setenv("OPENMIND_HUB_BACKOFF", "0.01")
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    try:  # nox runs tests with HF_HUB_OFFLINE=1; the client read it at import
        from huggingface_hub import constants

        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    except ImportError:
        pass


@pytest.fixture
def state() -> HubState:
    state = HubState()
    state.token = TOKEN
    return state


@pytest.fixture
def hub(state):
    """A plain-HTTP loopback hub (Hugging Face and ModelScope dialects)."""
    server = HubServer(state).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tls_ca(tmp_path_factory):
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    folder = tmp_path_factory.mktemp("tls")
    ca_file = folder / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    return ca, cert, ca_file


@pytest.fixture
def tls_hub(state, tls_ca, monkeypatch):
    """An https loopback hub with a test certificate (openmind-hub insists on https)."""
    import ssl

    ca, cert, ca_file = tls_ca
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert.configure_cert(context)
    server = HubServer(state, tls=context).start()
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca_file))
    monkeypatch.setenv("OPENMIND_HUB_ENDPOINT", server.url)
    yield server
    server.stop()


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (following the cache's symlinks) -> content."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".openmind" not in p.relative_to(folder).parts
    }


def all_files(root: Path) -> set[str]:
    return {os.path.relpath(p, root) for p in root.rglob("*")}
