"""One typed argument system for every stage.

Argument groups are dataclasses (model, data, template, finetuning, training, generation,
eval, deploy, export, hub). Keys are unique across groups, so a YAML file and ``--key value``
flags map to the same flat namespace (``lora_rank: 8`` in YAML == ``--lora-rank 8``). Unknown
keys are errors with a "did you mean". A run writes its resolved arguments beside its outputs
(:data:`ARGS_FILE`) and ``chat`` / ``eval`` / ``deploy`` / ``export`` reload them from there.

Example::

    from openmind.core.args import parse
    ns = parse(["model", "training"], config="sft.yaml", overrides=["--learning-rate", "1e-4"])
    ns.training.learning_rate  # 0.0001
"""

from __future__ import annotations

import dataclasses
import json
import os
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from openmind.core.errors import A_BAD_FILE, A_BAD_VALUE, A_UNKNOWN_KEY, ArgumentError
from openmind.core.pipelines.base import DEFAULT_MAX_NEW_TOKENS

ARGS_FILE = "openmind_args.yaml"


def arg(
    default: Any = None,
    help: str = "",  # noqa: A002
    choices: tuple | typing.Callable[[], tuple] | None = None,
    **kw: Any,
) -> Any:
    """A dataclass field of an argument group. ``choices`` is a tuple, or a function returning one
    (computed from the registry when needed, so a plugin can add choices, e.g. training stages)."""
    meta = {"help": help}
    if choices:
        meta["choices"] = choices
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=meta, **kw)
    return field(default=default, metadata=meta, **kw)


def _choices(value: Any) -> tuple | None:
    return tuple(value()) if callable(value) else value


def framework_choices() -> tuple[str, ...]:
    """``auto`` and every registered framework (see :mod:`openmind.core.frameworks`)."""
    from openmind.core.frameworks import framework_choices as computed

    return computed()


def choices_of(f: dataclasses.Field) -> tuple | None:
    """The choices of an argument field (calling a computed one)."""
    choices = f.metadata.get("choices")
    return tuple(choices()) if callable(choices) else choices


def _training_stages() -> tuple[str, ...]:
    from openmind.core.training.wrapper import training_stages

    return training_stages()


def _data_formats() -> tuple[str, ...]:
    from openmind.core.plugins import get_registry

    names = [spec.name for spec in get_registry().all("dataset-format")]
    return ("auto", *names)


@dataclass
class ModelArguments:
    model: str | None = arg(None, "Model: a local folder, a hub id (hf::org/name, om::org/name) or a run folder.")
    model_group: str | None = arg(None, "Model group to use when it cannot be inferred from config.json.")
    revision: str | None = arg(None, "Hub revision (branch, tag or commit).")
    hub: str | None = arg(
        None, "Hub to pull from (modelers, huggingface, modelscope, local); default from OPENMIND_HUB."
    )
    adapter: str | None = arg(None, "LoRA adapter folder (or a training run folder) to apply on top of the model.")
    framework: str = arg("auto", "Framework: auto or a registered one (pt: PyTorch, ms: MindSpore).", framework_choices)
    device: str = arg("auto", "Device: auto, cpu, cuda[:N] or npu[:N].")
    dtype: str = arg(
        "auto",
        "Weights dtype: auto (bf16/fp16 on accelerators, fp32 on CPU), float32, float16, bfloat16.",
        ("auto", "float32", "float16", "bfloat16"),
    )
    trust_remote_code: bool = arg(False, "Allow code shipped with the model to run (off by default).")
    allow_pickle: bool = arg(
        False, "Allow loading pickle (.bin/.pt) weights; safetensors are preferred and pickle is refused by default."
    )
    cache_dir: str | None = arg(None, "Cache folder for downloaded models (default: OPENMIND_CACHE).")


