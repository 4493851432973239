"""``docs/MIGRATING.md``: every openMind 1.0 name, task, flag and YAML key (and LLaMA-Factory's YAML
keys) with its 2.x form, generated from the code that implements the mapping (``openmind docs``
writes it, ``openmind docs --check`` fails when it is stale)."""

from __future__ import annotations

from typing import Any

from openmind.core.tables import markdown_table

#: openMind 1.0.0's Tasks (openmind/utils/constants.py), in its order.
OPENMIND1_TASKS = (
    "text-classification",
    "sentiment-analysis",
    "text-generation",
    "zero-shot-classification",
    "zero-shot-object-detection",
    "text2text-generation",
    "token-classification",
    "fill-mask",
    "question-answering",
    "summarization",
    "table-question-answering",
    "translation",
    "depth-estimation",
    "image-to-image",
    "zero-shot-image-classification",
    "image-classification",
    "text-to-image",
    "mask-generation",
    "visual-question-answering",
    "feature-extraction",
    "image-to-text",
    "text-to-video",
    "inpainting",
)

#: openMind 1.0 top-level / module names -> what they are in 2.x.
NAMES = {
    "pipeline": "`openmind.pipeline` (1.0 and transformers keywords accepted, see below)",
    "AutoConfig, AutoTokenizer, AutoModel, AutoModelForCausalLM, AutoModelForSequenceClassification": (
        "transformers' Auto classes with openmind's hub resolution and safe defaults (`openmind.pt.auto`)"
    ),
    "AutoFeatureExtractor, AutoImageProcessor, AutoProcessor": "the same, for processors (`openmind.pt.auto`)",
    "Trainer, TrainingArguments": "transformers' `Trainer` / `TrainingArguments` (as in 1.0)",
    "PreTrainer, PreTrainingArguments": "removed (OM-C001): `openmind.train(stage='pt', ...)` / `openmind train`",
    "OmDataset": "`OmDataset.load_dataset(path, ...)`: local files/folders and hub ids, read by `datasets`",
    "is_*_available, get_framework": "the same helpers (`openmind.core.compat.availability`), import-light",
    "logging": "`openmind.utils.logging`: set_verbosity_* / get_logger on the `openmind` logger",
    "openmind.utils": "availability helpers, `logging`, `get_logger`",
    "openmind.utils.hub": "`snapshot_download`, `om_hub_download`, `upload_folder`, `create_repo`, "
    "`OM_DATASETS_CACHE`, `OM_HUB_CACHE`, `OM_HOME` over openmind's hub layer",
    "openmind.metrics": "removed (OM-C001): `openmind eval`, or the `evaluate` library",
    "openmind.trainers": "`Trainer`, `TrainingArguments` (PreTrainer: OM-C001)",
    "openmind.omdatasets": "`OmDataset`",
}

PIPELINE_KEYWORDS = {
    "torch_dtype=torch.float16 / dtype=torch.bfloat16 / 'fp16'": "dtype='float16' / 'bfloat16'",
    "device=0 / device=-1 / torch.device": "device='cuda:0' / 'cpu'",
    "device_map='auto' | 'cpu' | 'npu:0'": "device='auto' | 'cpu' | 'npu:0' (a per-module map: OM-A002)",
    "model_kwargs={...}": "its torch_dtype / dtype / device_map / trust_remote_code / revision / cache_dir",
    "backend='transformers' | 'diffusers'": "framework='pt'",
    "backend='mindformers' | 'mindnlp' | 'mindone'": "framework='ms'",
    "framework='pytorch' | 'mindspore'": "framework='pt' | 'ms'",
    "model=<PreTrainedModel>, tokenizer=<tokenizer>": "saved once under the openmind cache and loaded from there",
    "cache_dir=DIR (hub id)": "downloaded into DIR/<org>--<name>",
    "config=<config or path>": "accepted when it is the model's own (OM-A002 otherwise)",
    "pipe.model, pipe.tokenizer, pipe.task": "the same attributes",
    "per call: max_length, min_length, num_return_sequences": "the same (max_length / min_length count the prompt; "
    "num_return_sequences > 1 needs do_sample=True, beam search with it: OM-I102)",
    "per call: do_sample, top_k, top_p, temperature, repetition_penalty, num_beams, max_new_tokens, "
    "min_new_tokens, no_repeat_ngram_size, length_penalty, early_stopping": "the same (PyTorch; the MindSpore "
    "backend refuses the last four with OM-I102)",
}

