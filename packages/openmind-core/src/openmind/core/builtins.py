"""openmind-core's own plugin: the verbs every installation has.

Registered through the same hooks as any third-party plugin (see ``DEFAULT_PLUGINS`` in
:mod:`openmind.core.plugins`).
"""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import CommandSpec, FrameworkSpec


@hookimpl
def openmind_register_commands(register):
    register(
        CommandSpec(
            name="list",
            impl="openmind.core.cli.listing:ListCommand",
            help="Show the support matrix: tasks, pipelines, trainers, models, templates, datasets, hubs, plugins.",
        )
    )
    register(
        CommandSpec(
            name="env",
            impl="openmind.core.cli.environment:EnvCommand",
            help="Print versions, frameworks, devices and plugins (for bug reports).",
        )
    )
    register(
        CommandSpec(
            name="docs",
            impl="openmind.core.cli.docs:DocsCommand",
            help="Generate docs/SUPPORT.md and docs/errors.md from the registry (--check: fail if stale).",
        )
    )


@hookimpl
def openmind_register_frameworks(register):
    register(
        FrameworkSpec(
            name="pt",
            display_name="PyTorch",
            aliases=("torch", "pytorch"),
            modules=("torch",),
            # auto prefers PyTorch: it is the backend with the widest model coverage.
            priority=100,
            description="PyTorch (CPU, CUDA, Ascend NPU through torch_npu)",
        )
    )
    register(
        FrameworkSpec(
            name="ms",
            display_name="MindSpore",
            aliases=("mindspore",),
            modules=("mindspore",),
            priority=50,
            description="MindSpore (CPU, Ascend, GPU)",
        )
    )