@dataclass
class TemplateArguments:
    template: str | None = arg(
        None, "Prompt template name (default: the model group's template, else the tokenizer's chat_template)."
    )
    system: str | None = arg(None, "System prompt.")
    tools: str | None = arg(None, "Tools (JSON list or path to a JSON file) offered to the model.")


@dataclass
class DataArguments:
    dataset: list[str] = arg([], "Datasets: registered names or files (json, jsonl, csv, parquet, arrow, folders).")
    dataset_dir: str | None = arg(None, "Folder with a dataset_info.json (LLaMA-Factory layout) or dataset files.")
    eval_dataset: list[str] = arg([], "Evaluation datasets (default: a split of the training data, see val_size).")
    formatting: str = arg("auto", "Input format of the rows (a registered dataset format).", _data_formats)
    val_size: float = arg(0.0, "Fraction (<1) or number of rows held out for evaluation.")
    cutoff_len: int = arg(1024, "Maximum tokens per sample.")
    truncation: str = arg(
        "right",
        "What to do with samples over cutoff_len (proportional: cut each prompt and answer in proportion, "
        "as LLaMA-Factory does).",
        ("right", "left", "drop", "error", "proportional"),
    )
    train_on: str = arg("assistant", "Which turns carry labels.", ("assistant", "all", "last"))
    packing: bool = arg(False, "Pack samples into fixed-length sequences.")
    neat_packing: bool = arg(True, "When packing, keep samples from attending to each other.")
    max_samples: int | None = arg(None, "Use at most this many rows per dataset.")
    preprocessing_num_workers: int = arg(1, "Processes for tokenisation.")
    on_error: str = arg(
        "fail", "Bad rows: fail on the first, or skip (reported and written to a side file).", ("fail", "skip")
    )
    overwrite_cache: bool = arg(False, "Rebuild the prepared-data cache.")
    data_cache_dir: str | None = arg(None, "Prepared-data cache folder (default: OPENMIND_CACHE/data).")


@dataclass
class FinetuningArguments:
    stage: str = arg("sft", "Training stage (a registered training task).", _training_stages)
    finetuning_type: str = arg("lora", "What to train.", ("full", "freeze", "lora", "qlora"))
    lora_rank: int = arg(8, "LoRA rank.")
    lora_alpha: int | None = arg(None, "LoRA alpha (default: 2 x rank).")
    lora_dropout: float = arg(0.0, "LoRA dropout.")
    lora_target: list[str] = arg([], "LoRA target modules (default: the model group's, else all linear layers).")
    use_dora: bool = arg(False, "Use DoRA.")
    use_rslora: bool = arg(False, "Use rank-stabilised LoRA.")
    freeze_trainable_layers: int = arg(2, "freeze: train the last N layers (negative: the first N).")
    pref_beta: float = arg(0.1, "Preference beta (DPO/KTO/SimPO beta, ORPO lambda, GRPO KL coefficient).")
    pref_loss: str = arg("sigmoid", "DPO loss variant.", ("sigmoid", "hinge", "ipo", "robust"))
    simpo_gamma: float = arg(0.5, "SimPO target reward margin.")
    kto_desirable_weight: float = arg(1.0, "KTO weight of desirable answers.")
    kto_undesirable_weight: float = arg(1.0, "KTO weight of undesirable answers.")
    reward_funcs: list[str] = arg(
        ["exact_match"],
        "GRPO reward functions: registered names (exact_match, regex:PATTERN, length:N) or module:function.",
    )
    num_generations: int = arg(4, "GRPO completions per prompt (the group).")
    max_completion_length: int = arg(64, "GRPO: most new tokens per completion.")
    generation_temperature: float = arg(1.0, "GRPO: sampling temperature of the completions.")
    quantization_bit: int | None = arg(None, "qlora: 4 or 8 bit base weights (needs CUDA and bitsandbytes).")


