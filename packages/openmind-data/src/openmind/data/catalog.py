"""Registered datasets: names that point at local files or hub datasets.

A dataset is named in ``--dataset`` as

* a file or folder path (``data/train.jsonl``, ``data/``),
* a name registered in ``DATASET_DIR/dataset_info.json`` — LLaMA-Factory's file, read unchanged
  (``file_name``, ``hf_hub_url``/``ms_hub_url``/``om_hub_url``, ``formatting``, ``ranking``,
  ``columns``, ``tags``, ``subset``, ``split``, ``folder``, ``num_samples``),
* a name registered in a small YAML/JSON file in ``DATASET_DIR`` (``*.dataset.yaml``,
  ``*.dataset.json`` or ``dataset_info.yaml``), e.g.::

      # data/my_chat.dataset.yaml
      name: my_chat
      file_name: chats.jsonl        # relative to this file; or a list, or hf_hub_url: org/name
      formatting: sharegpt
      columns: {messages: conversations, system: system_prompt}

* or a hub dataset directly: ``hf::org/name`` (``ms::`` ModelScope, ``om::`` Modelers).
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmind.data.converters import COLUMN_KEYS, TAG_KEYS, Mapping, input_formats
from openmind.data.errors import D_BAD_REGISTRY, D_NOT_FOUND

ENTRY_KEYS = {
    "name",
    "file_name",
    "file",
    "files",
    "hf_hub_url",
    "ms_hub_url",
    "om_hub_url",
    "script_url",
    "cloud_file_name",
    "formatting",
    "ranking",
    "columns",
    "tags",
    "subset",
    "split",
    "folder",
    "num_samples",
    "description",
}
HUB_PREFIXES = {"hf::": "hf_hub", "ms::": "ms_hub", "om::": "om_hub"}


@dataclass
class DatasetEntry:
    """One dataset: where its rows come from and how to read them."""

    name: str
    load_from: str = "file"  # file | hf_hub | ms_hub | om_hub
    paths: list[str] = field(default_factory=list)  # local files/folders (load_from == "file")
    hub_id: str = ""
    formatting: str = "auto"
    ranking: bool = False
    columns: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    subset: str | None = None
    split: str = "train"
    folder: str | None = None
    num_samples: int | None = None
    #: where the entry was declared (for error messages)
    defined_in: str = ""

    def mapping(self, formatting: str) -> Mapping:
        return Mapping(formatting, dict(self.columns), dict(self.tags), self.ranking)


def _entry(name: str, raw: Any, base: Path, where: str, default_formatting: str = "auto") -> DatasetEntry:
    if not isinstance(raw, dict):
        raise D_BAD_REGISTRY.error(f"dataset {name!r} must be a mapping, not {type(raw).__name__}", location=where)
    unknown = sorted(set(raw) - ENTRY_KEYS)
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(ENTRY_KEYS), n=1)
        raise D_BAD_REGISTRY.error(
            f"dataset {name!r}: unknown key {unknown[0]!r}" + (f" (did you mean {close[0]!r}?)" if close else ""),
            location=f"{where} field {unknown[0]!r}",
        )
    formatting = raw.get("formatting", default_formatting)
    if formatting not in (*input_formats(), "auto"):
        raise D_BAD_REGISTRY.error(
            f"dataset {name!r}: formatting {formatting!r} is not one of auto, {', '.join(input_formats())}",
            location=f"{where} field 'formatting'",
        )
    for key, allowed in (("columns", COLUMN_KEYS), ("tags", TAG_KEYS)):
        value = raw.get(key, {})
        if not isinstance(value, dict):
            raise D_BAD_REGISTRY.error(f"dataset {name!r}: {key} must be a mapping", location=f"{where} field {key!r}")
        for k, v in value.items():
            if k not in allowed:
                raise D_BAD_REGISTRY.error(
                    f"dataset {name!r}: unknown {key[:-1]} {k!r}; expected one of {', '.join(allowed)}",
                    location=f"{where} field '{key}.{k}'",
                )
            if not isinstance(v, str):
                raise D_BAD_REGISTRY.error(
                    f"dataset {name!r}: {key}.{k} must be a column name (string)", location=f"{where} field '{key}.{k}'"
                )
    entry = DatasetEntry(
        name=name,
        formatting=formatting,
        ranking=bool(raw.get("ranking", False)),
        columns=dict(raw.get("columns", {})),
        tags=dict(raw.get("tags", {})),
        subset=raw.get("subset"),
        split=raw.get("split", "train"),
        folder=raw.get("folder"),
        num_samples=raw.get("num_samples"),
        defined_in=where,
    )
    for key, kind in (("hf_hub_url", "hf_hub"), ("ms_hub_url", "ms_hub"), ("om_hub_url", "om_hub")):
        if key in raw:
            entry.load_from, entry.hub_id = kind, str(raw[key])
            break
    else:
        files = raw.get("file_name", raw.get("file", raw.get("files")))
        if files is None:
            bad = "script_url" if "script_url" in raw else "cloud_file_name" if "cloud_file_name" in raw else None
            reason = f"{bad} datasets are not supported (no code from datasets is run)" if bad else "names no file_name"
            raise D_BAD_REGISTRY.error(f"dataset {name!r} {reason}", location=where)
        files = files if isinstance(files, list) else [files]
        entry.paths = [str(base / f) if not os.path.isabs(f) else f for f in files]
    return entry


def read_registry_file(path: Path) -> dict[str, DatasetEntry]:
    """Entries declared in one ``dataset_info.json`` / ``*.dataset.yaml`` file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise D_BAD_REGISTRY.error(f"cannot read {path}: {exc.strerror or exc}", location=str(path)) from None
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise D_BAD_REGISTRY.error(
            f"{path.name} is not valid JSON: {exc.msg}", location=f"{path}:{exc.lineno}"
        ) from None
    except Exception as exc:  # yaml errors
        mark = getattr(exc, "problem_mark", None)
        loc = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise D_BAD_REGISTRY.error(f"{path.name} is not valid YAML: {exc}", location=loc) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise D_BAD_REGISTRY.error(f"{path.name} must hold a mapping", location=str(path))
    # LLaMA-Factory's dataset_info.json defaults to alpaca; openmind's own files detect the layout
    default = "alpaca" if path.name == "dataset_info.json" else "auto"
    single = {"file_name", "file", "files", "hf_hub_url", "ms_hub_url", "om_hub_url"} & set(data)
    if single:
        name = data.get("name") or path.name.split(".")[0]
        return {name: _entry(name, data, path.parent, str(path), default)}
    return {name: _entry(name, raw, path.parent, f"{path} dataset {name!r}", default) for name, raw in data.items()}


