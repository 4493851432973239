"""openMind 1.0 compatibility: ``from openmind import AutoModelForCausalLM, AutoTokenizer, ...``.

The classes are transformers' Auto classes with openmind's model resolution and security
defaults on ``from_pretrained``:

* the name may be a local folder or a hub id (``hf::org/name``, ``om::org/name``, or a bare id
  for the default hub), resolved through openmind's hubs like everywhere else;
* ``trust_remote_code`` defaults to ``False``;
* models load safetensors; pickle weights (``*.bin``) are refused with OM-M102 unless
  ``allow_pickle=True`` is passed.

``openmind/__init__.py`` maps the names here lazily, so ``import openmind`` imports no torch.

Example (as in openMind 1.0)::

    from openmind import AutoModelForCausalLM, AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained("./my-model")
    model = AutoModelForCausalLM.from_pretrained("./my-model", dtype="auto")
"""

from __future__ import annotations

import os
from typing import Any

import transformers

from openmind.core.pipelines.model import PICKLE_WEIGHTS, SAFE_WEIGHTS
from openmind.nlp.errors import M_PICKLE
from openmind.pt.pipelines.loading import has_weights

__all__ = [
    "AutoConfig",
    "AutoModel",
    "AutoModelForCausalLM",
    "AutoModelForMaskedLM",
    "AutoModelForSequenceClassification",
    "AutoModelForTokenClassification",
    "AutoTokenizer",
]
#: also available lazily (module ``__getattr__``): Trainer, TrainingArguments

#: keyword arguments of from_pretrained that choose where a hub model comes from
_HUB_KEYS = ("revision", "hub")


def resolve_name(name: str | os.PathLike, kwargs: dict[str, Any]) -> str:
    """A local folder for ``name``: as is when it exists, else pulled through openmind's hubs."""
    from openmind.core.api import resolve_model

    hub_kwargs = {k: kwargs.get(k) for k in _HUB_KEYS}
    kwargs.pop("hub", None)
    return resolve_model(name, revision=hub_kwargs["revision"], hub=hub_kwargs["hub"])


class _SecureFromPretrained:
    """``from_pretrained`` with openmind's resolution and defaults (no weights involved)."""

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str | os.PathLike, *args: Any, **kwargs: Any) -> Any:
        path = resolve_name(pretrained_model_name_or_path, kwargs)
        kwargs.setdefault("trust_remote_code", False)
        return super().from_pretrained(path, *args, **kwargs)  # type: ignore[misc]


class _SecureModel(_SecureFromPretrained):
    """Also: safetensors required unless ``allow_pickle=True``."""

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str | os.PathLike, *args: Any, **kwargs: Any) -> Any:
        allow_pickle = bool(kwargs.pop("allow_pickle", False))
        path = resolve_name(pretrained_model_name_or_path, kwargs)
        if os.path.isdir(path):
            only_pickle = not has_weights(path, SAFE_WEIGHTS) and has_weights(path, PICKLE_WEIGHTS)
            if not allow_pickle:
                if only_pickle:
                    raise M_PICKLE.error(f"{path!r} has only pickle weights", location=path)
                if kwargs.get("use_safetensors") is False:
                    raise M_PICKLE.error("use_safetensors=False loads pickle weights", location=path)
                kwargs.setdefault("use_safetensors", True)
            elif only_pickle:
                kwargs.setdefault("use_safetensors", False)
        kwargs.setdefault("trust_remote_code", False)
        return super(_SecureFromPretrained, cls).from_pretrained(path, *args, **kwargs)  # type: ignore[misc]


class AutoConfig(_SecureFromPretrained, transformers.AutoConfig):
    pass


class AutoTokenizer(_SecureFromPretrained, transformers.AutoTokenizer):
    pass


class AutoModel(_SecureModel, transformers.AutoModel):
    pass


class AutoModelForCausalLM(_SecureModel, transformers.AutoModelForCausalLM):
    pass


class AutoModelForSequenceClassification(_SecureModel, transformers.AutoModelForSequenceClassification):
    pass


class AutoModelForTokenClassification(_SecureModel, transformers.AutoModelForTokenClassification):
    pass


class AutoModelForMaskedLM(_SecureModel, transformers.AutoModelForMaskedLM):
    pass


def __getattr__(name: str) -> Any:
    # the trainer stack is heavy: import it only when asked for
    if name in ("Trainer", "TrainingArguments"):
        return getattr(transformers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
