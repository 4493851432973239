"""Model, tokenizer and template for training, and the finetuning types (full, freeze, lora, qlora).

Every check that can fail is done here, before the first step, with a coded error:
template/tokenizer mismatch (OM-T002), LoRA targets absent from the model (OM-T004), qlora
without CUDA or bitsandbytes (OM-T005), freeze layers out of range (OM-T008).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any

from openmind.core.logs import logger
from openmind.core.training.contract import default_lora_alpha
from openmind.core.training.errors import T_BAD_SETUP, T_LORA_TARGET, T_QLORA


@dataclass
class Loaded:
    model: Any
    tokenizer: Any
    template: Any
    model_dir: str
    device: str
    #: model group matched from config.json (None when none matched)
    group: Any = None
    trainable_params: int = 0
    total_params: int = 0


def _options(args: Any, task: str):
    from openmind.nlp.pipelines.base import LoadOptions

    m = args.model
    return LoadOptions(
        task=task,
        device=m.device,
        dtype=m.dtype,
        trust_remote_code=m.trust_remote_code,
        allow_pickle=m.allow_pickle,
    )


def match_group(model_dir: str, name: str | None = None):
    """The model group of ``model_dir`` (or the one named), None when nothing matches."""
    from openmind.core.errors import OpenMindError

    try:
        from openmind.nlp.templates.matching import match_model_dir
        from openmind.nlp.templates.matching import model_group as named_group
    except ImportError:  # pragma: no cover - older openmind-nlp
        return None
    try:
        return named_group(name) if name else match_model_dir(model_dir)
    except OpenMindError:
        if name:
            raise
        return None


def load_template(args: Any, model_dir: str, tokenizer: Any, stage: str, plan: Any = None):
    """The template for ``stage`` (``pt`` trains on plain text and needs none), checked against
    the tokenizer by the plan (OM-T002, the framework-neutral check of the trainer wrapper)."""
    from openmind.core.errors import OpenMindError
    from openmind.nlp.templates import resolve_template

    t = args.template
    try:
        template = resolve_template(
            t.template, model_dir=model_dir, tokenizer=tokenizer, model_group=args.model.model_group
        )
    except OpenMindError:
        if stage == "pt":
            return None
        raise
    if plan is not None:
        plan.check_template(template, tokenizer)
    else:
        check_template(template, tokenizer)
    return template


def check_template(template: Any, tokenizer: Any) -> None:
    """OM-T002 (moved: :func:`openmind.nlp.training.base.check_template`, run through the plan)."""
    from openmind.nlp.training.base import check_template as check

    check(template, tokenizer)


def load_tokenizer_and_template(args: Any, stage: str, plan: Any = None) -> Loaded:
    """Tokenizer and template (enough to prepare the data); the model comes in :func:`load_model_into`."""
    from openmind.nlp.pipelines.model import resolve_model_dir
    from openmind.pt.device import resolve_device
    from openmind.pt.pipelines.loading import load_tokenizer

    m, ft = args.model, args.finetuning
    folder = resolve_model_dir(m.model, allow_pickle=m.allow_pickle, revision=m.revision, hub=m.hub)
    model_dir = folder.path
    tokenizer = load_tokenizer(model_dir, _options(args, "chat"), padding_side="right")
    if tokenizer.pad_token_id is None:
        # the collators mask padding with the attention mask / -100 labels, so EOS is a safe filler
        tokenizer.pad_token = tokenizer.eos_token
    template = load_template(args, model_dir, tokenizer, stage, plan)
    device = resolve_device(m.device)
    if ft.finetuning_type == "qlora":
        check_qlora(device)
    group = match_group(model_dir, m.model_group)
    if ft.finetuning_type in ("lora", "qlora") and ft.lora_target and not m.adapter:
        check_lora_names(model_dir, ft.lora_target)
    return Loaded(None, tokenizer, template, model_dir, device, group)


def load_model_into(loaded: Loaded, args: Any, stage: str) -> Loaded:
    """Load the model of ``loaded`` and apply the finetuning type."""
    from transformers import set_seed

    # seeded here, not only by the Trainer (which seeds later): LoRA matrices and value heads are
    # initialised now, and without this a run's result depended on what the process did before
    set_seed(args.training.seed)
    model = load_model(args, loaded.model_dir, stage, loaded.device)
    model = apply_finetuning(model, args, stage, loaded.group)
    loaded.model = model
    loaded.trainable_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    loaded.total_params = sum(p.numel() for p in model.parameters())
    logger.info(
        "trainable parameters: %d / %d (%.2f%%)",
        loaded.trainable_params,
        loaded.total_params,
        100.0 * loaded.trainable_params / max(loaded.total_params, 1),
    )
    return loaded


def load_for_training(args: Any, stage: str) -> Loaded:
    """Load tokenizer, template and model for ``stage`` and apply the finetuning type."""
    return load_model_into(load_tokenizer_and_template(args, stage), args, stage)


def check_lora_names(model_dir: str, targets: list[str]) -> None:
    """OM-T004 before any weight is loaded: build the model on the meta device and look for the names."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    try:
        config = AutoConfig.from_pretrained(model_dir)
        with torch.device("meta"):
            skeleton = AutoModelForCausalLM.from_config(config)
    except Exception:  # noqa: BLE001 - unusual models are checked after loading instead
        return
    lora_targets(skeleton, targets, None)


