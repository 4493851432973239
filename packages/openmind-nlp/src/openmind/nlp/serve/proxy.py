"""External serving backends (vLLM, LMDeploy, MindIE): launched on a private loopback port and
proxied, so the public side keeps openmind's API key check, limits, loopback default and error
bodies whatever the backend.

:func:`launch_command` builds the backend's own command line; :class:`Upstream` starts it, waits
for its health check and stops it; :func:`create_proxy_app` forwards requests (streaming too).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from openmind.nlp.serve.errors import S_BACKEND_MISSING, S_BACKEND_START


@dataclass(frozen=True)
class BackendInfo:
    name: str
    #: Python module or executable whose presence means "installed"
    module: str | None
    executable: str | None
    install: str
    hardware: str


BACKENDS = {
    "vllm": BackendInfo("vllm", "vllm", None, 'pip install "vllm"', "a CUDA GPU"),
    "lmdeploy": BackendInfo("lmdeploy", "lmdeploy", None, 'pip install "lmdeploy"', "a CUDA GPU"),
    "mindie": BackendInfo(
        "mindie",
        None,
        "mindieservice_daemon",
        "install the MindIE Service from Huawei's Ascend software centre and source its set_env.sh",
        "an Ascend NPU",
    ),
}


def check_installed(name: str) -> BackendInfo:
    """The backend's info, or OM-S001 naming how to install it."""
    info = BACKENDS[name]
    present = (info.module and importlib.util.find_spec(info.module) is not None) or (
        info.executable and shutil.which(info.executable)
    )
    if not present:
        what = f"the Python package {info.module!r}" if info.module else f"the executable {info.executable!r}"
        raise S_BACKEND_MISSING.error(
            f"--backend {name} needs {what}, which is not installed (it runs on {info.hardware})",
            hint=f"{info.install}; or serve with --backend native (CPU, GPU and NPU through the openmind pipelines).",
            location="--backend",
        )
    return info


def launch_command(
    backend: str,
    *,
    model: str,
    served_name: str,
    port: int,
    adapters: dict[str, str] | None = None,
    dtype: str = "auto",
    trust_remote_code: bool = False,
    max_model_len: int | None = None,
    python: str | None = None,
    config_path: str | None = None,
) -> list[str]:
    """The backend's own server command, bound to 127.0.0.1:``port`` (the proxy is the public side)."""
    adapters = adapters or {}
    python = python or sys.executable
    if backend == "vllm":
        cmd = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--served-model-name", served_name]
        cmd += ["--host", "127.0.0.1", "--port", str(port), "--dtype", dtype]
        if max_model_len:
            cmd += ["--max-model-len", str(max_model_len)]
        if trust_remote_code:
            cmd.append("--trust-remote-code")
        if adapters:
            cmd += ["--enable-lora", "--lora-modules", *(f"{n}={p}" for n, p in adapters.items())]
        return cmd
    if backend == "lmdeploy":
        cmd = ["lmdeploy", "serve", "api_server", model, "--server-name", "127.0.0.1", "--server-port", str(port)]
        cmd += ["--model-name", served_name]
        if dtype in ("float16", "bfloat16"):
            cmd += ["--dtype", dtype]
        if adapters:
            cmd += ["--adapters", *(f"{n}={p}" for n, p in adapters.items())]
        return cmd
    if backend == "mindie":
        if config_path is None:
            raise ValueError("mindie needs a config_path (see mindie_config)")
        return ["mindieservice_daemon"]
    raise ValueError(f"unknown backend {backend!r}")


def mindie_config(template: dict[str, Any], *, model: str, served_name: str, port: int) -> dict[str, Any]:
    """MindIE Service's config.json with the model, name and loopback address filled in."""
    config = json.loads(json.dumps(template))
    server = config.setdefault("ServerConfig", {})
    server.update({"ipAddress": "127.0.0.1", "port": port, "httpsEnabled": False})
    deploy = config.setdefault("BackendConfig", {}).setdefault("ModelDeployConfig", {})
    models = deploy.setdefault("ModelConfig", [{}])
    models[0].update({"modelName": served_name, "modelWeightPath": model})
    return config


