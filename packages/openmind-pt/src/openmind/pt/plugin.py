"""openmind-pt's plugin: PyTorch pipelines and trainers. Registration only; imports no torch."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl


@hookimpl
def openmind_env_info():
    """Devices PyTorch sees (imports torch; only `openmind env` calls this)."""
    from openmind.pt.device import describe_devices

    return describe_devices()
