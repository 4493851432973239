"""The import guard of the MindSpeed backend: is this an Ascend machine with MindSpeed and a
MindSpeed-LLM checkout? Checked before any work; OM-PT001 names what is missing."""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path

from openmind.pt.mindspeed.errors import PT_MINDSPEED
from openmind.pt.mindspeed.translate import HOME_FILES

HOME_ENV = "MINDSPEED_LLM_HOME"


def find_home(given: str | None = None) -> Path | None:
    """The MindSpeed-LLM checkout: ``given`` (--mindspeed-home), else ``MINDSPEED_LLM_HOME``, else
    the folder above an importable ``mindspeed_llm`` package (its scripts live beside it)."""
    candidates = [given, os.environ.get(HOME_ENV)]
    try:
        spec = find_spec("mindspeed_llm")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        candidates.append(str(Path(spec.origin).parent.parent))
    for candidate in candidates:
        if candidate:
            return Path(os.path.expanduser(candidate))
    return None


def check_home(home: Path | None) -> Path:
    if home is None:
        raise PT_MINDSPEED.error(
            f"no MindSpeed-LLM checkout: pass --mindspeed-home PATH or set {HOME_ENV}", location="mindspeed_home"
        )
    missing = [name for name in (*HOME_FILES, "mindspeed_llm", "megatron") if not (home / name).exists()]
    if missing:
        raise PT_MINDSPEED.error(
            f"{str(home)!r} is not a usable MindSpeed-LLM checkout: it has no {', '.join(missing)}"
            + (
                " (copy megatron/ in from Megatron-LM, as MindSpeed-LLM's install guide says)"
                if "megatron" in missing
                else ""
            ),
            location="mindspeed_home",
        )
    return home


def require_mindspeed(what: str, home: str | None = None) -> Path:
    """The MindSpeed-LLM checkout to run ``what`` from, on an Ascend machine; OM-PT001 otherwise.

    Cheap checks first (no import): torch_npu, MindSpeed and the checkout; then whether torch_npu
    sees an NPU (through :func:`openmind.pt.device.npu_available`, which never breaks ``import torch``).
    """
    if find_spec("torch_npu") is None:
        raise PT_MINDSPEED.error(f"{what} needs Ascend: torch_npu is not installed (pip install torch-npu, with CANN)")
    if find_spec("mindspeed") is None:
        raise PT_MINDSPEED.error(
            f"{what} needs Ascend: MindSpeed is not installed (git clone MindSpeed; pip install -e MindSpeed)"
        )
    path = check_home(find_home(home))
    from openmind.pt.device import npu_available

    if not npu_available():
        raise PT_MINDSPEED.error(f"{what} needs Ascend: torch_npu is installed but sees no NPU (CANN, drivers)")
    return path
