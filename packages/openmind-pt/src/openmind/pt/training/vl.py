"""Vision-language SFT (``mm-sft``) on transformers' ``AutoModelForImageTextToText``: the Qwen2-VL
family (the data preparation knows its visual tokens; the module names below also cover LLaVA-style
models).

The data comes prepared from the plan (openmind-data's multimodal preparation: visual tokens
expanded, labels over assistant turns only, pixel inputs cached); this module loads the model,
applies the finetuning type with the VLM choices (LLaMA-Factory's names)

* ``freeze_vision_tower`` (default true), ``freeze_multi_modal_projector`` (default true),
  ``freeze_language_model`` (default false) for ``full`` / ``freeze``;
* ``lora``: LoRA on the language model's linear layers by default (``lora_target`` names are
  looked up there, and in the vision tower when it is not frozen); a projector (or vision tower)
  that is not frozen is trained fully beside the adapter (peft ``modules_to_save``), so the
  adapter folder holds it and ``openmind export`` merges it;

and trains with the text SFT trainer (atomic checkpoints, loss only where trained, progress,
summary, plot). The run folder also gets the image processor (``preprocessor_config.json``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from openmind.core.training.errors import T_BAD_SETUP
from openmind.pt.training.data import CountingCollator, TrainData
from openmind.pt.training.trainers import CausalLMStageTrainer

#: module names of the parts of a VLM (first found wins), relative to the top model
VISION_NAMES = ("visual", "vision_tower", "vision_model", "vision_encoder")
PROJECTOR_NAMES = ("multi_modal_projector", "merger", "mm_projector", "connector", "aligner")
LANGUAGE_NAMES = ("language_model",)


def is_vision_language(model_dir: str | Path) -> bool:
    """Whether ``model_dir``'s config.json describes a vision-language model (it has a ``vision_config``)."""
    config = Path(model_dir) / "config.json"
    if not config.is_file():
        return False
    try:
        return "vision_config" in json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False


def vl_parts(model: Any) -> dict[str, str | None]:
    """``{"vision": prefix, "projector": prefix, "language": prefix}`` of a VLM's modules."""
    names = [n for n, _ in model.named_modules()]

    def first(keys: tuple[str, ...], inside: str | None = None) -> str | None:
        found = [
            n
            for n in names
            if n.split(".")[-1] in keys and (inside is None or n.startswith(inside + ".") or inside == "")
        ]
        return min(found, key=lambda n: n.count("."), default=None)

    return {"vision": first(VISION_NAMES), "projector": first(PROJECTOR_NAMES), "language": first(LANGUAGE_NAMES)}


def _under(name: str, prefix: str | None) -> bool:
    return bool(prefix) and (name == prefix or name.startswith(prefix + "."))


def set_trainable(model: Any, parts: dict[str, str | None], mm: Any, *, language: bool) -> None:
    """requires_grad by part: the language model (``language``), then the vision tower and the
    projector by their freeze flags (the projector may sit inside the vision tower: Qwen2-VL)."""
    for name, p in model.named_parameters():
        if _under(name, parts["projector"]):
            p.requires_grad = not mm.freeze_multi_modal_projector
        elif _under(name, parts["vision"]):
            p.requires_grad = not mm.freeze_vision_tower
        else:
            p.requires_grad = language


def linear_leaves(model: Any, prefixes: list[str], skip: str | None = None) -> list[str]:
    """Leaf names of the linear layers under ``prefixes`` (not under ``skip``)."""
    import torch

    leaves = set()
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and any(_under(name, p) for p in prefixes) and not _under(name, skip):
            leaves.add(name.split(".")[-1])
    return sorted(leaves)