@dataclass
class TrainingArguments:
    output_dir: str | None = arg(None, "Run folder for checkpoints, logs, plots and the resolved arguments.")
    num_train_epochs: float = arg(3.0, "Epochs.")
    max_steps: int = arg(-1, "Stop after this many optimizer steps (overrides epochs when > 0).")
    per_device_train_batch_size: int = arg(4, "Batch size per device.")
    per_device_eval_batch_size: int = arg(8, "Evaluation batch size per device.")
    gradient_accumulation_steps: int = arg(1, "Micro-batches per optimizer step.")
    learning_rate: float = arg(5e-5, "Peak learning rate.")
    lr_scheduler_type: str = arg("cosine", "Learning-rate schedule (any transformers scheduler name).")
    warmup_ratio: float = arg(0.0, "Warm-up fraction of the steps.")
    weight_decay: float = arg(0.0, "Weight decay.")
    max_grad_norm: float = arg(1.0, "Gradient clipping norm.")
    seed: int = arg(42, "Random seed.")
    logging_steps: int = arg(10, "Log every N steps.")
    save_steps: int = arg(500, "Checkpoint every N steps.")
    save_total_limit: int | None = arg(None, "Keep at most N checkpoints.")
    eval_steps: int | None = arg(None, "Evaluate every N steps (default: at save_steps when an eval set exists).")
    early_stopping_patience: int | None = arg(None, "Stop when eval loss has not improved for N evaluations.")
    gradient_checkpointing: bool = arg(False, "Trade compute for memory.")
    mixed_precision: str = arg("auto", "Mixed precision.", ("auto", "no", "fp16", "bf16"))
    resume: bool = arg(False, "Resume from the latest complete checkpoint in output_dir.")
    overwrite_output_dir: bool = arg(False, "Allow writing into a non-empty output_dir.")
    nproc: int = arg(1, "Processes (devices) per node; > 1 relaunches through torchrun (msrun on MindSpore).")
    nnodes: int = arg(1, "Nodes (machines) of a multi-node run; each runs the same command with its --node-rank.")
    node_rank: int = arg(0, "Rank of this node in a multi-node run (0 .. nnodes-1).")
    master_addr: str | None = arg(None, "Address of node 0 in a multi-node run (default 127.0.0.1).")
    master_port: int | None = arg(
        None, "Rendezvous port on node 0 (default: a free port; fixed 29500 when nnodes > 1)."
    )
    deepspeed: str | None = arg(
        None, "DeepSpeed ZeRO: a preset (z1, z2, z2-offload, z3, z3-offload) or a DeepSpeed JSON file."
    )
    fsdp: str | None = arg(
        None, "FSDP2: a preset (full_shard, shard_grad_op, full_shard_offload) or a JSON file of fsdp_config."
    )
    report_to: list[str] = arg(["tensorboard"], "Loggers: tensorboard, none.")
    plot_loss: bool = arg(True, "Write a loss-curve PNG at the end.")
    trainer_args: dict[str, Any] = arg(
        {},
        "Extra keys passed unchanged to the framework trainer (PyTorch: transformers TrainingArguments), "
        "e.g. {dataloader_num_workers: 4}; LLaMA-Factory / openMind 1.0 files fill it from their trainer keys.",
    )


@dataclass
class GenerationArguments:
    max_new_tokens: int = arg(DEFAULT_MAX_NEW_TOKENS, "Maximum new tokens.")
    do_sample: bool | None = arg(None, "Sample instead of greedy decoding (default: sample when temperature > 0).")
    temperature: float | None = arg(None, "Sampling temperature (0 = greedy).")
    top_p: float | None = arg(None, "Nucleus sampling.")
    top_k: int | None = arg(None, "Top-k sampling.")
    repetition_penalty: float | None = arg(None, "Repetition penalty.")
    num_beams: int = arg(1, "Beam search width.")
    stop: list[str] = arg([], "Stop strings.")
    generation_seed: int | None = arg(None, "Seed for sampling.")
    batch_size: int = arg(1, "Inference batch size.")


