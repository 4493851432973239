"""openmind's unified training arguments and data -> MindSpeed-LLM's command lines.

Pure data transformations (no torch, torch_npu or MindSpeed import), so every mapping is unit-tested
on any machine; only running the commands needs Ascend. A run is four steps, each one of
MindSpeed-LLM's own scripts, run from its checkout (``home``):

1. ``preprocess_data.py``: the rows openmind's data engine loaded and checked, written as ShareGPT
   JSON lines (``conversations`` of ``from``/``value``; ``chosen``/``rejected`` for dpo) or
   ``{"text"}`` lines (pt), into Megatron's indexed dataset with MindSpeed-LLM's handler
   (``SharegptStyleInstructionHandler``, ``SharegptStylePairwiseHandler``,
   ``GeneralPretrainHandler``) and prompt type.
2. ``convert_ckpt_v2.py --load-model-type hf --save-model-type mg``: the Hugging Face folder into a
   Megatron checkpoint split for the tensor/pipeline-parallel sizes.
3. ``torchrun ... posttrain_gpt.py`` (``--stage sft`` / ``--stage dpo``) or ``pretrain_gpt.py`` (pt).
4. ``convert_ckpt_v2.py --load-model-type mg --save-model-type hf``: the trained checkpoint back into
   a Hugging Face folder (full) or a peft LoRA adapter (``--save-lora-to-hf``) in ``output_dir``.

Anything the unified arguments ask for that MindSpeed-LLM cannot do is OM-PT002 naming the field
(never silently dropped); architectures without a translation are OM-PT003.

Source of every flag: Ascend/MindSpeed-LLM at c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91 (see the
package docstring); the model flags follow ``examples/mcore/{llama2,qwen25,qwen3}/tune_*.sh``.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from openmind.pt.mindspeed.errors import PT_MODEL, PT_UNMAPPED

#: config.json ``model_type`` -> MindSpeed-LLM ``--model-type-hf`` (convert_ckpt_v2.py's choices)
MODEL_TYPES = {"llama": "llama2", "qwen2": "qwen25", "qwen3": "qwen3"}
#: openmind template -> MindSpeed-LLM ``--prompt-type`` (configs/finetune/templates.json); only
#: where both render the same turns and default system prompt
PROMPT_TYPES = {
    "llama2": "llama2",
    "llama3": "llama3",
    "qwen2": "qwen",
    "qwen2.5": "qwen_lf",
    "qwen3": "qwen3",
    "yi": "chatml",
    "yi1.5": "chatml",
    "mistral": "mistral",
    "gemma2": "gemma",
    "glm4": "glm4",
    "chatglm3": "chatglm3",
    "internlm2": "intern2",
    "baichuan2": "baichuan2",
    "deepseek3": "deepseek3",
}
#: openmind (Hugging Face) LoRA target -> MindSpeed-LLM (Megatron) module; q/k/v and gate/up are
#: one fused Megatron linear each, so they can only be targeted together
LORA_TARGETS = {
    "q_proj": "linear_qkv",
    "k_proj": "linear_qkv",
    "v_proj": "linear_qkv",
    "o_proj": "linear_proj",
    "gate_proj": "linear_fc1",
    "up_proj": "linear_fc1",
    "down_proj": "linear_fc2",
}
ALL_LORA_TARGETS = ("linear_qkv", "linear_proj", "linear_fc1", "linear_fc2")
#: transformers scheduler name -> Megatron ``--lr-decay-style`` (both decay to 0: Megatron's --min-lr
#: defaults to 0.0)
SCHEDULES = {"cosine": "cosine", "linear": "linear", "constant": "constant", "constant_with_warmup": "constant"}
HANDLERS = {
    "pt": "GeneralPretrainHandler",
    "sft": "SharegptStyleInstructionHandler",
    "dpo": "SharegptStylePairwiseHandler",
}
SCRIPTS = {"pt": "pretrain_gpt.py", "sft": "posttrain_gpt.py", "dpo": "posttrain_gpt.py"}
STAGES = tuple(HANDLERS)
DPO_LOSSES = ("sigmoid", "hinge", "ipo")
#: the scripts a MindSpeed-LLM checkout holds (and ``megatron/``, copied in from Megatron-LM)
HOME_FILES = ("preprocess_data.py", "convert_ckpt_v2.py", "posttrain_gpt.py", "pretrain_gpt.py")
#: transformers TrainingArguments keys (``trainer_args``) with a Megatron flag
TRAINER_ARGS = {"adam_beta1": "--adam-beta1", "adam_beta2": "--adam-beta2", "adam_epsilon": "--adam-eps"}


@dataclass(frozen=True)
class Step:
    """One subprocess of a MindSpeed run: ``argv`` run in ``cwd`` (the MindSpeed-LLM checkout)."""

    name: str
    argv: tuple[str, ...]
    cwd: str


@dataclass
class Layout:
    """Where a run's intermediate files go (all under ``work``, inside the run folder)."""

    work: str

    @property
    def data_file(self) -> str:
        return os.path.join(self.work, "data", "train.jsonl")

    @property
    def data_prefix(self) -> str:
        return os.path.join(self.work, "data", "train")

    @property
    def base_checkpoint(self) -> str:
        return os.path.join(self.work, "base_mcore")

    @property
    def checkpoint(self) -> str:
        return os.path.join(self.work, "checkpoints")

    @property
    def tensorboard(self) -> str:
        return os.path.join(self.work, "tensorboard")


