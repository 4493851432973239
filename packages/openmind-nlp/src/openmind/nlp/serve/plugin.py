"""Plugin ``nlp-serve``: the `deploy` verb (registration only; imports no server stack)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import CommandSpec
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
