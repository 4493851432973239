"""Rules shared by the built-in dialects (both build on transformers' TrainingArguments)."""

from __future__ import annotations

from typing import Any

from openmind.core.compat.reference_keys import HF_TRAINING
from openmind.core.dialects import Ignore, Map, Unsupported


def drop_none(target: str, note: str = "null means openmind's default") -> Map:
    """Rename; a null value means "the default" and is dropped."""
    return Map(None, lambda v: {} if v is None else {target: v}, note)


def _precision(kind: str):
    return lambda v: {"mixed_precision": kind} if _truthy(v) else {}


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "on")
    return bool(value)


def _resume(value: Any) -> dict[str, Any]:
    if value is None or value is False or (isinstance(value, str) and value.lower() in ("", "false", "none", "null")):
        return {}
    if value is True or (isinstance(value, str) and value.lower() == "true"):
        return {"resume": True}
    raise ValueError(
        "openmind resumes from the newest complete checkpoint of output_dir: "
        "set `resume: true` and `output_dir` to the run folder that holds the checkpoint"
    )


#: transformers' optimizers (``TrainingArguments.optim``) that need a package of their own:
#: (name prefix, module transformers imports, pip distribution).
OPTIMIZER_PACKAGES: tuple[tuple[str, str, str], ...] = (
    ("galore_", "galore_torch", "galore-torch"),
    ("apollo_", "apollo_torch", "apollo-torch"),
    ("lomo", "lomo_optim", "lomo-optim"),
    ("adalomo", "lomo_optim", "lomo-optim"),
    ("grokadamw", "grokadamw", "grokadamw"),
    ("schedule_free_", "schedulefree", "schedulefree"),
    ("stable_adamw", "optimi", "torch-optimi"),
    ("adamw_torch_4bit", "torchao", "torchao"),
    ("adamw_torch_8bit", "torchao", "torchao"),
    ("adamw_anyprecision", "torchdistx", "torchdistx"),
    ("adamw_bnb_8bit", "bitsandbytes", "bitsandbytes"),
    ("adamw_8bit", "bitsandbytes", "bitsandbytes"),
    ("ademamix", "bitsandbytes", "bitsandbytes"),
    ("lion_", "bitsandbytes", "bitsandbytes"),
    ("paged_", "bitsandbytes", "bitsandbytes"),
    ("rmsprop_bnb", "bitsandbytes", "bitsandbytes"),
)


def optimizer_problem(key: str, value: Any) -> str | None:
    """Why the trainer key ``optim: value`` cannot run here (its optimizer's package is not installed),
    or ``None``. Checked before any model is loaded: transformers would fail after loading it."""
    if key != "optim" or not isinstance(value, str):
        return None
    import importlib.util

    name = value.strip().lower()
    for prefix, module, dist in OPTIMIZER_PACKAGES:
        if name.startswith(prefix):
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                return (
                    f"optim {value!r} (a transformers optimizer) needs the {dist!r} package, which is not installed: "
                    f"pip install {dist} (or choose another optim, e.g. adamw_torch)"
                )
            return None
    return None


#: transformers TrainingArguments keys that openmind handles itself (the rest pass through).
TRAINER_RULES = {
    "bf16": Map(None, _precision("bf16"), "openmind's mixed_precision"),
    "fp16": Map(None, _precision("fp16"), "openmind's mixed_precision"),
    "resume_from_checkpoint": Map(None, _resume, "openmind resumes from output_dir's newest complete checkpoint"),
    "do_train": Ignore("`openmind train` always trains"),
    "do_eval": Ignore("evaluation runs whenever there is an evaluation set (val_size or eval_dataset)"),
    "do_predict": Unsupported("run `openmind eval` or `openmind run` on the trained model", False),
    "save_strategy": Unsupported("openmind saves every save_steps steps", "steps"),
    "gradient_checkpointing": Map("gradient_checkpointing"),
    "warmup_ratio": Map("warmup_ratio"),
    "logging_dir": Ignore("openmind writes its logs into output_dir"),
    "fsdp": Map("fsdp", lambda v: " ".join(map(str, v)) if isinstance(v, (list, tuple)) else v),
}

#: keys passed to the trainer unchanged: every transformers TrainingArguments field (-> its default).
PASSTHROUGH = dict(HF_TRAINING)
