"""External backends: a coded error when not installed, their launch commands, the health wait on
a real subprocess, and the proxy forwarding (streaming too) to a fake upstream that is our own
native server on loopback."""

from __future__ import annotations

import importlib.util
import socket
import sys

import httpx
import openai
import pytest
from scripted_engine import ScriptedEngine

from openmind.core.errors import OpenMindError
from openmind.nlp.serve.app import ServeSettings, create_app
from openmind.nlp.serve.proxy import Upstream, check_installed, create_proxy_app, launch_command, mindie_config
from openmind.nlp.serve.schemas import Limits
from openmind.nlp.serve.server import ServerThread


@pytest.mark.parametrize("backend", ["vllm", "lmdeploy", "mindie"])
def test_missing_backend_is_a_coded_error(backend, tmp_path):
    if backend != "mindie" and importlib.util.find_spec(backend) is not None:
        pytest.skip(f"{backend} is installed here")
    with pytest.raises(OpenMindError) as info:
        check_installed(backend)
    assert info.value.code == "OM-S001" and backend in info.value.message
    assert "--backend native" in info.value.hint
    from openmind.core.cli.main import main

    (tmp_path / "m").mkdir()
    assert main(["deploy", "--model", str(tmp_path / "m"), "--backend", backend]) == 1


def test_launch_commands():
    cmd = launch_command(
        "vllm", model="/m", served_name="tiny", port=9001, adapters={"a": "/ad"}, dtype="bfloat16", python="py"
    )
    assert cmd == [
        "py", "-m", "vllm.entrypoints.openai.api_server", "--model", "/m", "--served-model-name", "tiny",
        "--host", "127.0.0.1", "--port", "9001", "--dtype", "bfloat16", "--enable-lora", "--lora-modules", "a=/ad",
    ]  # fmt: skip
    cmd = launch_command("lmdeploy", model="/m", served_name="tiny", port=9002, adapters={"a": "/ad"})
    assert cmd[:4] == ["lmdeploy", "serve", "api_server", "/m"]
    assert cmd[cmd.index("--server-name") + 1] == "127.0.0.1" and cmd[cmd.index("--server-port") + 1] == "9002"
    assert cmd[-2:] == ["--adapters", "a=/ad"]
    config = mindie_config(
        {
            "ServerConfig": {"port": 1025, "ipAddress": "0.0.0.0"},
            "BackendConfig": {"ModelDeployConfig": {"ModelConfig": [{"modelName": "x", "worldSize": 1}]}},
        },
        model="/m",
        served_name="tiny",
        port=9003,
    )
    assert config["ServerConfig"]["ipAddress"] == "127.0.0.1" and config["ServerConfig"]["port"] == 9003
    assert config["BackendConfig"]["ModelDeployConfig"]["ModelConfig"][0] == {
        "modelName": "tiny",
        "worldSize": 1,
        "modelWeightPath": "/m",
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_upstream_waits_for_health_and_reports_early_exit(tmp_path):
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "models").write_text('{"data": []}')
    port = free_port()
    cmd = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)]
    with Upstream(cmd, port) as up:
        assert httpx.get(up.url + "/v1/models").json() == {"data": []}
    assert up.process.poll() is not None  # stopped
    with pytest.raises(OpenMindError) as info:
        Upstream([sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"], free_port()).start(timeout=30)
    assert info.value.code == "OM-S002" and "exited with code 3" in info.value.message
    log = info.value.message.rsplit("log: ", 1)[1]
    assert open(log).read().strip() == "boom"


def test_proxy_forwards_to_a_native_upstream():
    upstream_app = create_app(ScriptedEngine(), ServeSettings(served_model_name="scripted"))
    settings = ServeSettings(served_model_name="scripted", api_key="outer", limits=Limits(max_n=2))
    with ServerThread(upstream_app) as upstream, ServerThread(create_proxy_app(upstream.url, settings)) as proxy:
        c = openai.OpenAI(base_url=proxy.url + "/v1", api_key="outer", max_retries=0)
        r = c.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "proxied"}])
        assert r.choices[0].message.content == "deixorp"
        chunks = list(
            c.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "abc"}], stream=True)
        )
        assert "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices) == "cba"
        assert [m.id for m in c.models.list().data] == ["scripted", "shout"]
        # the proxy's own guard: key, limits, malformed JSON; upstream errors pass through
        assert httpx.get(proxy.url + "/v1/models").status_code == 401
        assert httpx.get(proxy.url + "/health").json()["status"] == "ok"
        with pytest.raises(openai.BadRequestError):
            c.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "x"}], n=3)
        bad = httpx.post(
            proxy.url + "/v1/chat/completions", content=b"{oops", headers={"Authorization": "Bearer outer"}
        )
        assert bad.status_code == 400 and "malformed JSON" in bad.json()["error"]["message"]
        with pytest.raises(openai.NotFoundError):
            c.chat.completions.create(model="nope", messages=[{"role": "user", "content": "x"}])
    with ServerThread(create_proxy_app(f"http://127.0.0.1:{free_port()}", settings)) as orphan:
        r = httpx.post(
            orphan.url + "/v1/chat/completions", json={"messages": []}, headers={"Authorization": "Bearer outer"}
        )
        assert r.status_code == 502 and r.json()["error"]["type"] == "server_error"
        assert httpx.get(orphan.url + "/health").status_code == 503


def test_run_folders_resolve_to_base_model_and_adapter(tmp_path):
    import argparse

    from openmind.core.args import parse
    from openmind.nlp.serve.cli import DeployCommand, resolve_run_folder

    run = tmp_path / "sft-run"
    run.mkdir()
    (run / "openmind_args.yaml").write_text(f"model:\n  model: {tmp_path / 'base'}\ntraining:\n  output_dir: {run}\n")
    (run / "adapter_config.json").write_text("{}")
    for given in (argparse.Namespace(config=str(run)), argparse.Namespace(config=None, model=str(run))):
        ns = DeployCommand().resolve(given)
        resolve_run_folder(ns, given)
        assert (ns.model.model, ns.model.adapter, ns.deploy.served_model_name) == (
            str(tmp_path / "base"),
            str(run),
            "sft-run",
        )
    plain = parse(["model", "deploy"], overrides={"model": str(tmp_path)})
    resolve_run_folder(plain)
    assert (plain.model.model, plain.model.adapter) == (str(tmp_path), None)
