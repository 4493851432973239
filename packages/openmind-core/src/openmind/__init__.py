"""openmind: one toolkit for the whole life of a model.

This module is the public facade. It is owned by ``openmind-core`` and is the only
``openmind/__init__.py`` any distribution ships; the other portions (``openmind.nlp``,
``openmind.pt``, ...) are separate distributions joined through ``pkgutil.extend_path``.

Everything here is lazy: ``import openmind`` imports no framework. Names such as
``pipeline`` or the openMind 1.0 ``AutoModelForCausalLM`` are resolved on first access.
"""

from __future__ import annotations

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from openmind.core.version import __version__  # noqa: E402

# name -> "module:attr"; resolved on first attribute access (PEP 562).
_LAZY = {
    "pipeline": "openmind.core.api:pipeline",
    "OpenMindError": "openmind.core.errors:OpenMindError",
    "is_torch_available": "openmind.core.frameworks:is_torch_available",
    "is_mindspore_available": "openmind.core.frameworks:is_mindspore_available",
    "get_registry": "openmind.core.plugins:get_registry",
    "train": "openmind.core.api:train",
    # openMind 1.0 compatibility: model classes come from the PyTorch portion.
    "AutoConfig": "openmind.pt.auto:AutoConfig",
    "AutoTokenizer": "openmind.pt.auto:AutoTokenizer",
    "AutoModel": "openmind.pt.auto:AutoModel",
    "AutoModelForCausalLM": "openmind.pt.auto:AutoModelForCausalLM",
    "AutoModelForSequenceClassification": "openmind.pt.auto:AutoModelForSequenceClassification",
    "AutoModelForTokenClassification": "openmind.pt.auto:AutoModelForTokenClassification",
    "AutoModelForMaskedLM": "openmind.pt.auto:AutoModelForMaskedLM",
    "Trainer": "openmind.pt.auto:Trainer",
    "TrainingArguments": "openmind.pt.auto:TrainingArguments",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'openmind' has no attribute {name!r}")
    from openmind.core.lazy import import_string

    value = import_string(target, feature=f"openmind.{name}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
