"""The out-of-tree test plugin (tests/plugins/openmind-testplugin) extends openmind through the
hooks alone: a task with a PyTorch pipeline that runs, an argument group whose flags appear in
``--help``, and a serving route that answers over HTTP on the real server (docs/EXTENDING.md)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-poem"


def openmind(*args, env=None):
    e = dict(os.environ, HF_HUB_OFFLINE="1", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "openmind.core.cli.main", *args], capture_output=True, text=True, env=e, cwd=ROOT
    )


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from openmind.pt.testing import tiny_llama

    return str(tiny_llama(tmp_path_factory.mktemp("poem") / "tiny", seed=5))


def reference_poem(model_dir: str, topic: str, max_new_tokens: int) -> str:
    """transformers' own greedy generate on the same prompt."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    enc = tok(f"A poem about {topic}:\n", return_tensors="pt")
    with torch.no_grad():
        ids = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False)
    return tok.decode(ids[0, enc["input_ids"].shape[1] :], skip_special_tokens=True)


def test_plugin_task_runs_its_pytorch_pipeline(tiny):
    import openmind

    poem = openmind.pipeline("poem", model=tiny, lines=100)
    assert poem.selection["impl"] == "openmind_testplugin.poem:TorchPoem"
    assert poem.selection["framework"] == "pt" and poem.selection["backend"] == "testplugin"
    out = poem("the sea", max_new_tokens=12)
    assert out == {"topic": "the sea", "poem": reference_poem(tiny, "the sea", 12)}
    assert out["poem"].strip()
    batch = poem(["the sea", "a cat"], max_new_tokens=6, batch_size=2)
    assert [b["poem"] for b in batch] == [reference_poem(tiny, t, 6) for t in ("the sea", "a cat")]
    from openmind.core.errors import OpenMindError

    with pytest.raises(OpenMindError) as info:
        poem("   ")
    assert info.value.code == "OM-I003"
    with pytest.raises(OpenMindError) as info:
        poem("x", lines=0)
    assert info.value.code == "OM-I102" and info.value.location == "lines"


def test_plugin_task_through_the_cli(tiny):
    out = openmind("run", "poem", "--model", tiny, "--input", "the sea", "--json", "--rhyme-scheme", "ABAB")
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout.strip().splitlines()[-1])
    assert row["input"] == "the sea" and row["output"]["topic"] == "the sea" and row["output"]["poem"].strip()


def test_plugin_argument_group_flags_appear_in_help():
    for verb in ("run", "deploy"):
        text = openmind(verb, "--help").stdout
        assert "poem arguments:" in text and "--rhyme-scheme" in text and "--poem-lines" in text, verb
    assert "--rhyme-scheme" not in openmind("train", "--help").stdout  # only the verbs the group names
    bad = openmind("run", "poem", "--model", "x", "--input", "y", "--rhyme-scheme", "XYZ")
    assert bad.returncode == 2 and "OM-A002" in bad.stderr and "AABB, ABAB, free" in bad.stderr
    listed = openmind("list", "argument-groups").stdout
    assert "poem" in listed and "openmind-testplugin" in listed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def deployed(tiny, tmp_path_factory):
    port = free_port()
    log = tmp_path_factory.mktemp("deploy") / "server.log"
    exe = Path(sys.executable).with_name("openmind")
    cmd = [str(exe), "deploy", "--model", tiny, "--port", str(port), "--api-key", KEY, "--device", "cpu"]
    cmd += ["--served-model-name", "tiny"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 420  # a loaded 2-core CI machine needs minutes to import torch
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "server did not start: " + log.read_text()
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_plugin_route_answers_over_http(deployed):
    auth = {"Authorization": f"Bearer {KEY}"}
    r = httpx.post(deployed + "/v1/poems", json={"topic": "the sea", "max_tokens": 8}, headers=auth, timeout=60)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["model"] == "tiny" and body["topic"] == "the sea"
    # the route runs on the frame's engine: the same text as the built-in completions route
    comp = httpx.post(
        deployed + "/v1/completions",
        json={"model": "tiny", "prompt": "A poem about the sea:\n", "max_tokens": 8, "temperature": 0},
        headers=auth,
        timeout=60,
    ).json()
    assert body["poem"] == comp["choices"][0]["text"]
    # the frame's guard and errors apply to plugin routes too
    assert httpx.post(deployed + "/v1/poems", json={"topic": "x"}, timeout=10).status_code == 401
    bad = httpx.post(deployed + "/v1/poems", json={"topic": ""}, headers=auth, timeout=10)
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "topic"
    over = httpx.post(deployed + "/v1/poems", json={"topic": "x", "max_tokens": 10**6}, headers=auth, timeout=10)
    assert over.status_code == 400 and over.json()["error"]["param"] == "max_tokens"