def check_qlora(device: str) -> None:
    if not device.startswith("cuda"):
        raise T_QLORA.error(
            f"finetuning_type qlora quantises the base weights with bitsandbytes, which needs a CUDA device; "
            f"this run is on {device!r}",
            location="finetuning_type",
        )
    if find_spec("bitsandbytes") is None:
        raise T_QLORA.error("finetuning_type qlora needs the bitsandbytes package", location="finetuning_type")


def train_dtype(args: Any, device: str):
    """Weights dtype: fp32 master weights for full/freeze (mixed precision casts on the fly),
    the device's half precision for frozen LoRA bases unless ``dtype`` is given."""
    from openmind.pt.device import import_torch, resolve_dtype

    torch = import_torch()
    if args.model.dtype != "auto":
        return resolve_dtype(args.model.dtype, device)
    if args.finetuning.finetuning_type in ("lora", "qlora") and not device.startswith("cpu"):
        return resolve_dtype("auto", device)
    return torch.float32


def load_model(args: Any, model_dir: str, stage: str, device: str):
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification

    from openmind.pt.pipelines.loading import _load_error, safetensors_kwargs

    m, ft = args.model, args.finetuning
    kwargs: dict[str, Any] = dict(
        dtype=train_dtype(args, device),
        trust_remote_code=m.trust_remote_code,
        **safetensors_kwargs(model_dir, m.allow_pickle),
    )
    if ft.finetuning_type == "qlora":
        import torch
        from transformers import BitsAndBytesConfig

        bits = ft.quantization_bit or 4
        kwargs["quantization_config"] = (
            BitsAndBytesConfig(
                load_in_4bit=True,
                bnb_4bit_quant_type="nf4",
                bnb_4bit_use_double_quant=True,
                bnb_4bit_compute_dtype=kwargs["dtype"] if kwargs["dtype"] != torch.float32 else torch.bfloat16,
            )
            if bits == 4
            else BitsAndBytesConfig(load_in_8bit=True)
        )
        kwargs["device_map"] = {"": device}
    auto = AutoModelForSequenceClassification if stage == "rm" else AutoModelForCausalLM
    if stage == "rm":
        kwargs["num_labels"] = 1
    try:
        model = auto.from_pretrained(model_dir, **kwargs)
    except (OSError, ValueError, RuntimeError, KeyError, TypeError) as exc:
        raise _load_error(exc, "model", model_dir) from exc
    if stage == "rm" and model.config.pad_token_id is None:
        model.config.pad_token_id = model.config.eos_token_id
    if ft.finetuning_type == "qlora":
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=args.training.gradient_checkpointing)
    return model