@dataclass
class EvalArguments:
    tasks: list[str] = arg(
        [], "Evaluation tasks: built-in names, folders in the MMLU/C-Eval/CMMLU layout, or lm-eval task names."
    )
    task_dir: str | None = arg(None, "Folder that holds local evaluation tasks.")
    n_shot: int = arg(5, "Few-shot examples per question.")
    limit: int | None = arg(None, "Evaluate at most N items per task/subject.")
    eval_batch_size: int = arg(8, "Evaluation batch size.")
    eval_output_dir: str | None = arg(None, "Where to write results (JSON + Markdown).")
    eval_backend: str = arg("native", "native or lm-eval.", ("native", "lm-eval"))


@dataclass
class DeployArguments:
    host: str = arg("127.0.0.1", "Bind address (loopback by default).")
    port: int = arg(8000, "Port.")
    api_key: str | None = arg(None, "Require this API key (Authorization: Bearer ...) on every route but /health.")
    backend: str = arg("native", "Serving backend.", ("native", "vllm", "lmdeploy", "mindie"))
    served_model_name: str | None = arg(None, "Name reported by /v1/models (default: the model folder name).")
    lora_adapters: list[str] = arg([], "Extra LoRA adapters served by name: name=path.")
    max_batch_size: int = arg(8, "Dynamic batching: most requests generated together.")
    batch_wait_ms: float = arg(
        5.0, "Dynamic batching: the longest gap between arrivals to wait for (at most 4x in all); 0: never wait."
    )
    max_queue: int = arg(256, "Bound of the request queue; beyond it requests get 429.")
    request_timeout: float = arg(300.0, "Seconds before a request is abandoned.")
    max_prompt_tokens: int = arg(8192, "Cap on prompt tokens.")
    max_tokens_cap: int = arg(4096, "Cap on max_tokens.")
    max_n: int = arg(8, "Cap on n.")
    strict_schema: bool = arg(
        False,
        "Answer 400 to request fields outside the OpenAI schema (default: ignore them and name them in the "
        "X-OpenMind-Ignored-Fields response header).",
    )
    # images in chat requests (vision-language models, openmind-mm)
    allow_remote_media: bool = arg(
        False, "Let /v1/chat/completions download http(s) image URLs (refused by default: send data: URLs)."
    )
    media_root: list[str] = arg(
        [], "Folders whose files clients may name as file:// image URLs (none by default: file URLs are refused)."
    )
    max_images: int = arg(8, "Most images in one chat request (vision-language models).")
    max_image_bytes: int = arg(20 * 1024 * 1024, "Largest image in bytes (encoded), per image.")
    max_image_pixels: int = arg(4096 * 4096, "Largest image in pixels (width x height), per image.")


@dataclass
class ExportArguments:
    out: str | None = arg(None, "Export folder.")
    max_shard_size: str = arg("2GB", "Largest safetensors shard.")
    push: str | None = arg(None, "Hub id to upload the export to.")
    export_dtype: str = arg("auto", "dtype of the exported weights.", ("auto", "float32", "float16", "bfloat16"))


GROUPS: dict[str, type] = {
    "model": ModelArguments,
    "template": TemplateArguments,
    "data": DataArguments,
    "finetuning": FinetuningArguments,
    "training": TrainingArguments,
    "generation": GenerationArguments,
    "eval": EvalArguments,
    "deploy": DeployArguments,
    "export": ExportArguments,
}


def group_class(name: str) -> type:
    """The dataclass of argument group ``name``: a built-in one (:data:`GROUPS`) or one a plugin
    registered (:class:`~openmind.core.specs.ArgumentGroupSpec`). Unknown: OM-R004."""
    if name in GROUPS:
        return GROUPS[name]
    from openmind.core.plugins import get_registry
    from openmind.core.specs import ArgumentGroupSpec

    spec = get_registry().get(ArgumentGroupSpec, name)
    cls = spec.load()
    if not dataclasses.is_dataclass(cls):
        from openmind.core.errors import R_BAD_SPEC

        raise R_BAD_SPEC.error(f"argument group {name!r}: {spec.impl} is not a dataclass", component=spec.component)
    return cls