def apply_vl_finetuning(model: Any, args: Any, mm: Any) -> Any:
    """The finetuning type on a VLM (see the module docstring); returns the model to train."""
    from openmind.core.training.contract import default_lora_alpha
    from openmind.core.training.errors import T_LORA_TARGET

    ft = args.finetuning
    parts = vl_parts(model)
    if parts["language"] is None:
        raise T_BAD_SETUP.error(
            f"{type(model).__name__}: no language_model module found; openmind cannot tell the parts of this "
            "vision-language model apart",
            location="model",
        )
    if args.training.gradient_checkpointing:
        model.config.use_cache = False
    kind = ft.finetuning_type
    if kind == "full":
        set_trainable(model, parts, mm, language=not mm.freeze_language_model)
        return model
    if kind == "freeze":
        set_trainable(model, parts, mm, language=False)
        config = model.config
        total = int(getattr(getattr(config, "text_config", config), "num_hidden_layers", 0) or 0)
        n = ft.freeze_trainable_layers
        if not total or n == 0 or abs(n) > total:
            raise T_BAD_SETUP.error(
                f"freeze_trainable_layers={n}: the language model has {total} layers",
                location="freeze_trainable_layers",
            )
        layers = range(total - n, total) if n > 0 else range(0, -n)
        pattern = re.compile(re.escape(parts["language"]) + r"\.layers\.(" + "|".join(map(str, layers)) + r")\.")
        for name, p in model.named_parameters():
            if pattern.match(name):
                p.requires_grad = True
        return model
    from peft import LoraConfig, get_peft_model

    if args.model.adapter:
        from openmind.pt.pipelines.loading import load_adapter

        model = load_adapter(model, args.model.adapter, "default", allow_pickle=args.model.allow_pickle)
        for name, p in model.named_parameters():
            p.requires_grad = "lora_" in name or "modules_to_save" in name
        model.train()
        return model
    scope = [parts["language"]] + ([parts["vision"]] if not mm.freeze_vision_tower and parts["vision"] else [])
    skip = parts["projector"]  # trained fully when not frozen (modules_to_save), never wrapped by LoRA
    available = linear_leaves(model, scope, skip)
    requested = [t for t in ft.lora_target if t != "all"]
    missing = [t for t in requested if t not in available]
    if missing:
        raise T_LORA_TARGET.error(
            f"lora_target {', '.join(map(repr, missing))} not found in the trained parts of {type(model).__name__}; "
            f"their linear layers are: {', '.join(available)}",
            location="lora_target",
        )
    leaves = requested or available
    scope_re = "|".join(re.escape(s) for s in scope)
    lookahead = rf"(?!{re.escape(skip)}\.)" if skip else ""
    target = rf"^{lookahead}(?:{scope_re})\..*\.(?:{'|'.join(map(re.escape, leaves))})$"
    save = [skip] if skip and not mm.freeze_multi_modal_projector else []
    config = LoraConfig(
        r=ft.lora_rank,
        lora_alpha=default_lora_alpha(ft.lora_rank, ft.lora_alpha),
        lora_dropout=ft.lora_dropout,
        target_modules=target,
        modules_to_save=save or None,
        use_dora=ft.use_dora,
        use_rslora=ft.use_rslora,
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, config)
    if args.training.gradient_checkpointing:
        model.enable_input_require_grads()
    return model


class VLCollator:
    """Pads ``input_ids``/``labels`` (+ ``attention_mask``) and concatenates the media arrays of
    the batch (``pixel_values``, ``image_grid_thw`` ... restored from their ``*_shape`` columns)."""

    def __init__(self, tokenizer: Any, keys: list[str], token_types: dict[int, int] | None = None) -> None:
        from openmind.pt.training.adapters import torch_collator

        self.text = torch_collator(tokenizer)
        self.keys = keys
        #: token id -> modality type (1 image, 2 video, 3 audio): ``mm_token_type_ids`` as the model's
        #: processor builds it (Qwen2-VL's M-RoPE needs it); None for models that do not take it
        self.token_types = token_types

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        import numpy as np
        import torch

        batch = self.text(features)
        if self.token_types:
            ids = batch["input_ids"]
            types = torch.zeros_like(ids)
            for token, kind in self.token_types.items():
                types[ids == token] = kind
            batch["mm_token_type_ids"] = types
        for key in self.keys:
            parts = [
                np.asarray(f[key]).reshape([int(x) for x in f[f"{key}_shape"]])
                for f in features
                if len(f[f"{key}_shape"]) and len(f[key])
            ]
            if parts:
                array = np.concatenate(parts, axis=0)
                batch[key] = torch.from_numpy(array) if array.dtype.kind == "f" else torch.from_numpy(array).long()
        return batch


