"""openMind 1.0's ``openmind.utils``: availability helpers and logging (import-light).

Kept for code written against 1.0; new code uses :mod:`openmind.core.frameworks` and the
``logging`` module's ``openmind`` logger.
"""

from __future__ import annotations

from openmind.core.compat.availability import (
    get_framework,
    is_diffusers_available,
    is_lmdeploy_available,
    is_lmeval_available,
    is_mindformers_available,
    is_mindnlp_available,
    is_mindone_available,
    is_ms_available,
    is_tokenizers_available,
    is_torch_available,
    is_torch_npu_available,
    is_transformers_available,
)
from openmind.utils import logging
from openmind.utils.logging import get_logger

__all__ = [
    "get_framework",
    "get_logger",
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
    "logging",
]
