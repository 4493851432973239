"""Plugin ``pt-quickstart``: the `quickstart` verb (registration only; imports no torch)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import CommandSpec


@hookimpl
def openmind_register_commands(register):
    register(
        CommandSpec(
            name="quickstart",
            impl="openmind.pt.quickstart.run:QuickstartCommand",
            help="Build, train, evaluate, chat with and serve a tiny model end to end (CPU, a few minutes).",
            requires=("torch>=2.1", "transformers>=4.45", "wordllama"),
        )
    )