def linear_names(model: Any) -> list[str]:
    """Leaf names of the linear layers LoRA can target (the output head excluded)."""
    import torch

    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    names = set()
    for name, module in model.named_modules():
        if module is head or name.split(".")[-1] in ("lm_head", "score", "classifier"):
            continue
        if isinstance(module, torch.nn.Linear) or type(module).__name__ in ("Linear4bit", "Linear8bitLt"):
            names.add(name.split(".")[-1])
    return sorted(names)


def lora_targets(model: Any, requested: list[str], group: Any) -> list[str]:
    requested = list(requested)
    available = linear_names(model)
    if not requested or requested == ["all"]:
        from_group = list(getattr(group, "lora_targets", ()) or ())
        if from_group and all(t in available for t in from_group):
            return from_group
        return available
    all_names = {name for name, _ in model.named_modules()}
    leaves = {name.split(".")[-1] for name in all_names}
    missing = [t for t in requested if t not in leaves and t not in all_names]
    if missing:
        raise T_LORA_TARGET.error(
            f"lora_target {', '.join(repr(t) for t in missing)} not found in {type(model).__name__}; "
            f"its linear layers are: {', '.join(available)}",
            location="lora_target",
        )
    return requested


def decoder_layer_count(model: Any) -> int:
    config = model.config
    n = getattr(config, "num_hidden_layers", None) or getattr(getattr(config, "text_config", None), "num_layers", None)
    if not n:
        raise T_BAD_SETUP.error(f"cannot tell the number of layers of {type(model).__name__} for freeze training")
    return int(n)


def apply_freeze(model: Any, n: int) -> None:
    total = decoder_layer_count(model)
    if n == 0 or abs(n) > total:
        raise T_BAD_SETUP.error(
            f"freeze_trainable_layers={n}: the model has {total} layers (use 1..{total} for the last N, "
            f"-1..-{total} for the first N)",
            location="freeze_trainable_layers",
        )
    layers = range(total - n, total) if n > 0 else range(0, -n)
    pattern = re.compile(r"\.layers\.(" + "|".join(str(i) for i in layers) + r")\.")
    matched = 0
    for name, param in model.named_parameters():
        param.requires_grad = bool(pattern.search(name))
        matched += param.requires_grad
    if not matched:
        raise T_BAD_SETUP.error(
            f"freeze training found no parameters named '*.layers.<i>.*' in {type(model).__name__}",
            location="finetuning_type",
        )


def apply_finetuning(model: Any, args: Any, stage: str, group: Any):
    ft, training = args.finetuning, args.training
    kind = ft.finetuning_type
    if training.gradient_checkpointing:
        model.config.use_cache = False
    if kind == "full":
        for p in model.parameters():
            p.requires_grad = True
        return model
    if kind == "freeze":
        apply_freeze(model, ft.freeze_trainable_layers)
        if stage == "rm":  # the new value head must learn
            for name, p in model.named_parameters():
                if name.startswith("score."):
                    p.requires_grad = True
        return model
    from peft import LoraConfig, PeftModel, TaskType

    if args.model.adapter:
        from openmind.pt.pipelines.loading import load_adapter

        model = load_adapter(model, args.model.adapter, "default", allow_pickle=args.model.allow_pickle)
        for name, p in model.named_parameters():
            p.requires_grad = "lora_" in name
        model.train()
        return model
    targets = lora_targets(model, ft.lora_target, group)
    config = LoraConfig(
        r=ft.lora_rank,
        lora_alpha=default_lora_alpha(ft.lora_rank, ft.lora_alpha),
        lora_dropout=ft.lora_dropout,
        target_modules=targets,
        use_dora=ft.use_dora,
        use_rslora=ft.use_rslora,
        task_type=TaskType.SEQ_CLS if stage == "rm" else TaskType.CAUSAL_LM,
    )
    from peft import get_peft_model

    model = get_peft_model(model, config)
    if training.gradient_checkpointing:
        model.enable_input_require_grads()
    assert isinstance(model, PeftModel)
    return model
