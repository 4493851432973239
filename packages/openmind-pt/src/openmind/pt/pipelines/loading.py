"""Loading tokenizers, models and LoRA adapters with openmind's security defaults.

* ``trust_remote_code`` is off unless asked for (OM-M105 says so when a model needs it);
* safetensors are loaded when present; pickle weights only with ``allow_pickle`` (OM-M102);
* failures become coded errors naming the folder (OM-M101, OM-M103, OM-M104, OM-M106).
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

from openmind.core.pipelines.base import LoadOptions
from openmind.core.pipelines.model import PICKLE_WEIGHTS, SAFE_WEIGHTS
from openmind.nlp.errors import M_ADAPTER, M_LOAD, M_NO_TOKENIZER, M_PICKLE, M_REMOTE_CODE, M_WRONG_HEAD
from openmind.pt.device import resolve_device, resolve_dtype

#: task -> architecture name endings that have the head the task needs
TASK_HEADS = {
    "chat": ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration"),
    "text-generation": ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration"),
    "summarization": ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration"),
    "translation": ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration"),
    "text-classification": ("ForSequenceClassification",),
    "token-classification": ("ForTokenClassification",),
    "fill-mask": ("ForMaskedLM", "ForPreTraining"),
}


def dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def check_head(config: dict[str, Any], task: str, model_dir: str) -> None:
    """OM-M106 when ``config.json`` names architectures and none has the head ``task`` needs."""
    heads = TASK_HEADS.get(task)
    archs = config.get("architectures") or []
    if heads and archs and not any(a.endswith(h) for a in archs for h in heads):
        raise M_WRONG_HEAD.error(
            f"{model_dir!r} is a {', '.join(archs)}, which has no {task} head (needs *{' or *'.join(heads)})",
            location=os.path.join(model_dir, "config.json"),
        )


def check_model_files(folder: str | os.PathLike) -> None:
    """OM-M101 naming the file for a model folder that cannot load: ``config.json`` that is not JSON or
    has values of the wrong type, a ``*.safetensors`` file shorter than its own header says.

    Reads only ``config.json`` and each safetensors header (bounded: the header, never the tensors).
    """
    folder = Path(folder)
    if not folder.is_dir():
        return
    config = folder / "config.json"
    if config.is_file():
        try:
            json.loads(config.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            line = getattr(exc, "lineno", None)
            raise M_LOAD.error(
                f"{config.name} is not valid JSON: {getattr(exc, 'msg', exc)}",
                location=f"{config}:{line}" if line else str(config),
            ) from None
        try:
            from huggingface_hub.errors import StrictDataclassError
        except ImportError:  # pragma: no cover - older huggingface_hub: no strict configs
            StrictDataclassError = ()  # noqa: N806
        try:
            from transformers import AutoConfig

            AutoConfig.from_pretrained(str(folder))
        except StrictDataclassError as exc:
            field = getattr(exc, "field", None) or ""
            detail = str(exc.__cause__ or exc).splitlines()[-1].strip()
            raise M_LOAD.error(
                f"{config.name}: {detail}",
                location=f"{config} field {field!r}" if field else str(config),
                hint="Fix the value in config.json (compare with the model's original config.json).",
            ) from None
        except Exception:  # noqa: BLE001 - other problems (remote code, unknown types) are reported at load
            pass
    for weights in sorted(folder.glob("*.safetensors")):
        check_safetensors(weights)


def check_safetensors(path: Path) -> None:
    """OM-M101 when ``path`` is shorter (or longer) than its header says: a truncated download or copy."""
    size = path.stat().st_size
    problem = ""
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            problem = f"{size} bytes, too short for a safetensors header"
        else:
            (n,) = struct.unpack("<Q", head)
            if n > size - 8 or n > 100_000_000:
                problem = f"header claims {n} bytes but the file has {size}"
            else:
                try:
                    header = json.loads(fh.read(n))
                    end = max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)
                except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError):
                    problem = "its header is not valid safetensors JSON"
                else:
                    if 8 + n + end != size:
                        problem = f"{size} bytes, its header describes {8 + n + end} (truncated or damaged)"
    if problem:
        raise M_LOAD.error(
            f"weights file {path.name} is damaged: {problem}",
            location=str(path),
            hint="Download or copy the model again (`openmind pull` verifies files).",
        )


def has_weights(folder: str | os.PathLike, patterns: tuple[str, ...]) -> bool:
    return any(any(Path(folder).glob(p)) for p in patterns)


def safetensors_kwargs(folder: str | os.PathLike, allow_pickle: bool) -> dict[str, Any]:
    """``use_safetensors`` for ``from_pretrained``: required unless pickle is explicitly allowed."""
    if has_weights(folder, SAFE_WEIGHTS):
        return {"use_safetensors": True}
    if has_weights(folder, PICKLE_WEIGHTS) and not allow_pickle:
        raise M_PICKLE.error(f"{str(folder)!r} has only pickle weights", location=str(folder))
    if has_weights(folder, PICKLE_WEIGHTS):
        return {"use_safetensors": False}  # allowed: transformers would otherwise insist on safetensors
    return {"use_safetensors": True}


def _load_error(exc: BaseException, what: str, where: str):
    text = str(exc)
    if "trust_remote_code" in text:
        return M_REMOTE_CODE.error(f"{what} {where!r} needs its own code: {text.splitlines()[0]}", location=where)
    if "Unrecognized configuration class" in text or "Unrecognized model" in text:
        return M_WRONG_HEAD.error(f"{what} {where!r}: {text.splitlines()[0]}", location=where)
    return M_LOAD.error(
        f"cannot load {what} {where!r}: {type(exc).__name__}: {text.splitlines()[0] if text else ''}", location=where
    )


def load_tokenizer(model_dir: str, options: LoadOptions, *, padding_side: str = "right") -> Any:
    from transformers import AutoTokenizer

    source = options.tokenizer or model_dir
    check_model_files(source)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=options.trust_remote_code)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        if "trust_remote_code" in str(exc):
            raise _load_error(exc, "tokenizer", source) from exc
        raise M_NO_TOKENIZER.error(
            f"cannot load a tokenizer from {source!r}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
            location=source,
        ) from exc
    tokenizer.padding_side = padding_side
    return tokenizer


def load_model(model_dir: str, auto_class: Any, options: LoadOptions, **kwargs: Any) -> tuple[Any, str, Any]:
    """``(model, device, dtype)``: ``auto_class.from_pretrained`` on the resolved device/dtype, in eval
    mode, with ``options.adapter`` applied."""
    check_model_files(model_dir)
    device = resolve_device(options.device)
    dtype = resolve_dtype(options.dtype, device)
    try:
        model = auto_class.from_pretrained(
            model_dir,
            dtype=dtype,
            trust_remote_code=options.trust_remote_code,
            **safetensors_kwargs(model_dir, options.allow_pickle),
            **kwargs,
        )
    except (OSError, ValueError, RuntimeError, KeyError, TypeError) as exc:
        raise _load_error(exc, "model", model_dir) from exc
    model.to(device)
    model.eval()
    if options.adapter:
        model = load_adapter(model, options.adapter, "default", allow_pickle=options.allow_pickle)
    return model, device, dtype


def load_adapter(model: Any, path: str, name: str, *, allow_pickle: bool = False) -> Any:
    """Apply the LoRA adapter in ``path`` (peft) under ``name``; returns the peft model."""
    folder = Path(os.path.expanduser(path))
    if not (folder / "adapter_config.json").is_file():
        raise M_ADAPTER.error(f"{str(folder)!r} has no adapter_config.json", location=str(folder))
    if not (folder / "adapter_model.safetensors").is_file():
        if (folder / "adapter_model.bin").is_file() and not allow_pickle:
            raise M_PICKLE.error(f"adapter {str(folder)!r} has only pickle weights (adapter_model.bin)")
        if not (folder / "adapter_model.bin").is_file():
            raise M_ADAPTER.error(f"{str(folder)!r} has no adapter_model.safetensors", location=str(folder))
    try:
        from peft import PeftModel
    except ImportError as exc:
        raise M_ADAPTER.error("loading a LoRA adapter needs peft", hint='Install it: pip install "peft"') from exc
    try:
        if isinstance(model, PeftModel):
            model.load_adapter(str(folder), adapter_name=name, is_trainable=False)
        else:
            model = PeftModel.from_pretrained(model, str(folder), adapter_name=name, is_trainable=False)
    except (OSError, ValueError, RuntimeError, KeyError) as exc:
        raise M_ADAPTER.error(
            f"cannot apply adapter {str(folder)!r}: {type(exc).__name__}: {str(exc).splitlines()[0]}",
            location=str(folder),
        ) from exc
    model.eval()
    return model
