"""openmind-webui's plugin: the ``webui`` verb (registration only; imports neither gradio nor a framework)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import CommandSpec


@hookimpl
def openmind_register_commands(register):
    register(
        CommandSpec(
            name="webui",
            impl="openmind.webui.cli:WebUICommand",
            help="Open the web UI: chat, data, train, evaluate, serve and the hub from a browser.",
            requires=("gradio>=5.0",),
        )
    )
