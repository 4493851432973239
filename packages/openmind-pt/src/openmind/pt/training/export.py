"""``openmind export``: merge a LoRA adapter into its base and write sharded safetensors, the
tokenizer and the chat template, so the folder is a plain model any tool loads."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from openmind.core.training.errors import T_EXPORT


def _adapter_folder(path: str) -> Path:
    folder = Path(os.path.expanduser(path))
    if not (folder / "adapter_config.json").is_file():
        raise T_EXPORT.error(
            f"{str(folder)!r} holds no LoRA adapter (adapter_config.json); a full fine-tuning run folder is a "
            "model already: pass it as --model without --adapter",
            location="adapter",
        )
    return folder


def export_model(args: Any) -> Path:
    from transformers import AutoModelForCausalLM

    from openmind.nlp.pipelines.model import resolve_model_dir
    from openmind.pt.device import resolve_dtype
    from openmind.pt.pipelines.loading import _load_error, load_adapter, load_tokenizer, safetensors_kwargs
    from openmind.pt.training.model import _options

    m, e = args.model, args.export
    out = Path(e.out)
    if out.exists() and any(out.iterdir()):
        raise T_EXPORT.error(f"export folder {str(out)!r} is not empty", location="out")
    base = resolve_model_dir(m.model, allow_pickle=m.allow_pickle, revision=m.revision, hub=m.hub).path
    adapter = _adapter_folder(m.adapter) if m.adapter else None
    if adapter is not None:
        declared = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8")).get(
            "base_model_name_or_path"
        )
        if declared and Path(declared).exists() and Path(declared).resolve() != Path(base).resolve():
            from openmind.core.logs import logger

            logger.warning("adapter %s was trained on %s, exporting onto %s", adapter, declared, base)
    dtype = resolve_dtype("float32" if e.export_dtype == "auto" else e.export_dtype, "cpu")
    if e.export_dtype == "auto":
        cfg = json.loads((Path(base) / "config.json").read_text(encoding="utf-8"))
        name = cfg.get("dtype") or cfg.get("torch_dtype")
        if name in ("float16", "bfloat16", "float32"):
            dtype = resolve_dtype(name, "cpu")
    from openmind.pt.training.vl import is_vision_language

    vision_language = is_vision_language(base)
    auto = AutoModelForCausalLM
    if vision_language:  # the whole VLM (vision tower, projector, language model), merged
        from transformers import AutoModelForImageTextToText as auto
    try:
        model = auto.from_pretrained(
            base, dtype=dtype, trust_remote_code=m.trust_remote_code, **safetensors_kwargs(base, m.allow_pickle)
        )
    except (OSError, ValueError, RuntimeError, KeyError, TypeError) as exc:
        raise _load_error(exc, "model", base) from exc
    if adapter is not None:
        model = load_adapter(model, str(adapter), "default", allow_pickle=m.allow_pickle)
        model = model.merge_and_unload()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True, max_shard_size=e.max_shard_size)
    # the tokenizer (and its chat template) of the run when it has one, else of the base
    source = str(adapter) if adapter is not None and (adapter / "tokenizer_config.json").is_file() else base
    tokenizer = load_tokenizer(source, _options(args, "chat"))
    tokenizer.save_pretrained(out)
    names = ["chat_template.jinja", "openmind_template.txt", "generation_config.json"]
    if vision_language:  # the image processor of the run when it has one, else of the base
        names += ["preprocessor_config.json", "processor_config.json", "video_preprocessor_config.json"]
    for name in names:
        src = Path(source) / name
        if not src.is_file() and name.endswith("processor_config.json"):
            src = Path(base) / name
        if src.is_file() and not (out / name).is_file():
            shutil.copy(src, out / name)
    return out
