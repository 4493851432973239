"""Core plugin ``core-hub``: the hubs and the hub verbs (registration only; clients load lazily)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.hub import errors as _errors  # noqa: F401  (declares OM-H0xx for the error catalogue)
from openmind.core.specs import CommandSpec, HubSpec


@hookimpl
def openmind_register_hubs(register):
    register(
        HubSpec(
            name="modelers",
            prefix="om",
            endpoint_env="OPENMIND_HUB_ENDPOINT",
            impl="openmind.core.hub.hubs.modelers:ModelersHub",
            requires=("openmind-hub>=0.9",),
            description="Modelers (modelers.cn), openMind's hub, through the openmind-hub client. Token: OPENMIND_HUB_TOKEN.",
        )
    )
    register(
        HubSpec(
            name="huggingface",
            prefix="hf",
            endpoint_env="HF_ENDPOINT",
            impl="openmind.core.hub.hubs.huggingface:HuggingFaceHub",
            requires=("huggingface_hub>=0.24",),
            description="Hugging Face Hub (or a mirror) through huggingface_hub. Token: HF_TOKEN or `hf auth login`.",
        )
    )
    register(
        HubSpec(
            name="modelscope",
            prefix="ms",
            endpoint_env="MODELSCOPE_DOMAIN",
            impl="openmind.core.hub.hubs.modelscope:ModelScopeHub",
            requires=("modelscope>=1.10",),
            description="ModelScope through the modelscope client. Token: MODELSCOPE_API_TOKEN.",
        )
    )
    register(
        HubSpec(
            name="local",
            prefix="local",
            endpoint_env="OPENMIND_LOCAL_HUB",
            impl="openmind.core.hub.hubs.local:LocalHub",
            description="A folder (or file:// URL) laid out as <root>/<org>/<name>/: an offline mirror.",
        )
    )


@hookimpl
def openmind_register_commands(register):
    register(
        CommandSpec(
            name="pull",
            impl="openmind.core.hub.cli:PullCommand",
            help="Download a model from a hub into the cache (or --local-dir): resumable, verified.",
        )
    )
    register(
        CommandSpec(
            name="push",
            impl="openmind.core.hub.cli:PushCommand",
            help="Upload a folder to a hub repository (created if missing) as one commit.",
        )
    )
    register(
        CommandSpec(
            name="rm",
            impl="openmind.core.hub.cli:RmCommand",
            help="Remove a model from the cache (--remote: delete the repository on the hub).",
        )
    )
    register(
        CommandSpec(
            name="cache",
            impl="openmind.core.hub.cli:CacheCommand",
            help="Inspect the download cache: ls (size, revision, last used), verify (re-hash), clean.",
        )
    )
