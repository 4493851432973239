"""openMind 1.0's / transformers' ``pipeline()`` keywords on openmind's ``pipeline()``.

:func:`normalise` runs in :func:`openmind.core.api.pipeline` before anything is loaded:

* ``torch_dtype`` / ``dtype`` as a string or a ``torch.dtype`` -> ``dtype="float16"`` ...;
* ``device`` as an int (transformers: ``0`` is ``cuda:0``, ``-1`` the CPU), a ``torch.device`` or
  ``"npu:0"``; ``device_map="auto"|"cpu"|"cuda:0"`` -> ``device``;
* ``model_kwargs={...}``: its ``torch_dtype``/``dtype``/``device_map``/``trust_remote_code``/
  ``revision``/``cache_dir`` are taken as the same keywords;
* ``backend="transformers"|"diffusers"`` -> ``framework="pt"``; ``"mindformers"|"mindnlp"|"mindone"``
  -> ``framework="ms"``;
* ``framework="pytorch"|"mindspore"`` (1.0's spelling) -> ``pt``/``ms``;
* ``model`` / ``tokenizer`` given as objects (``save_pretrained``) are written once to a folder
  under the openmind cache, keyed by content, and loaded from there;
* ``cache_dir`` with a hub id downloads into ``cache_dir/<org>--<name>``; ``config`` (a config
  object or path) must be the model's own (the model folder's config.json is what loads).

Anything that cannot be honoured is a coded error naming the keyword (never a crash inside).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from openmind.core.errors import A_BAD_VALUE

_DTYPES = {
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "auto": "auto",
}
_BACKENDS = {"transformers": "pt", "diffusers": "pt", "mindformers": "ms", "mindnlp": "ms", "mindone": "ms"}
_MODEL_KWARGS = ("torch_dtype", "dtype", "device_map", "trust_remote_code", "revision", "cache_dir", "allow_pickle")


def dtype_name(value: Any, key: str = "dtype") -> str:
    """``"float16"`` for ``torch.float16``, ``"fp16"``, ``"torch.float16"`` ...; OM-A002 otherwise."""
    if value is None:
        return "auto"
    text = str(value).lower().removeprefix("torch.")
    if text in _DTYPES:
        return _DTYPES[text]
    raise A_BAD_VALUE.error(
        f"{key}={value!r} is not a supported dtype", hint="Use auto, float32, float16 or bfloat16.", location=key
    )


def device_name(value: Any, key: str = "device") -> str:
    if value is None:
        return "auto"
    if isinstance(value, bool):
        raise A_BAD_VALUE.error(f"{key}={value!r} is not a device", location=key)
    if isinstance(value, int):
        return "cpu" if value < 0 else f"cuda:{value}"
    if isinstance(value, dict):
        raise A_BAD_VALUE.error(
            f"{key} as a per-module mapping is not supported",
            hint="Pass device_map='auto' or a single device ('cpu', 'cuda:0', 'npu:0').",
            location=key,
        )
    text = str(value)  # torch.device('cuda', 0) -> "cuda:0"
    return "auto" if text in ("auto", "balanced", "sequential") else text


def _save_object(obj: Any, what: str) -> str:
    """Write a model/tokenizer object once (``save_pretrained``) and return its folder."""
    from openmind.core.paths import cache_root

    if not hasattr(obj, "save_pretrained"):
        raise A_BAD_VALUE.error(
            f"{what} must be a folder, a hub id or an object with save_pretrained(), not {type(obj).__name__}",
            location=what,
        )
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix=f"{what}-", dir=_ensure(cache_root() / "objects")))
    save = obj.save_pretrained
    save(str(tmp))
    digest = hashlib.sha256()
    for path in sorted(p for p in tmp.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(tmp)).encode())
        digest.update(path.read_bytes())
    final = tmp.parent / f"{what}-{digest.hexdigest()[:16]}"
    if final.exists():
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    else:
        os.replace(tmp, final)
    return str(final)


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def normalise(model: Any, kwargs: dict[str, Any]) -> Any:
    """Rewrite ``kwargs`` in place to openmind's keywords; returns the model (a folder or hub id)."""
    extra = kwargs.pop("model_kwargs", None) or {}
    if not isinstance(extra, dict):
        raise A_BAD_VALUE.error("model_kwargs must be a mapping", location="model_kwargs")
    unknown = sorted(set(extra) - set(_MODEL_KWARGS))
    if unknown:
        raise A_BAD_VALUE.error(
            f"model_kwargs {', '.join(map(repr, unknown))} not supported",
            hint=f"openmind takes {', '.join(_MODEL_KWARGS)} from model_kwargs.",
            location="model_kwargs",
        )
    for key, value in extra.items():
        kwargs.setdefault(key, value)
    if "torch_dtype" in kwargs:
        torch_dtype = kwargs.pop("torch_dtype")
        if kwargs.get("dtype") in (None, "auto"):
            kwargs["dtype"] = torch_dtype
    if "dtype" in kwargs:
        kwargs["dtype"] = dtype_name(kwargs["dtype"])
    if "device_map" in kwargs:
        device_map = kwargs.pop("device_map")
        if kwargs.get("device") in (None, "auto"):
            kwargs["device"] = device_name(device_map, "device_map")
    if "device" in kwargs:
        kwargs["device"] = device_name(kwargs["device"])
    backend = kwargs.pop("backend", None)
    if backend is not None:
        fw = _BACKENDS.get(str(backend).lower())
        if fw is None:
            raise A_BAD_VALUE.error(f"backend={backend!r} is not one of {', '.join(_BACKENDS)}", location="backend")
        if kwargs.get("framework") in (None, "auto"):
            kwargs["framework"] = fw
    if kwargs.get("framework") is None:
        kwargs.pop("framework", None)
    tokenizer = kwargs.get("tokenizer")
    if tokenizer is not None and not isinstance(tokenizer, (str, os.PathLike)):
        kwargs["tokenizer"] = _save_object(tokenizer, "tokenizer")
    if model is not None and not isinstance(model, (str, os.PathLike)):
        model = _save_object(model, "model")
    cache_dir = kwargs.pop("cache_dir", None)
    if cache_dir is not None and model is not None and not os.path.exists(str(model)):
        from openmind.core.hub import pull

        name = str(model).split("::")[-1].replace("/", "--")
        model = str(
            pull(str(model), revision=kwargs.pop("revision", None), hub=kwargs.pop("hub", None),
                 local_dir=Path(cache_dir) / name)
        )  # fmt: skip
    config = kwargs.pop("config", None)
    if config is not None and model is not None:
        _check_config(config, str(model))
    return model


def _check_config(config: Any, model: str) -> None:
    """1.0 let ``config`` override the model's; openmind loads the folder's own, so a different
    config would be silently ignored: accept only the model's own."""
    if isinstance(config, (str, os.PathLike)):
        path = Path(config)
        path = path / "config.json" if path.is_dir() else path
        try:
            given = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise A_BAD_VALUE.error(
                f"config {str(config)!r} is not a readable config.json", location="config"
            ) from None
    elif hasattr(config, "to_dict"):
        given = config.to_dict()
    else:
        raise A_BAD_VALUE.error(
            f"config must be a path or a config object, not {type(config).__name__}", location="config"
        )
    own_path = Path(model) / "config.json"
    if not own_path.is_file():
        return
    own = json.loads(own_path.read_text(encoding="utf-8"))
    keys = ("model_type", "hidden_size", "num_hidden_layers", "vocab_size", "architectures")
    diff = [k for k in keys if k in given and k in own and given[k] != own[k]]
    if diff:
        raise A_BAD_VALUE.error(
            f"config differs from the model folder's config.json in {', '.join(diff)}",
            hint="openmind loads a model with its own config; save the model with the config you want first.",
            location="config",
        )
