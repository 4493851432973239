"""openMind 1.0's availability helpers (``from openmind import is_torch_npu_available`` ...).

Like 1.0's, they look for installed packages without importing them (``find_spec``), except
:func:`is_torch_npu_available`, which must ask torch whether an NPU is there; it does so safely:
a torch_npu installed without Ascend CANN must not break ``import torch`` (see ENVIRONMENT.md).
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib.util import find_spec

from openmind.core.frameworks import is_mindspore_available, is_torch_available, is_transformers_available

__all__ = [
    "get_framework",
    "is_diffusers_available",
    "is_lmdeploy_available",
    "is_lmeval_available",
    "is_mindformers_available",
    "is_mindnlp_available",
    "is_mindone_available",
    "is_ms_available",
    "is_tokenizers_available",
    "is_torch_available",
    "is_torch_npu_available",
    "is_transformers_available",
]


def _has(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def is_ms_available() -> bool:
    return is_mindspore_available()


def is_mindformers_available() -> bool:
    return _has("mindformers")


def is_diffusers_available() -> bool:
    return _has("diffusers")


def is_mindone_available() -> bool:
    return _has("mindone")


def is_mindnlp_available() -> bool:
    return _has("mindnlp")


def is_tokenizers_available() -> bool:
    return _has("tokenizers")


def is_lmeval_available() -> bool:
    return _has("lm_eval")


def is_lmdeploy_available() -> bool:
    return _has("lmdeploy")


@lru_cache
def is_torch_npu_available() -> bool:
    """Whether torch_npu is installed and an Ascend NPU is usable (False, never an error, otherwise)."""
    if not is_torch_available() or not _has("torch_npu"):
        return False
    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    try:
        import torch
        import torch_npu  # noqa: F401

        return bool(torch.npu.is_available())
    except (ImportError, OSError, RuntimeError, AttributeError):
        return False


def get_framework() -> str:
    """1.0's ``get_framework()``: ``"pt"`` or ``"ms"``, ``"N/A"`` when neither is installed.

    1.0 raised when both were installed; 2.x supports both side by side, so this returns the one
    ``framework="auto"`` would pick (``OPENMIND_FRAMEWORK`` first, then PyTorch).
    """
    from openmind.core.frameworks import available_frameworks, resolve_framework

    if not available_frameworks():
        return "N/A"
    return resolve_framework("auto")[0]
