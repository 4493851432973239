"""openmind-ms's plugin: MindSpore pipelines and trainers. Registration only; imports no MindSpore."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl


@hookimpl
def openmind_env_info():
    """What MindSpore sees (imports mindspore; only `openmind env` calls this)."""
    from importlib.util import find_spec

    if find_spec("mindspore") is None:
        return {"mindspore": "not installed"}
    try:
        import mindspore

        return {"mindspore": mindspore.__version__, "mindspore_device_target": mindspore.get_context("device_target")}
    except Exception as exc:  # noqa: BLE001 - env must never crash
        return {"mindspore_error": f"{type(exc).__name__}: {exc}"}