def _key_index(extra: tuple[str, ...] | list[str] = ()) -> dict[str, tuple[str, dataclasses.Field]]:
    """key -> (group, field) over the built-in groups and the registered ``extra`` ones; a key
    defined in two groups is OM-A002 naming both (keys are one flat namespace)."""
    index: dict[str, tuple[str, dataclasses.Field]] = {}
    names = list(GROUPS) + [g for g in extra if g not in GROUPS]
    for group in names:
        for f in dataclasses.fields(group_class(group)):
            if f.name in index:
                raise A_BAD_VALUE.error(
                    f"argument {f.name!r} is defined by the {index[f.name][0]!r} and the {group!r} argument groups",
                    hint="Keys of argument groups are one flat namespace: rename the key in the plugin's group.",
                )
            index[f.name] = (group, f)
    return index


class Namespace:
    """Resolved arguments: ``ns.model.model`` or flat ``ns.get("model")``; ``ns.to_dict()``."""

    def __init__(self, groups: dict[str, Any], explicit: set[str]) -> None:
        self._groups = groups
        #: keys the user set (file or flags), as opposed to defaults.
        self.explicit = explicit

    def __getattr__(self, name: str) -> Any:
        groups = self.__dict__.get("_groups", {})
        if name in groups:
            return groups[name]
        raise AttributeError(name)

    def get(self, key: str, default: Any = None) -> Any:
        for group in self._groups.values():
            if hasattr(group, key):
                return getattr(group, key)
        return default

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {name: dataclasses.asdict(value) for name, value in self._groups.items()}

    def flat(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for group in self.to_dict().values():
            out.update(group)
        return out


def _strip(tp: Any) -> tuple[Any, bool]:
    """Return (inner type, optional)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return (inner[0] if len(inner) == 1 else str), True
    return tp, False


def _type_hints(cls: type) -> dict[str, Any]:
    import sys

    return typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))


def convert(key: str, value: Any, tp: Any, choices: tuple | None = None, where: str | None = None) -> Any:
    """Convert a YAML or command-line value to the field's type, or raise OM-A002."""
    choices = _choices(choices)
    inner, optional = _strip(tp)
    try:
        if value is None or (optional and isinstance(value, str) and value.lower() in ("none", "null")):
            if optional:
                return None
            raise ValueError("a value is required")
        origin = typing.get_origin(inner)
        if origin is list:
            (item_tp,) = typing.get_args(inner) or (str,)
            if isinstance(value, str):
                value = [v.strip() for v in value.split(",") if v.strip()] if value.strip() else []
            elif not isinstance(value, (list, tuple)):
                value = [value]
            return [convert(key, v, item_tp, None, where) for v in value]
        if inner is dict or origin is dict:
            if isinstance(value, str):
                value = json.loads(value) if value.strip() else {}
            if not isinstance(value, dict):
                raise ValueError("expected a mapping (YAML mapping or JSON object)")
            return dict(value)
        if origin is Literal:
            choices = typing.get_args(inner)
            inner = type(choices[0])
        if inner is bool:
            if isinstance(value, bool):
                result = value
            elif isinstance(value, str) and value.lower() in ("true", "1", "yes", "on"):
                result = True
            elif isinstance(value, str) and value.lower() in ("false", "0", "no", "off"):
                result = False
            else:
                raise ValueError("expected true or false")
        elif inner is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError("expected an integer")
            result = int(value)
        elif inner is float:
            if isinstance(value, bool):
                raise ValueError("expected a number")
            result = float(value)
        elif inner is str:
            if isinstance(value, (dict, list)):
                raise ValueError("expected a string")
            result = str(value)
        else:
            result = value
    except (TypeError, ValueError) as exc:
        raise A_BAD_VALUE.error(f"{key}: {value!r} is invalid: {exc}", location=where) from None
    # computed choices that are empty (e.g. no training stage registered: the core alone) check nothing
    # here; the verb that needs one (openmind train) says what to install (OM-A002 / OM-T012)
    if choices and result not in choices:
        raise A_BAD_VALUE.error(f"{key}: {result!r} is not one of {', '.join(map(str, choices))}", location=where)
    return result


def load_file(path: str | os.PathLike) -> dict[str, Any]:
    """Read a YAML or JSON argument file (flat, or nested by group name)."""
    return load_file_lines(path)[0]


def _is_group_section(key: Any, value: Any) -> bool:
    """Whether ``key: {...}`` in an argument file is a group section: a built-in group, or one a
    plugin registered (e.g. openmind-mm's ``multimodal``; run folders save every group)."""
    if not isinstance(value, dict):
        return False
    if key in GROUPS:
        return True
    from openmind.core.plugins import get_registry
    from openmind.core.specs import ArgumentGroupSpec

    try:
        return get_registry().find(ArgumentGroupSpec.kind, str(key)) is not None
    except Exception:  # noqa: BLE001 - no registry (a broken plugin): plain keys
        return False


def _key_lines(text: str, suffix: str) -> dict[str, int]:
    """1-based line of each key (top level, and one level down for group sections)."""
    lines: dict[str, int] = {}
    if suffix == ".json":
        import re

        for number, line in enumerate(text.splitlines(), 1):
            for match in re.finditer(r'"([^"\\]+)"\s*:', line):
                lines.setdefault(match.group(1), number)
        return lines
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except Exception:
        return lines
    if not isinstance(node, yaml.MappingNode):
        return lines
    for key, value in node.value:
        lines.setdefault(str(key.value), key.start_mark.line + 1)
        if isinstance(value, yaml.MappingNode) and _is_group_section(key.value, {}):
            for sub, _ in value.value:
                lines.setdefault(str(sub.value), sub.start_mark.line + 1)
    return lines


def load_file_lines(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, int]]:
    """:func:`load_file` plus the line of each key (for ``file:line`` in errors)."""
    p = Path(path)
    if p.is_dir():
        p = p / ARGS_FILE
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise A_BAD_FILE.error(
            f"cannot read argument file {str(p)!r}: {exc.strerror or exc}", location=str(p)
        ) from None
    try:
        if p.suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = f"{p}:{mark.line + 1}" if mark is not None else str(p)
        raise A_BAD_FILE.error(f"cannot parse {str(p)!r}: {exc}", location=loc) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise A_BAD_FILE.error(
            f"{str(p)!r} must hold a mapping of key: value, not {type(data).__name__}", location=str(p)
        )
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if _is_group_section(key, value):
            flat.update(value)
        else:
            flat[key] = value
    return flat, _key_lines(text, p.suffix)


