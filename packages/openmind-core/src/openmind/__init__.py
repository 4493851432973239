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
    "AutoFeatureExtractor": "openmind.pt.auto:AutoFeatureExtractor",
    "AutoImageProcessor": "openmind.pt.auto:AutoImageProcessor",
    "AutoProcessor": "openmind.pt.auto:AutoProcessor",
    # openMind 1.0's availability helpers, logging and datasets (import-light)
    "get_framework": "openmind.core.compat.availability:get_framework",
    "is_ms_available": "openmind.core.compat.availability:is_ms_available",
    "is_torch_npu_available": "openmind.core.compat.availability:is_torch_npu_available",
    "is_mindformers_available": "openmind.core.compat.availability:is_mindformers_available",
    "is_transformers_available": "openmind.core.compat.availability:is_transformers_available",
    "is_diffusers_available": "openmind.core.compat.availability:is_diffusers_available",
    "is_mindone_available": "openmind.core.compat.availability:is_mindone_available",
    "is_mindnlp_available": "openmind.core.compat.availability:is_mindnlp_available",
    "is_tokenizers_available": "openmind.core.compat.availability:is_tokenizers_available",
    "is_lmeval_available": "openmind.core.compat.availability:is_lmeval_available",
    "is_lmdeploy_available": "openmind.core.compat.availability:is_lmdeploy_available",
    "logging": "openmind.utils.logging",
    "OmDataset": "openmind.omdatasets:OmDataset",
}

#: openMind 1.0 names 2.x does not carry: name -> the 2.x replacement (OM-C001 on access).
_REMOVED = {
    "PreTrainer": "openmind.train(stage='pt', ...) or `openmind train --stage pt` (PyTorch pre-training, "
    "torchrun/accelerate/DeepSpeed through --nproc/--deepspeed)",
    "PreTrainingArguments": "the unified training arguments: openmind.train(stage='pt', learning_rate=..., ...) "
    "or a YAML file for `openmind train`",
}

__all__ = ["__version__", *_LAZY, *_REMOVED]


def __getattr__(name: str):
    target = _LAZY.get(name)
    if target is None:
        if name in _REMOVED:
            from openmind.core.compat.errors import C_REMOVED

            raise C_REMOVED.error(f"openmind.{name} (openMind 1.0) is not part of openmind 2.x; use {_REMOVED[name]}")
        raise AttributeError(f"module 'openmind' has no attribute {name!r}")
    if ":" not in target:  # a module
        import importlib

        value = importlib.import_module(target)
        globals()[name] = value
        return value
    from openmind.core.lazy import import_string

    value = import_string(target, feature=f"openmind.{name}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_REMOVED))
