"""MindSpore in this process: a safe import, the device target, and the coexistence checks.

Everything in openmind-ms that needs MindSpore goes through :func:`mindspore_module` so that a
broken environment (numpy 2, mindnlp's torch replacement) is a coded error, not a crash deep
inside a library.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from typing import Any

from openmind.core.errors import X_MISSING
from openmind.core.logs import logger
from openmind.ms.errors import MS_CONFLICT, MS_DEVICE, MS_UNUSABLE

#: openmind device prefixes -> MindSpore device targets
DEVICE_TARGETS = {"cpu": "CPU", "npu": "Ascend", "ascend": "Ascend", "cuda": "GPU", "gpu": "GPU"}
#: auto: the first available of these
AUTO_TARGETS = ("Ascend", "GPU", "CPU")

_state: dict[str, Any] = {"device": None}


def _dist_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def check_environment() -> None:
    """Raise a coded error when MindSpore cannot work in this process (checked before importing it)."""
    if find_spec("mindspore") is None:
        raise X_MISSING.error(
            "the MindSpore backend needs mindspore, which is not installed",
            hint='pip install "openmind-ms" (or: pip install "mindspore>=2.3" "numpy<2")',
        )
    numpy_version = _dist_version("numpy") or "0"
    if int(numpy_version.split(".")[0]) >= 2:
        raise MS_UNUSABLE.error(
            f"numpy {numpy_version} is installed, and MindSpore {_dist_version('mindspore')} needs numpy<2 "
            "(its kernels fail with numpy 2)",
            hint='use a separate venv for MindSpore: pip install "numpy<2" mindspore openmind-ms '
            "(nox -s \"tests(framework='ms')\" builds one)",
        )
    torch = sys.modules.get("torch")
    if torch is not None and "mindtorch" in (getattr(torch, "__file__", "") or ""):
        # mindnlp's torch replacement: tensors named torch would be MindSpore ones, and a real
        # torch import in the same process fails. The native backend does not need mindnlp.
        raise MS_CONFLICT.error("`torch` in this process is mindnlp's mindtorch replacement, not PyTorch")


def mindspore_module():
    """Import MindSpore after :func:`check_environment`; returns the module."""
    if "mindspore" not in sys.modules:
        check_environment()
        os.environ.setdefault("GLOG_v", "3")  # MindSpore's C++ log: errors only
    try:
        import mindspore
    except Exception as exc:  # noqa: BLE001 - every import failure becomes one coded error
        raise MS_UNUSABLE.error(f"import mindspore failed: {type(exc).__name__}: {exc}") from exc
    return mindspore


def available_targets() -> list[str]:
    """Device targets MindSpore can use here (CPU always)."""
    ms = mindspore_module()
    found = []
    for target in AUTO_TARGETS:
        if target == "CPU":
            found.append(target)
            continue
        if not _may_have(target):
            continue  # asking MindSpore would only log a failed plugin load
        try:
            if ms.hal.is_available(target):
                found.append(target)
        except Exception:  # noqa: BLE001 - a missing plugin library means unavailable
            continue
    return found


def _may_have(target: str) -> bool:
    """Cheap hint that a device target can exist here (its driver stack is present)."""
    if target == "Ascend":
        return bool(os.environ.get("ASCEND_HOME_PATH")) or os.path.isdir("/usr/local/Ascend")
    if target == "GPU":
        import shutil

        return shutil.which("nvidia-smi") is not None
    return True


def parse_device(device: str | None) -> tuple[str | None, int]:
    """``"auto"`` -> ``(None, 0)``; ``"npu:1"`` -> ``("Ascend", 1)``; ``"cpu"`` -> ``("CPU", 0)``."""
    text = (device or "auto").strip().lower()
    if text == "auto":
        return None, 0
    name, _, index = text.partition(":")
    if name not in DEVICE_TARGETS or (index and not index.isdigit()):
        raise MS_DEVICE.error(
            f"device {device!r} is not one of auto, cpu, npu:N, cuda:N", hint="pass device='auto' or 'cpu'"
        )
    return DEVICE_TARGETS[name], int(index or 0)


def set_device(device: str | None = "auto") -> str:
    """Select MindSpore's device target once per process; returns e.g. ``"CPU"`` or ``"Ascend:0"``."""
    target, index = parse_device(device)
    ms = mindspore_module()
    if target is None:
        if _state["device"] is not None:
            return _state["device"]
        target = available_targets()[0]
    elif target != "CPU" and target not in available_targets():
        raise MS_DEVICE.error(f"device {device!r} ({target}) is not available to MindSpore {ms.__version__}")
    chosen = f"{target}:{index}" if target != "CPU" else "CPU"
    if _state["device"] not in (None, chosen):
        # MindSpore binds one device target per process.
        raise MS_DEVICE.error(
            f"this process already runs MindSpore on {_state['device']}; cannot switch to {chosen}",
            hint="use one device per process",
        )
    if _state["device"] is None:
        if target == "CPU":
            ms.set_device("CPU")
        else:
            ms.set_device(target, index)
        _state["device"] = chosen
        logger.info("MindSpore %s on %s", ms.__version__, chosen)
    return chosen