def parse_overrides(tokens: list[str]) -> dict[str, Any]:
    """Turn ``--key value`` / ``--key=value`` / ``--flag`` / ``key=value`` (llamafactory-cli style)
    tokens into a mapping (raw strings). A value may start with ``-`` (``--learning-rate -1e-4``)."""
    out: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not token.startswith("--"):
            key, eq, value = token.partition("=")
            if not eq or not key.replace("-", "_").isidentifier():
                raise A_UNKNOWN_KEY.error(
                    f"unexpected argument {token!r}; options are written --key value or key=value"
                )
            token = f"--{key}={value}"
        key, eq, value = token[2:].partition("=")
        key = key.replace("-", "_")
        if not eq:
            if i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
                value = tokens[i + 1]
                i += 1
            else:
                value = "true"
        if key in out and isinstance(out[key], list):
            out[key].append(value)
        elif key in out:
            out[key] = [out[key], value]
        else:
            out[key] = value
        i += 1
    return out


def parse(
    groups: list[str] | tuple[str, ...],
    *,
    config: str | os.PathLike | dict | None = None,
    overrides: list[str] | dict[str, Any] | None = None,
    base: dict[str, Any] | None = None,
    dialect: str | None = None,
    prefer_dialect: str | None = None,
) -> Namespace:
    """Resolve arguments for ``groups`` from (lowest to highest precedence) ``base`` (e.g. a run
    folder's saved arguments), ``config`` (a YAML/JSON file or mapping) and ``overrides``
    (``--key value`` tokens or a mapping). Keys of other known groups are ignored when they come
    from ``base`` and rejected (with the group that owns them) when given explicitly.

    Keys of another tool (LLaMA-Factory, openMind 1.0) are translated by a registered config
    dialect (:mod:`openmind.core.dialects`): ``dialect`` names it, else a ``dialect:`` key in the
    file, else it is detected from the keys (``prefer_dialect`` breaks ties). Every problem of the
    input (unknown or unsupported keys, invalid values) is reported at once, with ``file:line``.
    """
    from openmind.core import dialects as D

    index = _key_index(groups)
    native = {key: group for key, (group, _) in index.items()}
    wanted = {g: group_class(g) for g in groups}
    values: dict[str, tuple[Any, str | None]] = {}
    for key, value in (base or {}).items():
        if key in index and index[key][0] in wanted:
            values[key] = (value, "saved run arguments")
    explicit: set[str] = set()
    sources: list[tuple[dict[str, Any], str | None, dict[str, int]]] = []
    if config is not None:
        if isinstance(config, dict):
            sources.append((dict(config), None, {}))
        else:
            mapping, lines = load_file_lines(config)
            sources.append((mapping, str(config), lines))
    if overrides:
        given = parse_overrides(overrides) if isinstance(overrides, list) else dict(overrides)
        sources.append((given, "command line", {}))

    chosen = None
    for mapping, _, _ in sources:
        if mapping.get(D.MARKER) is not None:
            dialect = dialect or str(mapping[D.MARKER])
    if dialect:
        chosen = D.load(dialect)
    else:
        keys = [str(k).replace("-", "_") for mapping, _, _ in sources for k in mapping]
        if any(k not in native for k in keys):
            chosen = D.detect(keys, native, prefer=prefer_dialect)
    if chosen is not None:
        for key, value in chosen.defaults.items():
            if native.get(key) in wanted and key not in values:
                values[key] = (value, f"{chosen.title} default")

    notes: list[str] = []
    problems: list[tuple[str | None, str, str]] = []
    passed: dict[str, Any] = {}
    for mapping, where, lines in sources:
        tr = D.translate(mapping, dialect=chosen, native=native, wanted=set(wanted), source=where, lines=lines)
        for key, (value, loc) in tr.values.items():
            values[key] = (value, loc)
            explicit.add(key)
        passed.update(tr.trainer_args)
        notes += tr.notes
        problems += [
            (loc, msg, kind if isinstance(kind, str) else A_UNKNOWN_KEY.code if kind else "OM-C002")
            for loc, msg, kind in tr.problems
        ]
    if chosen is not None and chosen.finalize is not None:
        flat = {k: v for k, (v, _) in values.items()}
        for key, value in chosen.finalize(dict(flat)).items():
            if flat.get(key, object()) != value and native.get(key) in wanted:
                values[key] = (value, values.get(key, (None, f"{chosen.title} rule"))[1])
    if passed:
        if "training" in wanted:
            previous, loc = values.get("trainer_args", ({}, None))
            previous = convert("trainer_args", previous, dict[str, Any], None, loc)
            values["trainer_args"] = ({**passed, **previous}, loc)
            explicit.add("trainer_args")
        else:
            notes += [f"trainer key {k!r} is not used by this command" for k in passed]

    built: dict[str, Any] = {}
    for name, cls in wanted.items():
        hints = _type_hints(cls)
        kwargs = {}
        for f in dataclasses.fields(cls):
            if f.name in values:
                value, where = values[f.name]
                try:
                    kwargs[f.name] = convert(f.name, value, hints[f.name], choices_of(f), where)
                except ArgumentError as exc:
                    problems.append((exc.location, exc.message, exc.code))
        built[name] = cls(**kwargs)
    if problems:
        raise _problems_error(problems, chosen)
    if notes:
        D.print_notes(notes)
    ns = Namespace(built, explicit)
    ns.dialect = chosen.name if chosen is not None else None  # type: ignore[attr-defined]
    ns.notes = notes  # type: ignore[attr-defined]
    # key -> "FILE:LINE" for the keys the config file set, so a later error about a field (raised
    # while checking the setup) can name the line the user wrote
    files = [where for _, where, lines in sources if where and lines]
    ns.where = {  # type: ignore[attr-defined]
        key: loc
        for key, (_, loc) in values.items()
        if isinstance(loc, str) and any(loc.startswith(f"{f}:") for f in files)
    }
    return ns