def registry(dataset_dir: str | os.PathLike | None) -> dict[str, DatasetEntry]:
    """Every dataset registered in ``dataset_dir``."""
    out: dict[str, DatasetEntry] = {}
    if not dataset_dir:
        return out
    folder = Path(dataset_dir)
    if not folder.is_dir():
        return out
    candidates = [folder / "dataset_info.json", folder / "dataset_info.yaml", folder / "dataset_info.yml"]
    candidates += sorted(folder.glob("*.dataset.yaml")) + sorted(folder.glob("*.dataset.yml"))
    candidates += sorted(folder.glob("*.dataset.json"))
    for path in candidates:
        if path.is_file():
            for name, entry in read_registry_file(path).items():
                if name in out:
                    raise D_BAD_REGISTRY.error(
                        f"dataset {name!r} is registered twice: in {out[name].defined_in} and {entry.defined_in}",
                        location=str(path),
                    )
                out[name] = entry
    return out


def resolve(name: str, dataset_dir: str | os.PathLike | None = None, formatting: str = "auto") -> DatasetEntry:
    """Turn one ``--dataset`` item into a :class:`DatasetEntry` (OM-D003 with suggestions if unknown)."""
    for prefix, kind in HUB_PREFIXES.items():
        if name.startswith(prefix):
            return DatasetEntry(name=name, load_from=kind, hub_id=name[len(prefix) :], formatting=formatting)
    known = registry(dataset_dir)
    if name in known:  # a registered name wins over a same-named file or folder in the working directory
        entry = known[name]
        if formatting != "auto":
            entry.formatting = formatting
        return entry
    candidates = [Path(name)]
    if dataset_dir and not os.path.isabs(name):
        candidates.append(Path(dataset_dir) / name)
    for path in candidates:
        if path.exists():
            return DatasetEntry(name=path.name, paths=[str(path)], formatting=formatting, defined_in=str(path))
    close = difflib.get_close_matches(name, list(known), n=3)
    where = f" or registered in {dataset_dir}" if dataset_dir else " (no --dataset-dir given to look names up in)"
    hint = f"Did you mean {', '.join(map(repr, close))}?" if close else D_NOT_FOUND.hint
    raise D_NOT_FOUND.error(f"dataset {name!r} is neither a file nor folder{where}", hint=hint)
