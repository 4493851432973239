"""openMind 1.0's ``openmind.metrics`` (Accuracy, F1, ...) is not carried over to 2.x.

Importing the module works; using one of its names raises OM-C001 naming the replacement.
"""

from __future__ import annotations

_NAMES = ("Accuracy", "ConfusionMatrix", "ExactMatch", "F1", "Glue", "MAE", "MSE", "Metric")


def __getattr__(name: str):
    if name in _NAMES:
        from openmind.core.compat.errors import C_REMOVED

        raise C_REMOVED.error(
            f"openmind.metrics.{name} (openMind 1.0) is not part of openmind 2.x",
            hint="Evaluate models with `openmind eval` (openmind.nlp.eval), or compute metrics with the "
            "`evaluate` library (e.g. evaluate.load('accuracy')) or scikit-learn.",
        )
    raise AttributeError(f"module 'openmind.metrics' has no attribute {name!r}")