def _problems_error(problems: list[tuple[str | None, str, str]], dialect: Any) -> ArgumentError:
    """One error for every problem of the input; its code is the most basic one among them."""
    import openmind.core.compat.errors  # noqa: F401 - declares OM-C002
    from openmind.core.errors import CODES

    order = [A_UNKNOWN_KEY.code, "OM-C002", "OM-X001", A_BAD_VALUE.code]
    code = min((c for _, _, c in problems), key=lambda c: order.index(c) if c in order else len(order))
    if len(problems) == 1:
        where, message, _ = problems[0]
        hint = None
        if "did you mean" in message:
            message, _, close = message.partition("; did you mean ")
            hint = f"Did you mean {close}"
        err = CODES[code].error(message, location=where, hint=hint)
    else:
        lines = [f"{len(problems)} problems in the arguments:"]
        lines += [f"  {where or 'arguments'}: {message}" for where, message, _ in problems]
        err = CODES[code].error("\n".join(lines), location=problems[0][0])
    if dialect is not None:
        err.message += f"\n  (keys read as {dialect.title}; docs/MIGRATING.md lists its keys and their openmind form)"
    return err  # type: ignore[return-value]


def save(ns: Namespace, folder: str | os.PathLike) -> Path:
    """Write the resolved arguments to ``folder/openmind_args.yaml`` (atomically)."""
    import yaml

    path = Path(folder) / ARGS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text(yaml.safe_dump(ns.to_dict(), sort_keys=False, allow_unicode=True), encoding="utf-8")
    os.replace(tmp, path)
    return path


