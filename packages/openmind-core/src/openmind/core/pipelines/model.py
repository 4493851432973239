"""Model folders: "what the user passed as a model" becomes a checked, recognised folder.

Framework and domain neutral: it reads file names and JSON configs, never weights. A folder is a
model when it is one of the layouts below *and* holds weights (safetensors; pickle only when
allowed). Each wrapper may add requirements of its own (openmind-nlp's wrappers also need a
tokenizer) by overriding :meth:`openmind.core.pipelines.wrapper.PipelineWrapper.check_model`.

==========================  =============================================  ===================
layout                      recognised by                                  ``config`` read from
==========================  =============================================  ===================
``diffusers``               ``model_index.json``                           ``model_index.json``
``sentence-transformers``   ``modules.json`` / ``config_sentence_...json``  ``config.json`` (or {})
``transformers``            ``config.json``                                ``config.json``
``processor``               ``preprocessor_config.json`` /                 ``config.json`` (or {})
                            ``processor_config.json``
==========================  =============================================  ===================

Weights are looked for in the folder (diffusers: and its sub-folders ``unet/``, ``vae/``,
``text_encoder/`` ...).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmind.core.api import M_NOT_A_MODEL, read_config
from openmind.core.api import resolve_model as resolve_model_id
from openmind.core.errors import A_MISSING
from openmind.core.pipelines.errors import M_PICKLE

SAFE_WEIGHTS = ("*.safetensors",)
PICKLE_WEIGHTS = ("*.bin", "*.pt", "*.pth", "*.pkl")
#: (layout, marker files), first match wins
LAYOUTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("diffusers", ("model_index.json",)),
    ("sentence-transformers", ("modules.json", "config_sentence_transformers.json")),
    ("transformers", ("config.json",)),
    ("processor", ("preprocessor_config.json", "processor_config.json")),
)


@dataclass(frozen=True)
class ModelFolder:
    path: str
    config: dict[str, Any]
    #: "safetensors" or "pickle"
    weights: str
    #: the recognised layout (see :data:`LAYOUTS`)
    layout: str = "transformers"


def _glob_any(folder: Path, patterns: tuple[str, ...], deep: bool = False) -> list[Path]:
    found = []
    subfolders = [d for d in sorted(folder.iterdir()) if d.is_dir() and not d.name.startswith(".")] if deep else []
    for base in (folder, *subfolders):
        found += [p for pattern in patterns for p in base.glob(pattern) if not p.name.startswith("adapter_")]
    return found


def recognise(folder: str | os.PathLike) -> str | None:
    """The layout of ``folder`` (``diffusers``, ``sentence-transformers``, ``transformers``,
    ``processor``), or ``None`` when it is none of them."""
    folder = Path(folder)
    for layout, markers in LAYOUTS:
        if any((folder / m).is_file() for m in markers):
            return layout
    return None


def _config(path: Path, layout: str) -> dict[str, Any]:
    if layout == "diffusers":
        file = path / "model_index.json"
        try:
            return json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise M_NOT_A_MODEL.error(f"{file} is not valid JSON: {exc}", location=str(file)) from None
    return read_config(path) if (path / "config.json").is_file() else {}


def check_model_folder(path: str | os.PathLike, *, allow_pickle: bool = False) -> ModelFolder:
    """Check that the local folder ``path`` is a model (see the module docstring).

    Raises OM-M002 (a file; no known layout; no weights) and OM-M102 (only pickle weights and
    ``allow_pickle`` is off).
    """
    path = Path(path)
    if path.is_file():
        raise M_NOT_A_MODEL.error(f"{str(path)!r} is a file, not a model folder", location=str(path))
    layout = recognise(path)
    if layout is None:
        hint = None
        if (path / "adapter_config.json").is_file():
            hint = "This is a LoRA adapter: pass the base model as model=... and this folder as adapter=..."
        raise M_NOT_A_MODEL.error(
            f"{str(path)!r} has no config.json (nor model_index.json, modules.json or a processor config)",
            location=str(path),
            hint=hint,
        )
    config = _config(path, layout)
    deep = layout == "diffusers"
    safe = _glob_any(path, SAFE_WEIGHTS, deep)
    pickled = _glob_any(path, PICKLE_WEIGHTS, deep)
    if safe:
        weights = "safetensors"
    elif pickled:
        if not allow_pickle:
            names = ", ".join(sorted(p.name for p in pickled)[:3])
            raise M_PICKLE.error(f"{str(path)!r} has only pickle weights ({names})", location=str(path))
        weights = "pickle"
    else:
        marker = next(m for lay, markers in LAYOUTS if lay == layout for m in markers if (path / m).is_file())
        raise M_NOT_A_MODEL.error(
            f"{str(path)!r} has {marker} but no weights (*.safetensors)", location=str(path / marker)
        )
    return ModelFolder(str(path), config, weights, layout)


def resolve_model_dir(
    model: str | os.PathLike | None,
    *,
    allow_pickle: bool = False,
    revision: str | None = None,
    hub: str | None = None,
) -> ModelFolder:
    """Resolve ``model`` (local folder, run folder or hub id) and check it is a model folder.

    Raises OM-A004 (no model), OM-M001 (not found) and the errors of :func:`check_model_folder`.
    """
    if model is None or str(model) == "":
        raise A_MISSING.error("no model given", hint="Pass model=PATH (SDK) or --model PATH (CLI).", location="model")
    return check_model_folder(resolve_model_id(model, revision=revision, hub=hub), allow_pickle=allow_pickle)
