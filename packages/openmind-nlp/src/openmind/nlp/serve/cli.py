"""``openmind deploy``: serve a model behind an OpenAI-compatible API."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from openmind.core.cli.command import Command
from openmind.core.pipelines.base import DEFAULT_MAX_NEW_TOKENS

EPILOG = """examples:
  openmind deploy --model ./my-model                      # http://127.0.0.1:8000/v1
  openmind deploy --model saves/sft-run --api-key sk-local --port 8001
  openmind deploy --model ./base --lora-adapters math=./lora-math,code=./lora-code
  openmind deploy --model ./my-model --backend vllm       # needs vllm and a CUDA GPU

then:
  curl http://127.0.0.1:8000/v1/chat/completions -H "Content-Type: application/json" \\
       -d '{"model": "my-model", "messages": [{"role": "user", "content": "Hello"}]}'
  python -c "from openai import OpenAI; c = OpenAI(base_url='http://127.0.0.1:8000/v1', api_key='x'); \\
             print(c.chat.completions.create(model='my-model', messages=[{'role': 'user', 'content': 'Hi'}]))"

Routes: GET /health, GET /v1/models, POST /v1/chat/completions, /v1/completions, /v1/embeddings;
plugins add theirs (openmind-mm: POST /v1/images/generations for a text-to-image folder).
The server binds to 127.0.0.1 unless --host says otherwise; --api-key is then strongly advised."""


def resolve_run_folder(ns: Any, args: argparse.Namespace | None = None) -> None:
    """``--model RUN_DIR`` or a positional RUN_DIR (a training output): serve its base model with
    its LoRA adapter, or the fully fine-tuned weights it holds."""
    from openmind.core.args import load_run

    config = getattr(args, "config", None) if args is not None else None
    if config and "model" not in ns.explicit and os.path.isdir(config) and load_run(config) is not None:
        ns.model.model = config  # the saved arguments name the base model; the run folder is what to serve
    model = ns.model.model
    if not model or not os.path.isdir(model):
        return
    saved = load_run(model)
    if saved is None:
        return
    if os.path.isfile(os.path.join(model, "adapter_config.json")) and saved.get("model"):
        if ns.model.adapter is None:
            ns.model.adapter = model
        deploy = getattr(ns, "deploy", None)
        if deploy is not None and deploy.served_model_name is None:
            deploy.served_model_name = os.path.basename(os.path.normpath(model))
        ns.model.model = saved["model"]


def check_limits(deploy: Any) -> None:
    from openmind.nlp.serve.errors import S_BAD_LIMIT

    for key in ("max_batch_size", "max_queue", "max_n", "max_tokens_cap", "max_prompt_tokens"):
        if getattr(deploy, key) < 1:
            raise S_BAD_LIMIT.error(f"{key}={getattr(deploy, key)} must be >= 1", location=f"--{key.replace('_', '-')}")
    for key in ("batch_wait_ms", "request_timeout"):
        if getattr(deploy, key) < 0:
            raise S_BAD_LIMIT.error(f"{key}={getattr(deploy, key)} must be >= 0", location=f"--{key.replace('_', '-')}")


def settings_from(ns: Any, name: str):
    from openmind.nlp.serve.app import ServeSettings
    from openmind.nlp.serve.schemas import Limits

    d = ns.deploy
    return ServeSettings(
        served_model_name=name,
        api_key=d.api_key or os.environ.get("OPENMIND_API_KEY") or None,
        limits=Limits(max_prompt_tokens=d.max_prompt_tokens, max_tokens_cap=d.max_tokens_cap, max_n=d.max_n),
        max_batch_size=d.max_batch_size,
        batch_wait_ms=d.batch_wait_ms,
        max_queue=d.max_queue,
        request_timeout=d.request_timeout,
        default_max_tokens=min(DEFAULT_MAX_NEW_TOKENS, d.max_tokens_cap),
        strict_schema=bool(getattr(d, "strict_schema", False)),
        arguments=ns,
    )


class DeployCommand(Command):
    groups = ("model", "template", "deploy")
    takes_config = True
    description = (
        "Serve a model (a folder, a hub id or a training run folder) behind an OpenAI-compatible HTTP API: "
        "chat completions (streaming too), completions with echo/logprobs, embeddings, LoRA adapters by name. "
        "Concurrent requests are generated together (dynamic batching); a full queue answers 429."
    )
    epilog = EPILOG

    def run(self, args: argparse.Namespace) -> int:
        from openmind.core.errors import A_MISSING

        ns = self.resolve(args)
        if not ns.model.model:
            raise A_MISSING.error("deploy needs --model (a model folder, hub id or run folder)", location="--model")
        check_limits(ns.deploy)
        if ns.deploy.api_key is None and os.environ.get("OPENMIND_API_KEY"):
            ns.deploy.api_key = os.environ["OPENMIND_API_KEY"]
        if ns.deploy.host not in ("127.0.0.1", "localhost", "::1") and not ns.deploy.api_key:
            print(
                f"warning: serving on {ns.deploy.host} without --api-key: anyone who can reach this port can use the model",
                file=sys.stderr,
            )
        resolve_run_folder(ns, args)
        if ns.deploy.backend != "native":
            from openmind.nlp.serve.proxy import run_backend

            return run_backend(ns)
        from openmind.nlp.serve.app import create_app
        from openmind.nlp.serve.pipeline_engine import build_engine
        from openmind.nlp.serve.server import bind_socket, serve_forever

        bind_socket(ns.deploy.host, ns.deploy.port).close()  # fail fast on a busy port, before loading
        engine = build_engine(ns)
        app = create_app(engine, settings_from(ns, engine.name))
        kinds = ", ".join(sorted(engine.kinds))
        print(
            f"serving {engine.name!r} ({kinds}) on http://{ns.deploy.host}:{ns.deploy.port}/v1"
            + (f"; adapters: {', '.join(engine.adapters)}" if engine.adapters else "")
            + ("; API key required" if ns.deploy.api_key else ""),
            file=sys.stderr,
            flush=True,
        )
        serve_forever(app, ns.deploy.host, ns.deploy.port)
        return 0