def load_run(folder: str | os.PathLike) -> dict[str, Any] | None:
    """Flat saved arguments of a run folder, or ``None`` when ``folder`` is not a run folder."""
    path = Path(folder) / ARGS_FILE
    return load_file(path) if path.is_file() else None


def add_to_parser(parser: Any, groups: list[str] | tuple[str, ...]) -> None:
    """Document the groups' keys in an argparse parser (values are parsed by :func:`parse`)."""
    import argparse

    for name in groups:
        cls = group_class(name)
        section = parser.add_argument_group(f"{name} arguments")
        hints = _type_hints(cls)
        for f in dataclasses.fields(cls):
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
            inner, _ = _strip(hints[f.name])
            metavar = (
                "BOOL"
                if inner is bool
                else (
                    "LIST"
                    if typing.get_origin(inner) is list
                    else inner.__name__.upper()
                    if isinstance(inner, type)
                    else "VALUE"
                )
            )
            choices = choices_of(f)
            text = f.metadata.get("help", "")
            if choices:
                text += f" {{{', '.join(map(str, choices))}}}"
            text += f" (default: {default!r})"
            section.add_argument(
                "--" + f.name.replace("_", "-"),
                metavar=metavar,
                help=text.replace("%", "%%"),
                default=argparse.SUPPRESS,
                nargs="?",
            )
