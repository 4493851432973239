"""Fixtures: a tiny Llama (real Llama-2 tokenizer, random weights), a chat dataset, a running
``openmind webui`` process, and headless Chromium (Debian's, driven by Playwright)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
CHROMIUM = os.environ.get("OPENMIND_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def free_port():
    """A function returning a free loopback port."""
    return _free_port


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Screenshots land here (kept after the run): $OPENMIND_TEST_ARTIFACTS or tmp/artifacts/webui."""
    folder = Path(os.environ.get("OPENMIND_TEST_ARTIFACTS") or REPO / "tmp" / "artifacts" / "webui")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    from openmind.pt.testing import tiny_llama

    return tiny_llama(tmp_path_factory.mktemp("models") / "tiny", hidden_size=64, layers=2, heads=4, seed=0)


@pytest.fixture(scope="session")
def chat_data(tmp_path_factory) -> Path:
    """Digit-reversal conversations (the quickstart's task) as JSON Lines."""
    import random

    rng = random.Random(0)
    path = tmp_path_factory.mktemp("data") / "train.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for _ in range(64):
            s = "".join(rng.choice("0123456789") for _ in range(5))
            row = {"messages": [{"role": "user", "content": f"Reverse {s}"}, {"role": "assistant", "content": s[::-1]}]}
            fh.write(json.dumps(row) + "\n")
    return path


@pytest.fixture(scope="module")
def webui(tmp_path_factory):
    """``openmind webui`` on a free loopback port, runs under a fresh output root. Yields
    (url, output root); stops it and every process it started afterwards."""
    from openmind.webui import jobs as J

    root = tmp_path_factory.mktemp("webui") / "runs"
    port = _free_port()
    exe = Path(sys.executable).with_name("openmind")
    # one intra-op thread: tiny models train much faster than on two contending ones
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", GRADIO_ANALYTICS_ENABLED="False")
    env.setdefault("OMP_NUM_THREADS", "1")
    env["OPENMIND_CACHE"] = str(root.parent / "cache")
    log = open(root.parent / "webui.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [str(exe), "webui", "--port", str(port), "--output-root", str(root)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 120
    while True:
        if proc.poll() is not None:
            raise RuntimeError((root.parent / "webui.log").read_text())
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if time.time() > deadline:
            raise RuntimeError("openmind webui did not answer in 120 s")
        time.sleep(0.5)
    try:
        yield url, root
    finally:
        for job in J.jobs(root):
            J.stop(job, timeout=10)
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, webui):
    url, _ = webui
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.goto(url, wait_until="load")
    pg.wait_for_selector("#om-chat--load", timeout=60_000)
    yield pg
    context.close()