def multimodal_args(args: Any) -> Any:
    """The ``multimodal`` argument group (registered by openmind-mm with the ``mm-sft`` task)."""
    try:
        return args.multimodal
    except AttributeError:
        from openmind.core.lazy import import_string

        return import_string("openmind.mm.training.wrapper:multimodal_args", requires=("openmind-mm",))(args)


def token_types(model: Any) -> dict[int, int] | None:
    """``{image token id: 1, video: 2, audio: 3}`` when the model's forward takes ``mm_token_type_ids``."""
    import inspect

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    if "mm_token_type_ids" not in inspect.signature(base.forward).parameters:
        return None
    config = base.config
    out = {}
    for kind, names in (
        (1, ("image_token_id", "image_token_index")),
        (2, ("video_token_id",)),
        (3, ("audio_token_id",)),
    ):
        for name in names:
            value = getattr(config, name, None)
            if isinstance(value, int):
                out[value] = kind
                break
    return out


class VLSFTTrainer(CausalLMStageTrainer):
    """``mm-sft`` on transformers (see the module docstring)."""

    stage = "mm-sft"
    finetuning_types = ("full", "freeze", "lora")

    def check(self) -> None:
        if self.hf is not None:
            return
        from openmind.core.training.layout import is_main_process
        from openmind.pt.training.model import load_tokenizer_and_template

        self.check_supported()
        self._check_arguments()
        self.resume_from = self._find_resume()
        self.loaded = load_tokenizer_and_template(self.args, "sft", self.plan)
        if not is_vision_language(self.loaded.model_dir):
            raise T_BAD_SETUP.error(
                f"{self.loaded.model_dir!r} is not a vision-language model (its config.json has no vision_config); "
                "train text models with --stage sft",
                location="model",
            )
        self.plan.model_dir = self.loaded.model_dir
        # data before weights: a data problem is reported without loading the model
        prepared = self.plan.prepare_data(self.loaded.tokenizer, self.loaded.template, quiet=not is_main_process())
        keys = [c[: -len("_shape")] for c in prepared.train.column_names if c.endswith("_shape")]
        collator = CountingCollator(VLCollator(self.loaded.tokenizer, keys))
        self.data = TrainData(prepared.train, prepared.eval, dict(prepared.stats), collator, self.loaded.tokenizer)
        self.loaded.model = self.load_model()
        model = self.loaded.model
        collator.inner.token_types = token_types(model)
        self.loaded.trainable_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
        self.loaded.total_params = sum(p.numel() for p in model.parameters())
        if not self.loaded.trainable_params:
            raise T_BAD_SETUP.error(
                "no parameter is left to train (check the freeze_* flags)", location="finetuning_type"
            )
        self.hf = self.build_trainer()

    def load_model(self) -> Any:
        from transformers import AutoModelForImageTextToText, set_seed

        from openmind.pt.pipelines.loading import _load_error, safetensors_kwargs
        from openmind.pt.training.model import train_dtype

        set_seed(self.args.training.seed)
        m, model_dir = self.args.model, self.loaded.model_dir
        try:
            model = AutoModelForImageTextToText.from_pretrained(
                model_dir,
                dtype=train_dtype(self.args, self.loaded.device),
                trust_remote_code=m.trust_remote_code,
                **safetensors_kwargs(model_dir, m.allow_pickle),
            )
        except (OSError, ValueError, RuntimeError, KeyError, TypeError) as exc:
            raise _load_error(exc, "model", model_dir) from exc
        return apply_vl_finetuning(model, self.args, multimodal_args(self.args))

    def save_final(self) -> None:
        super().save_final()
        processor = getattr(self.plan, "image_processor", None)
        if processor is not None and self.hf.is_world_process_zero():
            processor.save_pretrained(self.args.training.output_dir)