@dataclass
class Parallel:
    tp: int
    pp: int
    dp: int
    world: int
    extra: list[str] = field(default_factory=list)


def _unmapped(name: str, message: str) -> Exception:
    return PT_UNMAPPED.error(f"{name}: {message}", location=name)


def mindspeed_group(args: Any) -> Any:
    """The ``mindspeed`` argument group of ``args``, or its defaults (SDK callers whose wrapper
    parsed only the built-in groups)."""
    group = getattr(args, "mindspeed", None)
    if group is None:
        from openmind.pt.mindspeed.args import MindSpeedArguments

        group = MindSpeedArguments()
    return group


# ---- the model ------------------------------------------------------------------------------
def model_type_hf(hf: dict[str, Any]) -> str:
    model_type = hf.get("model_type")
    if model_type not in MODEL_TYPES:
        raise PT_MODEL.error(
            f"model_type {model_type!r} has no MindSpeed-LLM translation here (supported: {', '.join(MODEL_TYPES)})",
            location="config.json field 'model_type'",
        )
    return MODEL_TYPES[model_type]


def model_args(hf: dict[str, Any], *, seq_length: int) -> list[str]:
    """``config.json`` -> MindSpeed-LLM's architecture flags (GPT_ARGS of its example scripts)."""
    model_type_hf(hf)
    for key in ("rope_scaling", "rope_parameters"):
        rope = hf.get(key) or {}
        kind = rope.get("rope_type", rope.get("type", "default")) if isinstance(rope, dict) else "default"
        if kind not in (None, "default"):
            raise PT_MODEL.error(
                f"rope scaling {kind!r} is not translated to MindSpeed-LLM flags", location=f"config.json field {key!r}"
            )
    if hf.get("hidden_act", "silu") != "silu":
        raise PT_MODEL.error(
            f"hidden_act {hf.get('hidden_act')!r}: MindSpeed-LLM's --swiglu is SiLU-gated",
            location="config.json field 'hidden_act'",
        )
    if hf.get("attention_bias") and hf["model_type"] != "qwen2":
        raise PT_MODEL.error(
            "attention_bias (biases on q/k/v and o) is not translated to MindSpeed-LLM flags",
            location="config.json field 'attention_bias'",
        )
    if hf.get("mlp_bias"):
        raise PT_MODEL.error(
            "mlp_bias is not translated to MindSpeed-LLM flags", location="config.json field 'mlp_bias'"
        )
    rope_theta = (hf.get("rope_parameters") or {}).get("rope_theta", hf.get("rope_theta", 10000.0))
    heads = int(hf["num_attention_heads"])
    kv_heads = int(hf.get("num_key_value_heads") or heads)
    hidden = int(hf["hidden_size"])
    out = [
        "--use-mcore-models",
        "--num-layers", str(hf["num_hidden_layers"]),
        "--hidden-size", str(hidden),
        "--ffn-hidden-size", str(hf["intermediate_size"]),
        "--num-attention-heads", str(heads),
    ]  # fmt: skip
    if kv_heads != heads:
        out += ["--group-query-attention", "--num-query-groups", str(kv_heads)]
    head_dim = hf.get("head_dim")
    if hf["model_type"] == "qwen3":
        out += ["--spec", "mindspeed_llm.tasks.models.spec.qwen3_spec", "layer_spec", "--qk-layernorm"]
        out += ["--kv-channels", str(head_dim or hidden // heads)]
    elif head_dim and int(head_dim) != hidden // heads:
        out += ["--kv-channels", str(head_dim)]
    out += [
        "--max-position-embeddings", str(hf.get("max_position_embeddings", seq_length)),
        "--seq-length", str(seq_length),
        "--position-embedding-type", "rope",
        "--use-rotary-position-embeddings",
        "--rotary-base", _num(rope_theta),
        "--normalization", "RMSNorm",
        "--norm-epsilon", _num(hf.get("rms_norm_eps", 1e-6)),
        "--swiglu",
        "--disable-bias-linear",
    ]  # fmt: skip
    if hf["model_type"] == "qwen2":  # Qwen2: q/k/v biases only (examples/mcore/qwen25)
        out.append("--add-qkv-bias")
    if not hf.get("tie_word_embeddings", False):
        out.append("--untie-embeddings-and-output-weights")
    out += [
        "--make-vocab-size-divisible-by", "1",
        "--padded-vocab-size", str(hf["vocab_size"]),
        "--attention-dropout", _num(hf.get("attention_dropout", 0.0)),
        "--hidden-dropout", "0.0",
    ]  # fmt: skip
    return out


def _num(value: Any) -> str:
    """A number as MindSpeed-LLM's argparse reads it back to the same value."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) >= 1 else repr(value)


# ---- the arguments ---------------------------------------------------------------------------
def check_arguments(args: Any, stage: str) -> None:
    """OM-PT002 for every unified argument set to something MindSpeed-LLM cannot do (first found)."""
    if stage not in STAGES:
        raise _unmapped("stage", f"{stage!r} has no MindSpeed-LLM trainer ({', '.join(STAGES)})")
    ft, t, d, m = args.finetuning, args.training, args.data, args.model
    explicit = getattr(args, "explicit", set())
    if ft.finetuning_type not in ("full", "lora"):
        raise _unmapped(
            "finetuning_type", f"{ft.finetuning_type!r} is not available through MindSpeed-LLM (full, lora)"
        )
    if ft.finetuning_type == "lora":
        if ft.use_dora:
            raise _unmapped("use_dora", "MindSpeed-LLM trains plain LoRA only")
        if ft.use_rslora:
            raise _unmapped("use_rslora", "MindSpeed-LLM trains plain LoRA only")
        if ft.lora_dropout:
            raise _unmapped("lora_dropout", f"{ft.lora_dropout}: MindSpeed-LLM's LoRA has no dropout")
    if stage == "dpo" and ft.pref_loss not in DPO_LOSSES:
        raise _unmapped(
            "pref_loss", f"{ft.pref_loss!r} is not a MindSpeed-LLM --dpo-loss-type ({', '.join(DPO_LOSSES)})"
        )
    if getattr(m, "adapter", None):
        raise _unmapped("adapter", "MindSpeed-LLM starts from the base model only (merge the adapter first)")
    if t.lr_scheduler_type not in SCHEDULES:
        raise _unmapped(
            "lr_scheduler_type", f"{t.lr_scheduler_type!r} has no Megatron --lr-decay-style ({', '.join(SCHEDULES)})"
        )
    if stage == "pt" and t.max_steps <= 0:
        raise _unmapped(
            "num_train_epochs",
            "MindSpeed-LLM pre-training counts iterations over fixed-length chunks, not epochs: pass --max-steps N",
        )
    if t.resume:
        raise _unmapped("resume", "resuming a MindSpeed-LLM run from openmind is not supported; start a new run")
    if t.deepspeed:
        raise _unmapped("deepspeed", "MindSpeed-LLM shards with its own tensor/pipeline/data parallelism")
    if t.fsdp:
        raise _unmapped("fsdp", "MindSpeed-LLM shards with its own tensor/pipeline/data parallelism")
    for key in ("eval_steps", "early_stopping_patience", "save_total_limit"):
        if getattr(t, key, None) is not None:
            raise _unmapped(key, "not mapped to MindSpeed-LLM (its runs evaluate and prune checkpoints their own way)")
    if d.eval_dataset or d.val_size:
        raise _unmapped(
            "eval_dataset" if d.eval_dataset else "val_size", "evaluation during a MindSpeed-LLM run is not mapped"
        )
    if d.packing:
        raise _unmapped("packing", "MindSpeed-LLM packs at preprocessing with its own layout; not mapped")
    if stage != "pt" and d.train_on != "assistant":
        raise _unmapped("train_on", f"{d.train_on!r}: MindSpeed-LLM trains on every assistant turn only")
    if stage != "pt" and d.truncation != "proportional" and "truncation" in explicit:
        raise _unmapped(
            "truncation",
            f"{d.truncation!r}: MindSpeed-LLM cuts long samples like LLaMA-Factory (truncation proportional)",
        )
    for key in t.trainer_args or {}:
        if key not in TRAINER_ARGS:
            raise _unmapped(f"trainer_args.{key}", f"no MindSpeed-LLM flag (mapped: {', '.join(TRAINER_ARGS)})")


def prompt_type(args: Any) -> str:
    """MindSpeed-LLM's ``--prompt-type`` for a chat stage: the ``mindspeed_prompt_type`` given,
    else the translation of ``--template``."""
    ms = mindspeed_group(args)
    if ms.mindspeed_prompt_type:
        return ms.mindspeed_prompt_type
    name = args.template.template
    if not name:
        raise _unmapped(
            "template",
            "MindSpeed-LLM renders conversations with its own prompt types: pass --template NAME "
            f"({', '.join(sorted(PROMPT_TYPES))}) or --mindspeed-prompt-type NAME",
        )
    if name not in PROMPT_TYPES:
        raise _unmapped(
            "template",
            f"{name!r} has no MindSpeed-LLM prompt type ({', '.join(sorted(PROMPT_TYPES))}); "
            "pass --mindspeed-prompt-type NAME to choose one of MindSpeed-LLM's",
        )
    return PROMPT_TYPES[name]


def lora_targets(targets: Iterable[str]) -> list[str]:
    """openmind LoRA targets -> MindSpeed-LLM ``--lora-target-modules`` (OM-T004 when a name has no
    Megatron module, or names only part of a fused one)."""
    from openmind.core.training.errors import T_LORA_TARGET

    targets = list(targets or [])
    if not targets or any(t in ("all", "all-linear") for t in targets):
        return list(ALL_LORA_TARGETS)
    chosen: list[str] = []
    for target in targets:
        if target in ALL_LORA_TARGETS:
            name = target
        elif target in LORA_TARGETS:
            name = LORA_TARGETS[target]
        else:
            raise T_LORA_TARGET.error(
                f"LoRA target {target!r} has no MindSpeed-LLM module ({', '.join([*LORA_TARGETS, *ALL_LORA_TARGETS])})",
                location="lora_target",
            )
        parts = [hf for hf, mg in LORA_TARGETS.items() if mg == name]
        if target in LORA_TARGETS and not all(p in targets for p in parts):
            raise T_LORA_TARGET.error(
                f"LoRA target {target!r} is part of Megatron's fused {name}: target {', '.join(parts)} together",
                location="lora_target",
            )
        if name not in chosen:
            chosen.append(name)
    return [n for n in ALL_LORA_TARGETS if n in chosen]


def parallel(args: Any) -> Parallel:
    """Tensor/pipeline/data-parallel sizes over ``nproc x nnodes`` devices (OM-PT002 when they do
    not divide it)."""
    ms, t = mindspeed_group(args), args.training
    tp, pp = int(ms.tensor_parallel_size), int(ms.pipeline_parallel_size)
    world = max(1, int(t.nproc)) * max(1, int(t.nnodes))
    for key, value in (("tensor_parallel_size", tp), ("pipeline_parallel_size", pp)):
        if value < 1:
            raise _unmapped(key, f"must be >= 1, not {value}")
    if world % (tp * pp):
        raise _unmapped(
            "nproc", f"{world} devices (nproc x nnodes) are not a multiple of tensor x pipeline parallel = {tp * pp}"
        )
    extra = []
    if ms.sequence_parallel:
        if tp < 2:
            raise _unmapped("sequence_parallel", "needs tensor_parallel_size > 1")
        extra.append("--sequence-parallel")
    return Parallel(tp=tp, pp=pp, dp=world // (tp * pp), world=world, extra=extra)


def train_iters(args: Any, *, samples: int, global_batch: int) -> int:
    """``--train-iters``: max_steps, else ceil(epochs x samples / global batch)."""
    t = args.training
    if t.max_steps > 0:
        return int(t.max_steps)
    return max(1, math.ceil(float(t.num_train_epochs) * samples / global_batch))


def precision_flags(args: Any) -> list[str]:
    mp = args.training.mixed_precision
    if mp == "fp16":
        return ["--fp16"]
    if mp in ("bf16", "auto"):  # auto: bf16, what every MindSpeed-LLM example on Atlas A2/A3 trains in
        return ["--bf16"]
    return []


# ---- the commands ----------------------------------------------------------------------------
def preprocess_command(
    args: Any, stage: str, layout: Layout, *, model_dir: str, python: str = sys.executable
) -> list[str]:
    """``preprocess_data.py`` over the JSON lines written by :func:`write_records`."""
    d = args.data
    cmd = [
        python, "preprocess_data.py",
        "--input", layout.data_file,
        "--tokenizer-type", "PretrainedFromHF",
        "--tokenizer-name-or-path", model_dir,
        "--output-prefix", layout.data_prefix,
        "--handler-name", HANDLERS[stage],
        "--workers", str(max(1, int(d.preprocessing_num_workers))),
        "--log-interval", "1000",
    ]  # fmt: skip
    if stage == "pt":
        cmd += ["--json-keys", "text", "--append-eod"]
    else:
        cmd += ["--prompt-type", prompt_type(args), "--seq-length", str(d.cutoff_len)]
    return cmd


def convert_hf2mg_command(
    args: Any, layout: Layout, par: Parallel, *, model_dir: str, hf: dict, python: str = sys.executable
) -> list[str]:
    return [
        python, "convert_ckpt_v2.py",
        "--load-model-type", "hf",
        "--save-model-type", "mg",
        "--target-tensor-parallel-size", str(par.tp),
        "--target-pipeline-parallel-size", str(par.pp),
        "--load-dir", model_dir,
        "--save-dir", layout.base_checkpoint,
        "--model-type-hf", model_type_hf(hf),
    ]  # fmt: skip


def train_command(
    args: Any,
    stage: str,
    layout: Layout,
    par: Parallel,
    *,
    model_dir: str,
    hf: dict,
    samples: int,
    master_port: int = 6000,
) -> list[str]:
    """``torchrun ... posttrain_gpt.py|pretrain_gpt.py ...`` (MindSpeed-LLM's tune/pretrain scripts)."""
    t, ft, d = args.training, args.finetuning, args.data
    ms = mindspeed_group(args)
    global_batch = int(t.per_device_train_batch_size) * int(t.gradient_accumulation_steps) * par.dp
    iters = train_iters(args, samples=samples, global_batch=global_batch)
    cmd = [
        "torchrun",
        "--nproc_per_node", str(max(1, int(t.nproc))),
        "--nnodes", str(max(1, int(t.nnodes))),
        "--node_rank", str(int(t.node_rank)),
        "--master_addr", t.master_addr or "localhost",
        "--master_port", str(t.master_port or master_port),
        SCRIPTS[stage],
        "--tensor-model-parallel-size", str(par.tp),
        "--pipeline-model-parallel-size", str(par.pp),
        *par.extra,
        *model_args(hf, seq_length=int(d.cutoff_len)),
        "--tokenizer-type", "PretrainedFromHF",
        "--tokenizer-name-or-path", model_dir,
        "--micro-batch-size", str(t.per_device_train_batch_size),
        "--global-batch-size", str(global_batch),
        "--train-iters", str(iters),
        "--lr", _num(t.learning_rate),
        "--lr-decay-style", SCHEDULES[t.lr_scheduler_type],
        "--min-lr", "0.0",
        "--weight-decay", _num(t.weight_decay),
        "--clip-grad", _num(t.max_grad_norm),
        "--adam-beta1", _num((t.trainer_args or {}).get("adam_beta1", 0.9)),
        "--adam-beta2", _num((t.trainer_args or {}).get("adam_beta2", 0.999)),
        "--adam-eps", _num((t.trainer_args or {}).get("adam_epsilon", 1e-8)),
        "--seed", str(t.seed),
        *precision_flags(args),
        "--attention-softmax-in-fp32",
        "--no-masked-softmax-fusion",
        "--no-gradient-accumulation-fusion",
    ]  # fmt: skip
    if t.warmup_ratio and t.lr_scheduler_type != "constant":  # transformers' "constant" has no warm-up
        cmd += ["--lr-warmup-fraction", _num(t.warmup_ratio)]
    if t.gradient_checkpointing:
        cmd += ["--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1"]
    if stage == "pt":
        cmd += ["--data-path", layout.data_prefix + "_text_document", "--split", "100,0,0"]
    elif stage == "sft":  # examples/mcore/qwen3/tune_qwen3_0point6b_4K_lora_ptd.sh
        cmd += [
            "--data-path", layout.data_prefix,
            "--split", "100,0,0",
            "--handler-name", HANDLERS[stage],
            "--finetune",
            "--stage", "sft",
            "--is-instruction-dataset",
            "--prompt-type", prompt_type(args),
        ]  # fmt: skip
    else:  # dpo: examples/mcore/qwen3_moe/dpo_qwen3_30b_a3b_16K_A3_ptd.sh
        cmd += [
            "--data-path", layout.data_prefix,
            "--split", "100,0,0",
            "--finetune",
            "--stage", "dpo",
            "--is-pairwise-dataset",
            "--prompt-type", prompt_type(args),
            "--dpo-loss-type", ft.pref_loss,
            "--dpo-beta", _num(ft.pref_beta),
        ]  # fmt: skip
    if ft.finetuning_type == "lora":
        cmd += [
            "--lora-r", str(ft.lora_rank),
            "--lora-alpha", str(_lora_alpha(ft)),
            "--lora-target-modules", *lora_targets(ft.lora_target),
        ]  # fmt: skip
    cmd += [
        "--load", layout.base_checkpoint,
        "--save", layout.checkpoint,
        "--no-load-optim",
        "--no-load-rng",
        "--ckpt-format", "torch",
        "--log-interval", str(t.logging_steps),
        "--save-interval", str(min(int(t.save_steps), iters)),
        "--eval-interval", str(iters),
        "--eval-iters", "0",
        "--distributed-backend", "nccl",
        "--transformer-impl", "local",
    ]  # fmt: skip
    if "tensorboard" in (t.report_to or []):
        cmd += ["--tensorboard-dir", layout.tensorboard]
    cmd += list(ms.mindspeed_args or [])
    return cmd


def _lora_alpha(ft: Any) -> int:
    from openmind.core.training.contract import default_lora_alpha

    return default_lora_alpha(ft.lora_rank, ft.lora_alpha)


def convert_mg2hf_command(
    args: Any, layout: Layout, *, model_dir: str, hf: dict, python: str = sys.executable
) -> list[str]:
    """The trained Megatron checkpoint -> a Hugging Face folder (full) or a peft adapter (lora) in
    ``output_dir``."""
    ft = args.finetuning
    cmd = [python, "convert_ckpt_v2.py", "--load-model-type", "mg", "--save-model-type", "hf"]
    if ft.finetuning_type == "lora":
        cmd += [
            "--load-dir", layout.base_checkpoint,
            "--lora-load", layout.checkpoint,
            "--lora-r", str(ft.lora_rank),
            "--lora-alpha", str(_lora_alpha(ft)),
            "--lora-target-modules", *lora_targets(ft.lora_target),
            "--save-lora-to-hf",
        ]  # fmt: skip
    else:
        cmd += ["--load-dir", layout.checkpoint]
    cmd += [
        "--save-dir",
        str(args.training.output_dir),
        "--hf-cfg-dir",
        model_dir,
        "--model-type-hf",
        model_type_hf(hf),
    ]
    return cmd


def plan_steps(
    args: Any,
    stage: str,
    hf: dict[str, Any],
    *,
    model_dir: str,
    home: str,
    samples: int,
    python: str = sys.executable,
    master_port: int = 6000,
) -> list[Step]:
    """Every subprocess of a MindSpeed run, in order (raises the coded errors of the translation
    before any of them runs)."""
    check_arguments(args, stage)
    model_type_hf(hf)
    par = parallel(args)
    layout = Layout(os.path.join(str(args.training.output_dir), "mindspeed"))
    return [
        Step("preprocess", tuple(preprocess_command(args, stage, layout, model_dir=model_dir, python=python)), home),
        Step(
            "convert-hf2mg",
            tuple(convert_hf2mg_command(args, layout, par, model_dir=model_dir, hf=hf, python=python)),
            home,
        ),
        Step(
            "train",
            tuple(
                train_command(
                    args, stage, layout, par, model_dir=model_dir, hf=hf, samples=samples, master_port=master_port
                )
            ),
            home,
        ),
        Step(
            "convert-mg2hf", tuple(convert_mg2hf_command(args, layout, model_dir=model_dir, hf=hf, python=python)), home
        ),
    ]


# ---- the data --------------------------------------------------------------------------------
_ROLES = {"system": "system", "user": "human", "assistant": "gpt"}


def records(rows: Iterable[dict[str, Any]], stage: str, *, system: str | None = None) -> Iterator[dict[str, Any]]:
    """Rows in openmind's standard format of ``stage`` -> the records MindSpeed-LLM's handler reads:
    ``{"text"}`` (pt), ShareGPT ``{"conversations": [{"from", "value"}]}`` (sft), plus
    ``"chosen"``/``"rejected"`` turns (dpo). ``system`` (``--system``) is added where a row has none.
    Tool turns and tool schemas are OM-PT002 naming the row and field."""
    for index, row in enumerate(rows):
        where = f"{row.get('_file') or 'dataset'}:{row.get('_row', index)}"
        if stage == "pt":
            yield {"text": row["text"]}
            continue
        if row.get("tools"):
            raise PT_UNMAPPED.error(
                "tools: tool schemas are not translated to MindSpeed-LLM", location=f"{where} field 'tools'"
            )
        turns = []
        for i, message in enumerate(row["messages"]):
            role = message.get("role")
            if role not in _ROLES or message.get("tool_calls"):
                raise PT_UNMAPPED.error(
                    f"messages[{i}]: {role!r} turns{' with tool_calls' if message.get('tool_calls') else ''} are not "
                    "translated to MindSpeed-LLM (system, user and assistant turns are)",
                    location=f"{where} field 'messages[{i}]'",
                )
            turns.append({"from": _ROLES[role], "value": message.get("content") or ""})
        body = turns[1:] if turns and turns[0]["from"] == "system" else turns
        expect = ("human", "gpt")
        for i, turn in enumerate(body):
            if turn["from"] != expect[i % 2]:
                raise PT_UNMAPPED.error(
                    "messages: MindSpeed-LLM reads conversations as alternating user/assistant turns after an "
                    f"optional system turn; turn {i} is {turn['from']!r}",
                    location=f"{where} field 'messages'",
                )
        if system and not (turns and turns[0]["from"] == "system"):
            turns.insert(0, {"from": "system", "value": system})
        record: dict[str, Any] = {"conversations": turns}
        if stage == "dpo":
            record["chosen"] = {"from": "gpt", "value": row["chosen"]}
            record["rejected"] = {"from": "gpt", "value": row["rejected"]}
        yield record


def write_records(rows: Iterable[dict[str, Any]], stage: str, path: str, *, system: str | None = None) -> int:
    """Write :func:`records` as JSON lines to ``path``; returns the number of rows."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    count = 0
    with open(path, "w", encoding="utf-8") as f:
        for record in records(rows, stage, system=system):
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count