#: what a call returns by default (1.0 / transformers) and with ``return_format="openmind"`` (2.x)
RETURN_SHAPES = [
    ("text-generation", '`[{"generated_text"}]` per input (n with num_return_sequences)', '`{"generated_text"}`'),
    (
        "text-classification",
        'one input: `[{"label", "score"}]`; a list: one dict each; with `top_k`: a list per input',
        '`{"label", "score"}` (a list when `top_k` is not 1)',
    ),
    (
        "token-classification",
        '`aggregation_strategy="none"`: `{"entity", "score", "index", "word", "start", "end"}` per token; '
        'else `{"entity_group", ...}`',
        '`"simple"` by default; `{"entity", "word", "start", "end", "score"}`',
    ),
    ("summarization", '`[{"summary_text"}]`', '`{"summary_text"}`'),
    ("translation", '`[{"translation_text"}]`', '`{"translation_text"}`'),
    ("text2text-generation", '`[{"generated_text"}]`', '`{"generated_text"}`'),
    (
        "fill-mask, question-answering, zero-shot-classification, table-question-answering, feature-extraction, "
        "vision/audio tasks",
        "transformers' shapes",
        "the same",
    ),
    ("chat, text2emb (2.x tasks)", "the message / the vector", "the same"),
]

CLI = [
    ("openmind-cli list [--cache_dir D]", "openmind cache ls"),
    ("openmind-cli pull ID [--revision R] [--local_dir D]", "openmind pull ID [--revision R] [--local-dir D]"),
    ("openmind-cli push ID --folder_path F [--commit_message M]", "openmind push F ID [-m M]"),
    ("openmind-cli rm ID", "openmind rm ID"),
    ("openmind-cli run MODEL --task T --input TEXT", "openmind run T --model MODEL --input TEXT"),
    ("openmind-cli run T --input '{\"text_inputs\": TEXT}'", "openmind run T --input TEXT"),
    ("openmind-cli chat MODEL (exit / clear)", "openmind chat --model MODEL (/exit / /clear)"),
    ("openmind-cli train x.yaml", "openmind train x.yaml (1.0 keys: the openmind1 dialect below)"),
    ("openmind-cli export merge.yaml", "openmind export --model ... --adapter ... --out ..."),
    (
        "openmind-cli lmeval --model M --tasks T --batch_size N",
        "openmind eval --model M --tasks T --eval-backend lm-eval --eval-batch-size N",
    ),  # fmt: skip
    ("openmind-cli env / deploy", "openmind env / deploy"),
    ("--any_flag (underscores)", "--any-flag (both spellings accepted by every verb)"),
    ("llamafactory-cli train x.yaml key=value", "openmind train x.yaml key=value"),
]