class Upstream:
    """A backend server process on a private loopback port."""

    def __init__(
        self, command: list[str], port: int, *, env: dict[str, str] | None = None, health_path: str = "/v1/models"
    ):
        self.command = command
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.env = env
        self.health_path = health_path
        self.process: subprocess.Popen | None = None
        self.log_path = os.path.join(tempfile.gettempdir(), f"openmind-backend-{port}.log")

    def start(self, timeout: float = 600.0, poll: float = 0.5) -> Upstream:
        import httpx

        log = open(self.log_path, "wb")  # noqa: SIM115 - kept open for the process' lifetime
        try:
            self.process = subprocess.Popen(
                self.command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(self.env or {})}
            )
        except OSError as exc:
            log.close()
            raise S_BACKEND_START.error(f"cannot run {self.command[0]!r}: {exc}") from None
        deadline = time.monotonic() + timeout
        while True:
            code = self.process.poll()
            if code is not None:
                raise S_BACKEND_START.error(
                    f"{' '.join(self.command[:4])} ... exited with code {code} before it was ready; log: {self.log_path}"
                )
            try:
                if httpx.get(self.url + self.health_path, timeout=2.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise S_BACKEND_START.error(
                    f"the backend did not answer {self.health_path} within {timeout:g} s; log: {self.log_path}"
                )
            time.sleep(poll)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> Upstream:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def create_proxy_app(upstream_url: str, settings: Any):
    """A FastAPI app forwarding ``/v1/*`` to ``upstream_url`` with openmind's auth and limits."""
    from contextlib import asynccontextmanager

    import httpx

    from openmind.nlp.serve.context import ApiError, check_limits, create_guard
    from openmind.nlp.serve.schemas import error_body

    client = httpx.AsyncClient(base_url=upstream_url, timeout=httpx.Timeout(settings.request_timeout or None))

    @asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            await client.aclose()

    app = FastAPI(title="openmind proxy", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    create_guard(app, settings)

    @app.get("/health")
    async def health():
        try:
            r = await client.get("/v1/models", timeout=5.0)
            ok = r.status_code == 200
        except httpx.HTTPError:
            ok = False
        return JSONResponse(
            {"status": "ok" if ok else "unavailable", "model": settings.served_model_name},
            status_code=200 if ok else 503,
        )

    @app.api_route("/v1/{path:path}", methods=["GET", "POST"])
    async def forward(path: str, request: Request):
        body = await request.body()
        if request.method == "POST":
            try:
                data = json.loads(body)
            except ValueError as exc:
                raise ApiError(400, f"malformed JSON body: {exc}", code="invalid_json") from None
            if not isinstance(data, dict):
                raise ApiError(400, "the body must be a JSON object", code="invalid_json")
            n = data.get("n", 1)
            max_tokens = data.get("max_completion_tokens") or data.get("max_tokens") or 0
            check_limits(settings.limits, n, max_tokens)
        headers = {"content-type": request.headers.get("content-type", "application/json")}
        upstream = client.build_request(
            request.method, f"/v1/{path}", content=body, headers=headers, params=request.query_params
        )
        try:
            response = await client.send(upstream, stream=True)
        except httpx.HTTPError as exc:
            return JSONResponse(
                error_body(f"backend unavailable: {type(exc).__name__}", "server_error"), status_code=502
            )
        keep = {k: v for k, v in response.headers.items() if k.lower() in ("content-type", "cache-control")}
        if "text/event-stream" in response.headers.get("content-type", ""):

            async def relay():
                try:
                    async for chunk in response.aiter_raw():
                        yield chunk
                finally:
                    await response.aclose()

            return StreamingResponse(relay(), status_code=response.status_code, headers=keep)
        content = await response.aread()
        await response.aclose()
        return Response(content, status_code=response.status_code, headers=keep)

    return app


def run_backend(ns: Any) -> int:
    """``openmind deploy --backend vllm|lmdeploy|mindie``: launch, wait, proxy, stop."""
    from openmind.nlp.serve.cli import settings_from
    from openmind.nlp.serve.server import bind_socket, serve_forever

    backend = ns.deploy.backend
    check_installed(backend)
    from openmind.core.api import resolve_model

    model = resolve_model(ns.model.model, revision=ns.model.revision, hub=ns.model.hub)
    name = ns.deploy.served_model_name or os.path.basename(os.path.normpath(model))
    adapters = dict(entry.split("=", 1) for entry in ns.deploy.lora_adapters)
    if ns.model.adapter:
        adapters.setdefault(os.path.basename(os.path.normpath(ns.model.adapter)), ns.model.adapter)
    probe = bind_socket("127.0.0.1", 0)
    port = probe.getsockname()[1]
    probe.close()
    env = None
    config_path = None
    if backend == "mindie":
        home = os.environ.get("MIES_INSTALL_PATH", "")
        template_path = os.path.join(home, "conf", "config.json")
        try:
            with open(template_path, encoding="utf-8") as fh:
                template = json.load(fh)
        except (OSError, ValueError) as exc:
            raise S_BACKEND_START.error(f"cannot read MindIE's config {template_path!r}: {exc}") from None
        config_path = os.path.join(tempfile.mkdtemp(prefix="openmind-mindie-"), "config.json")
        with open(config_path, "w", encoding="utf-8") as fh:
            json.dump(mindie_config(template, model=model, served_name=name, port=port), fh, indent=2)
        env = {"MIES_CONFIG_JSON_PATH": config_path}
    command = launch_command(
        backend,
        model=model,
        served_name=name,
        port=port,
        adapters=adapters,
        dtype=ns.model.dtype,
        trust_remote_code=ns.model.trust_remote_code,
        config_path=config_path,
    )
    print(f"starting {backend}: {' '.join(command)}", file=sys.stderr, flush=True)
    bind_socket(ns.deploy.host, ns.deploy.port).close()
    with Upstream(command, port, env=env) as upstream:
        app = create_proxy_app(upstream.url, settings_from(ns, name))
        print(f"serving {name!r} through {backend} on http://{ns.deploy.host}:{ns.deploy.port}/v1", file=sys.stderr)
        serve_forever(app, ns.deploy.host, ns.deploy.port)
    return 0
