"""The prepared-data cache: one folder per hash of everything the result depends on.

The key covers the data files' *content* (sha256), hub ids, the tokenizer (its serialised
vocabulary/merges/normaliser and special tokens), the template (its source or class and
settings), the preparation arguments and the openmind-data version. A hit is a
``load_from_disk`` of memory-mapped Arrow files: no row is read into Python.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

from openmind.data.version import __version__

#: DataArguments fields that change the prepared result
ARG_FIELDS = (
    "formatting",
    "cutoff_len",
    "truncation",
    "train_on",
    "packing",
    "neat_packing",
    "max_samples",
    "val_size",
    "on_error",
)
META = "openmind_data.json"


def file_digest(path: str) -> str:
    h = hashlib.sha256()
    p = Path(path)
    files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
    for f in files:
        h.update(str(f.relative_to(p) if p.is_dir() else f.name).encode())
        with open(f, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def tokenizer_digest(tokenizer: Any) -> str:
    h = hashlib.sha256(type(tokenizer).__qualname__.encode())
    backend = getattr(tokenizer, "backend_tokenizer", None) if getattr(tokenizer, "is_fast", False) else None
    if backend is not None:
        h.update(backend.to_str().encode())
    else:
        vocab = tokenizer.get_vocab()
        h.update(json.dumps(sorted(vocab.items()), ensure_ascii=False).encode())
    specials = getattr(tokenizer, "special_tokens_map", {}) or {}
    h.update(json.dumps(specials, sort_keys=True, default=str).encode())
    h.update(str(getattr(tokenizer, "add_bos_token", None)).encode())
    h.update(str(getattr(tokenizer, "add_eos_token", None)).encode())
    return h.hexdigest()


def template_digest(template: Any) -> str:
    if template is None:
        return "none"
    fingerprint = getattr(template, "fingerprint", None)
    if callable(fingerprint):
        return str(fingerprint())
    cls = type(template)
    parts = {"class": f"{cls.__module__}.{cls.__qualname__}", "name": getattr(template, "name", "")}
    for key, value in sorted(vars(template).items()):
        if key.startswith("_"):
            continue
        try:
            parts[key] = json.loads(json.dumps(value, default=str))
        except (TypeError, ValueError):
            parts[key] = repr(value)
    try:  # native templates: their code is part of what they render
        import importlib.metadata as md

        parts["nlp"] = md.version("openmind-nlp")
    except Exception:  # noqa: BLE001
        pass
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def key(
    *, sources: list[str], data_args: Any, tokenizer: Any, template: Any, stage: str, extra: dict | None = None
) -> str:
    parts = {
        "version": __version__,
        "stage": stage,
        "args": {f: getattr(data_args, f, None) for f in ARG_FIELDS},
        "sources": sources,
        "tokenizer": tokenizer_digest(tokenizer) if tokenizer is not None else None,
        "template": template_digest(template),
        "extra": extra or {},
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]


def lookup(root: Path, digest: str) -> Path | None:
    folder = root / digest
    return folder if (folder / META).is_file() else None


def store(root: Path, digest: str, splits: dict[str, Any], meta: dict[str, Any]) -> Path:
    """Write splits with ``save_to_disk`` into a temporary folder, then move it in place atomically."""
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".tmp-{digest}-{uuid.uuid4().hex[:8]}"
    for name, ds in splits.items():
        if ds is not None:
            ds.save_to_disk(str(tmp / name))
    (tmp / META).write_text(json.dumps(meta, indent=2, default=str), encoding="utf-8")
    final = root / digest
    if final.exists():
        shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    return final