def _value(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _fate(dialect: Any, key: str, native: set[str]) -> str:
    from openmind.core.dialects import Ignore, Map, PassThrough

    rule = dialect.rule(key, native)
    if rule is None:
        return "same key"
    if isinstance(rule, Map):
        if rule.target and rule.convert is None:
            return "same key" if rule.target == key else f"`{rule.target}`"
        text = f"`{rule.target}` (value converted)" if rule.target else "mapped by value"
        return text + (f": {rule.note}" if rule.note else "")
    if isinstance(rule, PassThrough):
        return "passed to the trainer (`trainer_args`)"
    if isinstance(rule, Ignore):
        return f"ignored: {rule.reason}"
    default = rule.default
    return f"not supported ({rule.instead}); harmless at {_value(default)}"


def _dialect_section(name: str) -> list[str]:
    from openmind.core import args as A
    from openmind.core import dialects as D

    dialect = D.load(name)
    native = set(A._key_index())
    keys = sorted(set(dialect.reference) | set(dialect.rules))
    rows = [[f"`{k}`", _fate(dialect, k, native)] for k in keys]
    passed = sorted(k for k in dialect.passthrough if dialect.rule(k, native).__class__.__name__ == "PassThrough")
    lines = [
        f"### {dialect.title} (`dialect: {dialect.name}`)",
        "",
        markdown_table(["key", "openmind"], rows),
        "",
        "Defaults applied when this dialect is used: "
        + ", ".join(f"`{k}: {v!r}`" for k, v in dialect.defaults.items())
        + ".",
        "",
        f"Passed to the trainer unchanged (transformers `TrainingArguments`, {len(passed)} keys): "
        + ", ".join(f"`{k}`" for k in passed)
        + ". Its other keys are openmind's own (`learning_rate`, `output_dir`, ...).",
        "",
    ]
    return lines


def _llamafactory_examples() -> list[str]:
    from openmind.core.compat.llamafactory_examples import OUTCOMES, markdown_rows

    runs = sum(1 for outcome, _, _ in OUTCOMES.values() if outcome == "runs")
    return [
        "### LLaMA-Factory's example files",
        "",
        f"LLaMA-Factory 0.9.5's {len(OUTCOMES)} example YAML files, each run unchanged except for the model, "
        "the output folder and tiny-run sizes (`openmind train FILE`, `openmind chat FILE` for `inference/`, "
        f"`openmind export FILE` for `merge_lora/`; test: `test_llamafactory_examples.py`): {runs} run, the "
        "others stop with the coded error below, at the `file:line` of the key named (or the field), saying "
        "what to do instead, and write nothing.",
        "",
        markdown_table(["example", "in openmind", "what happens"], markdown_rows()),
        "",
    ]


def _builtin_rows() -> list[list[str]]:
    from openmind.core.compat.openmind1 import BUILTIN_DATASETS

    return [
        [f"`{name}`", f"`om::{entry['hub_url']}`" + (f" ({entry['formatting']})" if "formatting" in entry else "")]
        for name, entry in BUILTIN_DATASETS.items()
    ]


def markdown() -> str:
    from openmind.core.errors import OpenMindError
    from openmind.core.plugins import get_registry

    registry = get_registry()
    task_rows = []
    for name in OPENMIND1_TASKS:
        try:
            task = registry.task(name)
            task_rows.append([f"`{name}`", f"`{task.name}`"])
        except OpenMindError:
            task_rows.append([f"`{name}`", "not available (OM-I001); `openmind list tasks` shows the tasks"])
    lines = [
        "# Migrating from openMind 1.0 (and LLaMA-Factory configurations)",
        "",
        "Generated by `openmind docs` from the code that implements each mapping; "
        "`openmind docs --check` fails when it is stale.",
        "",
        "## Python names",
        "",
        markdown_table(["openMind 1.0", "2.x"], [[f"`{k}`", v] for k, v in NAMES.items()]),
        "",
        "`import openmind` imports no framework; each name is resolved on first use. Names 2.x does not "
        "carry raise OM-C001 naming their replacement (an `ImportError`).",
        "",
        "## pipeline() keywords",
        "",
        markdown_table(["1.0 / transformers", "2.x"], [[f"`{k}`", v] for k, v in PIPELINE_KEYWORDS.items()]),
        "",
        "## Return values",
        "",
        "`pipeline()` returns what openMind 1.0 (transformers' pipelines) returned, key for key; "
        '`pipeline(..., return_format="openmind")` gives 2.x\'s structured outputs (what `openmind run` prints). '
        "Decoding defaults are the model's `generation_config` (greedy unless it says otherwise), as in 1.0.",
        "",
        markdown_table(
            ["task", "default (1.0 / transformers)", 'return_format="openmind"'],
            [[f"`{t}`" if "," not in t else t, a, b] for t, a, b in RETURN_SHAPES],
        ),
        "",
        "## Tasks",
        "",
        markdown_table(["openMind 1.0 task", "2.x task"], task_rows),
        "",
        "## Built-in datasets",
        "",
        "1.0's built-in dataset names resolve, in a 1.0 configuration, to the Modelers datasets 1.0 named "
        "(pulled on demand through the hub layer; entries of `custom_dataset_info` with the same name win):",
        "",
        markdown_table(["1.0 name", "Modelers dataset"], _builtin_rows()),
        "",
        "## Command line",
        "",
        "`openmind-cli` keeps 1.0's command lines and prints the 2.x form once; `openmind` takes the 2.x forms.",
        "",
        markdown_table(["1.0", "2.x"], [[f"`{a}`", f"`{b}`"] for a, b in CLI]),
        "",
        "## YAML keys",
        "",
        "A configuration file's keys are read through a *config dialect*: a top-level `dialect: NAME` key "
        "(or `--dialect NAME`) chooses it; else, when every key is an openmind key, none; else the registered "
        "dialect that knows the most of the other keys (ties: `openmind-cli` prefers `openmind1`, then the "
        "higher priority, `llamafactory`). Every key that cannot be honoured is reported at once with its "
        "`file:line` (OM-A001 unknown, OM-C002 not supported, OM-A002 bad value); each renamed key prints one "
        "note line. Plugins add dialects with the `openmind_register_config_dialects` hook.",
        "",
    ]
    for name in ("openmind1", "llamafactory"):
        lines += _dialect_section(name)
    lines += _llamafactory_examples()
    return "\n".join(lines).rstrip() + "\n"
