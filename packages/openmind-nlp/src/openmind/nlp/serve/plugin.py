"""Plugin ``nlp-serve``: the `deploy` verb and the OpenAI routes (registration only; imports no server stack)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import CommandSpec, RouteSpec
from openmind.nlp.serve import errors  # noqa: F401  (declares the OM-S0xx codes for the catalogue)


@hookimpl
def openmind_register_commands(register):
    register(
        CommandSpec(
            name="deploy",
            impl="openmind.nlp.serve.cli:DeployCommand",
            requires=("fastapi>=0.110", "uvicorn>=0.29"),
            help="Serve a model behind an OpenAI-compatible API (chat, completions, embeddings; "
            "dynamic batching; --backend native|vllm|lmdeploy|mindie).",
        )
    )


#: (path, method, module of :mod:`openmind.nlp.serve.routes`, description); mounted in this order
ROUTES = (
    ("/health", "GET", "health", "liveness and scheduler counters (no API key needed)"),
    ("/v1/models", "GET", "models", "the served model and its LoRA adapters"),
    ("/v1/chat/completions", "POST", "chat", "OpenAI chat completions (SSE streaming, logprobs, tools)"),
    ("/v1/completions", "POST", "completions", "OpenAI completions (echo + logprobs for evaluators)"),
    ("/v1/embeddings", "POST", "embeddings", "OpenAI embeddings (float or base64)"),
)


@hookimpl
def openmind_register_routes(register):
    for order, (path, method, module, description) in enumerate(ROUTES):
        register(
            RouteSpec(
                path=path,
                methods=(method,),
                impl=f"openmind.nlp.serve.routes.{module}:handler",
                requires=("fastapi>=0.110",),
                order=order * 10,
                description=description,
            )
        )
