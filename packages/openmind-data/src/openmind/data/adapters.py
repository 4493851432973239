"""Moved: the framework adapters live with their framework, so openmind-data imports none.

* ``torch_collator``, ``TorchCollator``, ``trl_preference`` -> :mod:`openmind.pt.training.adapters`
  (openmind-pt);
* ``mindspore_source``, ``MindSporeSource`` -> :mod:`openmind.ms.training.data_source` (openmind-ms).

The old names stay importable from here, resolved on first use (this module imports neither
package up front; the name's framework package must be installed).
"""

from __future__ import annotations

import importlib
from typing import Any

from openmind.core.training.layout import IGNORE_INDEX

_MOVED = {
    "TorchCollator": "openmind.pt.training.adapters",
    "torch_collator": "openmind.pt.training.adapters",
    "trl_preference": "openmind.pt.training.adapters",
    "MindSporeSource": "openmind.ms.training.data_source",
    "mindspore_source": "openmind.ms.training.data_source",
}

__all__ = ["IGNORE_INDEX", *_MOVED]


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module 'openmind.data.adapters' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        package = "openmind-pt" if ".pt." in module else "openmind-ms"
        raise ImportError(f"openmind.data.adapters.{name} moved to {module}: install {package} ({exc})") from exc
    globals()[name] = value
    return value
