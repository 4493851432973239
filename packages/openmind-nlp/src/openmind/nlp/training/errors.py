"""The training error codes (``OM-T0xx``) now live in :mod:`openmind.core.training.errors`
(the trainer wrapper base in openmind-core raises them); re-exported here for old imports."""

from __future__ import annotations

from openmind.core.training.errors import (  # noqa: F401
    T_BAD_SETUP,
    T_CUTOFF,
    T_EXPORT,
    T_LAUNCH,
    T_LORA_TARGET,
    T_NO_CHECKPOINT,
    T_NO_DATASET,
    T_NOT_FINITE,
    T_NOT_TRAINABLE,
    T_OUTPUT_EXISTS,
    T_QLORA,
    T_TEMPLATE_MISMATCH,
)
