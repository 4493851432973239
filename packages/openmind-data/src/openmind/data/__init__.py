"""openmind.data (distribution openmind-data): the framework-neutral data engine.

Public API (imported lazily; ``import openmind.data`` imports neither ``datasets`` nor a framework)::

    from openmind.core.args import DataArguments
    from openmind.data import load_dataset, prepare

    args = DataArguments(dataset=["data/train.jsonl"], cutoff_len=2048, packing=True)
    rows = load_dataset(args, stage="sft")            # standard rows, every row checked
    data = prepare(args, tokenizer, template, stage="sft")
    data.train, data.eval, data.stats                  # Arrow datasets + totals; cached on disk

    from openmind.pt.training.adapters import torch_collator       # openmind-pt
    from openmind.ms.training.data_source import mindspore_source  # openmind-ms

See :mod:`openmind.data.formats` (standard formats), :mod:`openmind.data.converters`
(alpaca / sharegpt / openai / preference), :mod:`openmind.data.catalog` (registered datasets,
LLaMA-Factory's ``dataset_info.json``), :mod:`openmind.data.encoding` (tokenisation and label
masks), :mod:`openmind.data.packing` and :mod:`openmind.data.cache`.
"""

from __future__ import annotations

from typing import Any

from openmind.data.version import __version__

_LAZY = {
    "load_dataset": "openmind.data.api:load_dataset",
    "prepare": "openmind.data.preparation:prepare",
    "PreparedData": "openmind.data.preparation:PreparedData",
    "Report": "openmind.data.loading:Report",
    "Encoder": "openmind.data.encoding:Encoder",
    "resolve_template": "openmind.data.api:resolve_template",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'openmind.data' has no attribute {name!r}")
    import importlib

    module, _, attr = target.partition(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
