"""Hugging Face <-> mindformers translation: model configs, checkpoint names, training arguments,
and the ``msrun`` command line. Pure data transformations (numpy, no mindformers import), so they
are unit-tested on any machine; only running them needs Ascend.

Names follow mindformers' own converters (``mindformers/models/llama/convert_weight.py``):
``model.layers.0.self_attn.q_proj.weight`` <-> ``model.layers.0.attention.wq.weight`` and so on.
"""

from __future__ import annotations

import os
import re
from typing import Any

from openmind.core.training.contract import default_lora_alpha
from openmind.ms.errors import MS_CONFIG, MS_UNSUPPORTED_MODEL

#: model_type -> mindformers model config / model class
ARCHITECTURES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM"),
    "mistral": ("LlamaConfig", "LlamaForCausalLM"),
    "yi": ("LlamaConfig", "LlamaForCausalLM"),
    "qwen2": ("LlamaConfig", "LlamaForCausalLM"),
}
#: Hugging Face name fragment -> mindformers name fragment (applied in this order)
NAME_MAP = (
    ("model.embed_tokens.weight", "model.tok_embeddings.embedding_weight"),
    (".self_attn.q_proj.", ".attention.wq."),
    (".self_attn.k_proj.", ".attention.wk."),
    (".self_attn.v_proj.", ".attention.wv."),
    (".self_attn.o_proj.", ".attention.wo."),
    (".mlp.gate_proj.", ".feed_forward.w1."),
    (".mlp.down_proj.", ".feed_forward.w2."),
    (".mlp.up_proj.", ".feed_forward.w3."),
    (".input_layernorm.", ".attention_norm."),
    (".post_attention_layernorm.", ".ffn_norm."),
    ("model.norm.weight", "model.norm_out.weight"),
)
#: openmind LoRA target names -> mindformers' (regex over its cell names)
LORA_TARGETS = {
    "q_proj": "wq",
    "k_proj": "wk",
    "v_proj": "wv",
    "o_proj": "wo",
    "gate_proj": "w1",
    "down_proj": "w2",
    "up_proj": "w3",
}
COMPUTE_DTYPES = {"auto": "float16", "float16": "float16", "bfloat16": "bfloat16", "float32": "float32"}


def hf_to_mf_name(name: str) -> str:
    for hf, mf in NAME_MAP:
        name = name.replace(hf, mf)
    return name


def mf_to_hf_name(name: str) -> str:
    for hf, mf in reversed(NAME_MAP):
        name = name.replace(mf, hf)
    return name


def translate_state(state: dict[str, Any], *, to: str = "mindformers") -> dict[str, Any]:
    """Rename every tensor of a checkpoint (values untouched: both sides store ``(out, in)``)."""
    rename = hf_to_mf_name if to == "mindformers" else mf_to_hf_name
    return {rename(k): v for k, v in state.items()}


def model_config(hf: dict[str, Any], *, seq_length: int = 2048, batch_size: int = 1, dtype: str = "auto") -> dict:
    """``config.json`` -> the ``model:`` section of a mindformers YAML config."""
    model_type = hf.get("model_type")
    if model_type not in ARCHITECTURES:
        raise MS_UNSUPPORTED_MODEL.error(
            f"model_type {model_type!r} has no mindformers translation (supported: {', '.join(ARCHITECTURES)})",
            location="config.json field 'model_type'",
        )
    config_type, arch = ARCHITECTURES[model_type]
    rope = dict(hf.get("rope_parameters") or hf.get("rope_scaling") or {})
    rope_type = rope.get("rope_type", rope.get("type", "default"))
    extend = {"default": "None", "linear": "PI", "llama3": "LLAMA3"}.get(rope_type)
    if extend is None:
        raise MS_CONFIG.error(
            f"rope type {rope_type!r} has no mindformers equivalent", location="config.json field 'rope_parameters'"
        )
    heads = hf["num_attention_heads"]
    compute = COMPUTE_DTYPES.get(dtype, dtype)
    eos = hf.get("eos_token_id")
    cfg = {
        "type": config_type,
        "batch_size": batch_size,
        "seq_length": seq_length,
        "hidden_size": hf["hidden_size"],
        "num_layers": hf["num_hidden_layers"],
        "num_heads": heads,
        "n_kv_heads": hf.get("num_key_value_heads") or heads,
        "intermediate_size": hf["intermediate_size"],
        "vocab_size": hf["vocab_size"],
        "rms_norm_eps": hf.get("rms_norm_eps", 1e-6),
        "theta": float(rope.get("rope_theta", hf.get("rope_theta", 10000.0))),
        "extend_method": extend,
        "scaling_factor": float(rope.get("factor", 1.0)),
        "max_position_embedding": hf.get("max_position_embeddings", seq_length),
        "bos_token_id": hf.get("bos_token_id", 1),
        "eos_token_id": eos[0] if isinstance(eos, list) else (eos if eos is not None else 2),
        "pad_token_id": hf.get("pad_token_id") if hf.get("pad_token_id") is not None else 0,
        "ignore_token_id": -100,
        "qkv_has_bias": model_type == "qwen2" or bool(hf.get("attention_bias")),
        "tie_word_embeddings": bool(hf.get("tie_word_embeddings", False)),
        "compute_dtype": compute,
        "layernorm_compute_type": "float32",
        "softmax_compute_type": "float32",
        "rotary_dtype": "float32",
        "param_init_type": "float32" if compute == "float32" else compute,
        "use_past": True,
        "use_flash_attention": compute != "float32",
    }
    return {"model_config": cfg, "arch": {"type": arch}}


