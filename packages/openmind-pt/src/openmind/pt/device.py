"""Device and dtype resolution for PyTorch, with torch_npu detected safely.

Having ``torch_npu`` installed without Ascend CANN breaks a plain ``import torch`` (torch
auto-loads device backends), so :func:`import_torch` sets ``TORCH_DEVICE_BACKEND_AUTOLOAD=0``
before the first ``import torch`` when torch_npu is present, then tries torch_npu itself.
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from typing import Any

from openmind.core.errors import DeviceError, define

V_UNAVAILABLE = define(
    "OM-V001",
    "Device not available",
    "Use device='auto' or 'cpu', or install the device's PyTorch backend (CUDA build of torch, torch_npu + CANN).",
    DeviceError,
)

_NPU: bool | None = None


def import_torch():
    """Import torch without letting a broken torch_npu break it."""
    global _NPU
    if _NPU is None and find_spec("torch_npu") is not None:
        os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    import torch

    if _NPU is None:
        _NPU = False
        if find_spec("torch_npu") is not None:
            try:
                import torch_npu  # noqa: F401

                _NPU = bool(torch.npu.is_available())
            except (ImportError, OSError, RuntimeError, AttributeError):
                _NPU = False
    return torch


def npu_available() -> bool:
    import_torch()
    return bool(_NPU)


def resolve_device(device: str | None = "auto") -> str:
    """``auto`` -> cuda:0 / npu:0 / cpu; explicit devices are checked."""
    torch = import_torch()
    device = (device or "auto").lower()
    if device == "auto":
        if torch.cuda.is_available():
            return "cuda:0"
        if npu_available():
            return "npu:0"
        return "cpu"
    kind, _, index = device.partition(":")
    if kind == "cpu":
        return "cpu"
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise V_UNAVAILABLE.error(f"device {device!r} requested but CUDA is not available")
        if index and int(index) >= torch.cuda.device_count():
            raise V_UNAVAILABLE.error(f"device {device!r}: only {torch.cuda.device_count()} CUDA device(s)")
        return f"cuda:{index or 0}"
    if kind == "npu":
        if not npu_available():
            raise V_UNAVAILABLE.error(f"device {device!r} requested but no Ascend NPU is available (torch_npu + CANN)")
        return f"npu:{index or 0}"
    raise V_UNAVAILABLE.error(f"unknown device {device!r}", hint="Use auto, cpu, cuda[:N] or npu[:N].")


def resolve_dtype(dtype: str | None, device: str) -> Any:
    """``auto``: bf16 where supported on an accelerator, else fp16 on accelerators, fp32 on CPU."""
    torch = import_torch()
    dtype = (dtype or "auto").lower()
    names = {
        "float32": torch.float32,
        "fp32": torch.float32,
        "float16": torch.float16,
        "fp16": torch.float16,
        "bfloat16": torch.bfloat16,
        "bf16": torch.bfloat16,
    }
    if dtype != "auto":
        if dtype not in names:
            from openmind.core.errors import A_BAD_VALUE

            raise A_BAD_VALUE.error(f"dtype {dtype!r} is not one of auto, float32, float16, bfloat16")
        return names[dtype]
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.startswith("npu"):
        return torch.bfloat16
    return torch.float32


def describe_devices() -> dict[str, Any]:
    info: dict[str, Any] = {}
    try:
        torch = import_torch()
        info["torch"] = torch.__version__
        info["cuda"] = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if info["cuda"]:
            info["cuda_devices"] = ", ".join(torch.cuda.get_device_name(i) for i in range(info["cuda"]))
        info["npu"] = torch.npu.device_count() if npu_available() else 0
    except Exception as exc:  # noqa: BLE001 - env must never crash
        info["torch_error"] = f"{type(exc).__name__}: {exc}"
    return info