def lora_config(targets: list[str], *, rank: int, alpha: int, dropout: float) -> dict:
    """openmind's LoRA arguments -> mindformers' ``pet_config``."""
    names = []
    for target in targets or ["all"]:
        if target in ("all", "all-linear"):
            names = list(LORA_TARGETS.values())
            break
        if target not in LORA_TARGETS:
            from openmind.core.training.errors import T_LORA_TARGET

            raise T_LORA_TARGET.error(
                f"LoRA target {target!r} has no mindformers equivalent ({', '.join(LORA_TARGETS)})",
                location="lora_target",
            )
        names.append(LORA_TARGETS[target])
    return {
        "pet_type": "lora",
        "lora_rank": rank,
        "lora_alpha": alpha,
        "lora_dropout": dropout,
        "target_modules": ".*(" + "|".join(re.escape(n) for n in names) + ")$",
    }


def training_config(args: Any, hf: dict[str, Any], *, dataset_dir: str, checkpoint: str) -> dict[str, Any]:
    """The unified arguments of a run -> a complete mindformers YAML config (as a mapping)."""
    t, ft, d = args.training, args.finetuning, args.data
    model = model_config(hf, seq_length=d.cutoff_len, batch_size=t.per_device_train_batch_size, dtype=args.model.dtype)
    if ft.finetuning_type == "lora":
        model["model_config"]["pet_config"] = lora_config(
            list(ft.lora_target),
            rank=ft.lora_rank,
            alpha=default_lora_alpha(ft.lora_rank, ft.lora_alpha),
            dropout=ft.lora_dropout,
        )
    elif ft.finetuning_type != "full":
        from openmind.core.training.errors import T_BAD_SETUP

        raise T_BAD_SETUP.error(
            f"finetuning_type {ft.finetuning_type!r} is not available through mindformers (full, lora)",
            location="finetuning_type",
        )
    schedule = {"cosine": "CosineWithWarmUpLR", "linear": "LinearWithWarmUpLR", "constant": "ConstantWarmUpLR"}
    if t.lr_scheduler_type not in schedule:
        from openmind.core.errors import A_BAD_VALUE

        raise A_BAD_VALUE.error(
            f"lr_scheduler_type {t.lr_scheduler_type!r} has no mindformers schedule ({', '.join(schedule)})",
            location="lr_scheduler_type",
        )
    nproc = max(1, int(t.nproc))
    return {
        "seed": t.seed,
        "output_dir": t.output_dir,
        "run_mode": "finetune",
        "load_checkpoint": checkpoint,
        "auto_trans_ckpt": nproc > 1,
        "only_save_strategy": False,
        "resume_training": bool(t.resume),
        "use_parallel": nproc > 1,
        "model": model,
        "trainer": {"type": "CausalLanguageModelingTrainer", "model_name": model["arch"]["type"]},
        "runner_config": {
            "epochs": int(t.num_train_epochs) if t.max_steps <= 0 else 1,
            "batch_size": t.per_device_train_batch_size,
            "sink_mode": True,
            "sink_size": 1,
            "gradient_accumulation_steps": t.gradient_accumulation_steps,
        },
        "optimizer": {"type": "AdamW", "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": t.weight_decay},
        "lr_schedule": {
            "type": schedule[t.lr_scheduler_type],
            "learning_rate": t.learning_rate,
            "warmup_ratio": t.warmup_ratio,
            "total_steps": t.max_steps if t.max_steps > 0 else -1,
        },
        "train_dataset": {
            "data_loader": {"type": "MindDataset", "dataset_dir": dataset_dir, "shuffle": True},
            "input_columns": ["input_ids", "labels"],
            "batch_size": t.per_device_train_batch_size,
            "drop_remainder": True,
        },
        "runner_wrapper": {
            "type": "MFTrainOneStepCell",
            "use_clip_grad": bool(t.max_grad_norm),
            "max_grad_norm": t.max_grad_norm,
        },
        "callbacks": [
            {"type": "MFLossMonitor"},
            {"type": "CheckpointMonitor", "prefix": "openmind", "save_checkpoint_steps": t.save_steps},
        ],
        "parallel_config": {"data_parallel": nproc, "model_parallel": 1, "pipeline_stage": 1},
        "context": {"mode": 0, "device_target": "Ascend", "max_device_memory": "58GB"},
    }


def msrun_command(
    config_yaml: str, *, nproc: int, script: str, log_dir: str, master_port: int = 8118, extra: list[str] | None = None
) -> list[str]:
    """``msrun`` over ``nproc`` local devices running mindformers' ``run_mindformer.py``."""
    return [
        "msrun",
        f"--worker_num={nproc}",
        f"--local_worker_num={nproc}",
        f"--master_port={master_port}",
        f"--log_dir={log_dir}",
        "--join=True",
        "--cluster_time_out=300",
        # msrun runs its task script as `python SCRIPT ARGS` (the `python` on PATH): passing the
        # interpreter here would run `python /path/to/python ...`
        script,
        f"--config={config_yaml}",
        "--run_mode=finetune",
        f"--use_parallel={nproc > 1}",
        *(extra or []),
    ]


def run_script() -> str | None:
    """mindformers' ``run_mindformer.py`` (``MINDFORMERS_HOME`` or beside the installed package)."""
    candidates = []
    home = os.environ.get("MINDFORMERS_HOME")
    if home:
        candidates.append(os.path.join(home, "run_mindformer.py"))
    try:
        from importlib.util import find_spec

        spec = find_spec("mindformers")
        if spec and spec.origin:
            root = os.path.dirname(os.path.dirname(spec.origin))
            candidates += [
                os.path.join(root, "run_mindformer.py"),
                os.path.join(root, "mindformers", "run_mindformer.py"),
            ]
    except (ImportError, ValueError):
        pass
    return next((c for c in candidates if os.path.isfile(c)), None)
