"""Config dialects: LLaMA-Factory's and openMind 1.0's YAML keys through one key-mapping machinery.

LLaMA-Factory's own example YAMLs are vendored (with their licence) in tests/data/llamafactory.
"""

from __future__ import annotations

import re
from importlib.util import find_spec
from pathlib import Path
from types import SimpleNamespace

import pytest

from openmind.core import args as A
from openmind.core import dialects as D
from openmind.core.compat.reference_keys import HF_TRAINING, LLAMAFACTORY, OPENMIND1
from openmind.core.errors import OpenMindError

LF = Path(__file__).resolve().parents[3] / "tests" / "data" / "llamafactory"
TRAIN = ["model", "template", "data", "finetuning", "training"]
EXPORT = ["model", "export"]
CHAT = ["model", "template", "generation"]


def groups_for(path: Path) -> list[str]:
    return EXPORT if "merge_lora" in path.parts else CHAT if "inference" in path.parts else TRAIN


#: vendored example -> the coded error it gets (every other example parses)
EXPECTED_ERRORS = {
    "extras/adam_mini/qwen2_full_sft.yaml": ("OM-C002", ["use_adam_mini"]),
    "extras/apollo/llama3_full_sft.yaml": ("OM-C002", ["use_apollo", "apollo_layerwise", "apollo_rank", "pure_bf16"]),
    "extras/asft/llama2_full_asft.yaml": ("OM-C002", ["use_asft_loss"]),
    "extras/asft/qwen2_full_asft.yaml": ("OM-C002", ["use_asft_loss", "asft_alpha"]),
    "extras/badam/llama3_full_sft.yaml": ("OM-C002", ["use_badam", "badam_verbose"]),
    "extras/dft/qwen2_full_sft.yaml": ("OM-C002", ["use_dft_loss"]),
    "extras/eaft/qwen25_05b_eaft_full.yaml": ("OM-C002", ["use_eaft_loss"]),
    "extras/fp8/llama3_fp8_deepspeed_sft.yaml": ("OM-C002", ["fp8", "fp8_backend"]),
    "extras/fp8/llama3_fp8_fsdp_sft.yaml": (
        "OM-C002",  # fsdp_transformer_layer_cls_to_wrap: a transformers 4 key that belongs in fsdp_config now
        ["fp8", "fp8_backend", "fp8_enable_fsdp_float8_all_gather", "fsdp_transformer_layer_cls_to_wrap"],
    ),
    "extras/galore/llama3_full_sft.yaml": ("OM-C002", ["use_galore", "galore_layerwise", "galore_rank", "pure_bf16"]),
    "extras/llama_pro/llama3_freeze_sft.yaml": ("OM-C002", ["use_llama_pro"]),
    "extras/loraplus/llama3_lora_sft.yaml": ("OM-C002", ["loraplus_lr_ratio"]),
    # optim: paged_adamw_8bit (a transformers optimizer) needs bitsandbytes: reported before loading when missing
    "extras/mod/llama3_full_sft.yaml": (
        "OM-C002",
        ["mixture_of_depths", "pure_bf16", *([] if find_spec("bitsandbytes") else ["optim"])],
    ),
    "extras/muon/qwen2_full_sft.yaml": ("OM-C002", ["use_muon"]),
    "extras/nlg_eval/llama3_lora_predict.yaml": ("OM-C002", ["do_predict"]),
    "extras/oft/llama3_oft_sft.yaml": ("OM-C002", ["finetuning_type"]),
    "extras/oft/qwen2_5vl_oft_sft.yaml": ("OM-C002", ["image_max_pixels", "finetuning_type"]),
    "extras/pissa/llama3_lora_sft.yaml": ("OM-C002", ["pissa_init", "pissa_convert"]),
    "extras/qoft/llama3_oft_sft_awq.yaml": ("OM-C002", ["finetuning_type"]),
    "extras/qoft/llama3_oft_sft_bnb_npu.yaml": ("OM-C002", ["double_quantization", "finetuning_type"]),
    "extras/qoft/llama3_oft_sft_gptq.yaml": ("OM-C002", ["finetuning_type"]),
    "merge_lora/qwen3_gptq.yaml": ("OM-C002", ["export_quantization_bit", "export_quantization_dataset"]),
    # image_max_pixels: openmind-mm's multimodal group takes it (not loaded by these framework-free tests)
    "train_full/qwen3vl_full_sft.yaml": ("OM-C002", ["image_max_pixels"]),
    "train_lora/qwen3_lora_kto.yaml": ("OM-A002", ["stage"]),
    "train_lora/qwen3_lora_sft_ray.yaml": ("OM-C002", ["ray_num_workers"]),
    "train_lora/qwen3_preprocess.yaml": ("OM-C002", ["tokenized_path"]),
    "train_lora/qwen3vl_lora_dpo.yaml": ("OM-C002", ["image_max_pixels"]),
    "train_lora/qwen3vl_lora_sft.yaml": ("OM-C002", ["image_max_pixels"]),
    "train_qlora/qwen3_lora_sft_bnb_npu.yaml": ("OM-C002", ["double_quantization"]),
}

EXAMPLES = sorted(p.relative_to(LF / "examples").as_posix() for p in (LF / "examples").rglob("*.yaml"))


def key_line(path: Path, key: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith(f"{key}:"):
            return number
    raise AssertionError(f"{key} not in {path}")


def test_vendored_examples_are_there_with_licence():
    assert len(EXAMPLES) == 47
    assert "Apache License" in (LF / "LICENSE").read_text()
    assert "llamafactory==0.9.5" in (LF / "SOURCE.md").read_text()


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_llamafactory_example_parses_or_reports_every_problem_at_once(name, capsys):
    path = LF / "examples" / name
    expected = dict(EXPECTED_ERRORS)
    from openmind.core.training.wrapper import training_stages

    if "kto" in training_stages():  # the kto stage is registered (openmind-nlp installed): the example parses
        expected.pop("train_lora/qwen3_lora_kto.yaml")
    if name not in expected:
        ns = A.parse(groups_for(path), config=path)
        assert ns.dialect == "llamafactory"
        return
    code, keys = expected[name]
    with pytest.raises(OpenMindError) as info:
        A.parse(groups_for(path), config=path)
    err = info.value
    assert err.code == code
    # every problem of the file in one error, each with its file:line
    for key in keys:
        assert f"{path}:{key_line(path, key)}" in err.message or err.location == f"{path}:{key_line(path, key)}", key
    if len(keys) > 1:
        assert err.message.startswith(f"{len(keys)} problems")


def test_lora_sft_example_maps_every_key(capsys):
    path = LF / "examples" / "train_lora" / "qwen3_lora_sft.yaml"
    ns = A.parse(TRAIN, config=path)
    assert ns.model.model == "Qwen/Qwen3-4B-Instruct-2507"
    assert ns.data.dataset == ["identity", "alpaca_en_demo"] and ns.data.dataset_dir == "data"  # LF default
    assert ns.data.cutoff_len == 2048 and ns.data.max_samples == 1000 and ns.data.preprocessing_num_workers == 16
    assert ns.data.truncation == "proportional"  # LLaMA-Factory cuts prompt and answer in proportion
    assert ns.finetuning.finetuning_type == "lora" and ns.finetuning.lora_target == ["all"]
    t = ns.training
    assert t.mixed_precision == "bf16" and t.learning_rate == 1e-4 and t.gradient_accumulation_steps == 8
    assert t.report_to == ["none"] and t.resume is False and t.gradient_checkpointing is True
    assert t.trainer_args == {"dataloader_num_workers": 4, "save_only_model": False, "ddp_timeout": 180000000}
    err = capsys.readouterr().err
    # one note per renamed / passed-through / ignored key, with file:line
    assert f"note: {path}:2: LLaMA-Factory key 'model_name_or_path' -> model: 'Qwen/Qwen3-4B-Instruct-2507'" in err
    assert f"note: {path}:7: LLaMA-Factory key 'do_train' ignored" in err
    assert f"note: {path}:36: LLaMA-Factory key 'bf16' -> mixed_precision: 'bf16'" in err
    assert f"note: {path}:37: LLaMA-Factory key 'ddp_timeout' passed to the trainer" in err
    assert "max_samples" not in err  # same key, same meaning: nothing to say


def test_qlora_and_export_examples():
    ns = A.parse(TRAIN, config=LF / "examples" / "train_qlora" / "qwen3_lora_sft_otfq.yaml")
    assert ns.finetuning.finetuning_type == "qlora" and ns.finetuning.quantization_bit == 4
    ns = A.parse(EXPORT, config=LF / "examples" / "merge_lora" / "qwen3_lora_sft.yaml")
    assert ns.model.adapter == "saves/qwen3-4b/lora/sft" and ns.export.out == "saves/qwen3_sft_merged"
    assert ns.export.max_shard_size == "5GB"


def test_every_llamafactory_key_has_a_fate():
    """Each key of LLaMA-Factory's argument classes is mapped, passed through, ignored or reported."""
    dialect = D.load("llamafactory")
    native = set(A._key_index())
    for key in LLAMAFACTORY:
        rule = dialect.rule(key, native)
        assert rule is not None or key in native, key
    for key in HF_TRAINING:
        assert dialect.rule(key, native) is not None or key in native, key


def test_openmind1_yaml_is_detected_and_mapped(tmp_path, capsys, monkeypatch):
    import json

    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path / "cache"))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "dataset_info.json").write_text(
        json.dumps(
            {
                "my_sft": {"local_path": "./sft", "file_name": "train.jsonl", "split": "train"},
                "alpaca_zh_51k": {"hub_url": "AI-Research/alpaca_zh_51k"},
            }
        )
    )
    config = tmp_path / "train_sft.yaml"
    config.write_text(
        "model_name_or_path: /models/qwen2-7b\n"
        "stage: sft\n"
        "do_train: true\n"
        "finetuning_type: lora\n"
        "lora_target_modules: q_proj,v_proj\n"
        "dataset: alpaca_zh_51k\n"
        f"custom_dataset_info: {tmp_path}/data/dataset_info.json\n"
        "cutoff_len: 1024\n"
        "max_length: 1024\n"
        "output_dir: ./saves\n"
        "per_device_train_batch_size: 2\n"
        "gradient_accumulation_steps: 2\n"
        "learning_rate: 1.0e-5\n"
        "bf16: true\n"
        "logging_steps: 1\n"
        "save_steps: 100\n"
        "max_steps: 10\n"
        "seed: 1234\n"
    )
    ns = A.parse(TRAIN, config=config)
    assert ns.dialect == "openmind1"
    assert ns.model.model == "/models/qwen2-7b" and ns.finetuning.lora_target == ["q_proj", "v_proj"]
    assert ns.training.mixed_precision == "bf16"
    # 1.0's dataset_info entries, rewritten to the layout the data engine reads
    registry = json.loads((Path(ns.data.dataset_dir) / "dataset_info.json").read_text())
    assert registry == {
        "alpaca_zh_51k": {"om_hub_url": "AI-Research/alpaca_zh_51k"},
        "my_sft": {"file_name": str(tmp_path / "data" / "sft" / "train.jsonl"), "split": "train"},
    }
    assert ns.training.gradient_checkpointing is True  # 1.0's default
    assert "lora_target_modules' -> lora_target: 'q_proj,v_proj'" in capsys.readouterr().err


def test_openmind1_builtin_dataset_names_resolve_to_their_hub_datasets(tmp_path, monkeypatch):
    """1.0's built-in names (its wheel's flow/configs/dataset_info.json) become Modelers entries under
    the user's custom_dataset_info (1.0: dataset_info.update(custom)); a dataset_dir of the user's wins."""
    import json

    from openmind.core.compat.openmind1 import BUILTIN_DATASETS

    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path / "cache"))
    assert sorted(BUILTIN_DATASETS) == [
        "alpaca",
        "alpaca-gpt4-data",
        "alpaca-gpt4-data-zh",
        "alpaca_zh_51k",
        "sharegpt_gpt4",
    ]
    config = tmp_path / "a.yaml"
    head = "model_name_or_path: m\nstage: sft\ndo_train: true\nlora_target_modules: q_proj\noutput_dir: out\n"

    def registry(ns):
        return json.loads((Path(ns.data.dataset_dir) / "dataset_info.json").read_text())

    config.write_text(head + "dataset: alpaca_zh_51k, sharegpt_gpt4\n")
    ns = A.parse(TRAIN, config=config)
    assert ns.dialect == "openmind1" and ns.data.dataset == ["alpaca_zh_51k", "sharegpt_gpt4"]
    assert registry(ns) == {
        "alpaca_zh_51k": {"om_hub_url": "AI-Research/alpaca_zh_51k"},
        "sharegpt_gpt4": {"om_hub_url": "AI-Research/sharegpt_gpt4", "formatting": "sharegpt"},
    }
    custom = tmp_path / "custom.json"
    custom.write_text(json.dumps({"alpaca": {"local_path": "./mine", "file_name": "a.json"}}))
    config.write_text(head + f"dataset: alpaca,alpaca-gpt4-data\ncustom_dataset_info: {custom}\n")
    assert registry(A.parse(TRAIN, config=config)) == {
        "alpaca": {"file_name": str(tmp_path / "mine" / "a.json")},  # the user's entry wins, as in 1.0
        "alpaca-gpt4-data": {"om_hub_url": "AI_Connect/alpaca-gpt4-data"},
    }
    config.write_text(head + f"dataset: alpaca\ndataset_dir: {tmp_path}\n")
    assert A.parse(TRAIN, config=config).data.dataset_dir == str(tmp_path)


def test_openmind1_defaults_and_export(tmp_path):
    config = tmp_path / "full.yaml"
    config.write_text("model_id: Qwen2-7B\nload_in_4bit: true\noutput_dir: out\n")
    with pytest.raises(OpenMindError) as info:
        A.parse(TRAIN, config=config)
    assert info.value.code == "OM-C002" and info.value.location == f"{config}:1"
    assert "model: ORG/NAME" in info.value.message
    config.write_text("model_name_or_path: m\nuse_gradient_checkpointing: false\noutput_dir: out\n")
    ns = A.parse(TRAIN, config=config, dialect="openmind1")
    assert ns.finetuning.finetuning_type == "full" and ns.training.gradient_checkpointing is False
    merge = tmp_path / "merge.yaml"
    merge.write_text("model_name_or_path: base\nadapter_models: lora_out\noutput_dir: merged\nper_shard_size: 2\n")
    ns = A.parse(EXPORT, config=merge, prefer_dialect="openmind1")
    assert (ns.model.model, ns.model.adapter, ns.export.out, ns.export.max_shard_size) == (
        "base",
        "lora_out",
        "merged",
        "2GB",
    )


def test_detection_marker_and_ties(tmp_path):
    shared = tmp_path / "shared.yaml"
    shared.write_text("model_name_or_path: m\ndo_train: true\n")  # keys both tools know
    assert A.parse(TRAIN, config=shared).dialect == "llamafactory"  # higher priority
    assert A.parse(TRAIN, config=shared, prefer_dialect="openmind1").dialect == "openmind1"
    marked = tmp_path / "marked.yaml"
    marked.write_text("dialect: om1\nmodel_name_or_path: m\n")
    assert A.parse(TRAIN, config=marked).dialect == "openmind1"
    marked.write_text("dialect: llama_factory\nmodel_name_or_path: m\n")
    with pytest.raises(OpenMindError) as info:
        A.parse(TRAIN, config=marked)
    assert info.value.code == "OM-C003" and "llama-factory" in info.value.message
    native = tmp_path / "native.yaml"
    native.write_text("model: m\nlearning_rate: 1e-3\n")
    assert A.parse(TRAIN, config=native).dialect is None


def test_unknown_keys_all_at_once_with_line_and_suggestion(tmp_path):
    config = tmp_path / "typos.yaml"
    config.write_text("model: m\nlearning_rat: 1e-3\nlora_rnak: 4\nmax_new_tokens: 5\n")
    with pytest.raises(OpenMindError) as info:
        A.parse(TRAIN, config=config)
    err = info.value
    assert err.code == "OM-A001" and err.message.startswith("3 problems")
    assert f"{config}:2: unknown argument 'learning_rat'; did you mean 'learning_rate'" in err.message
    assert f"{config}:3: unknown argument 'lora_rnak'; did you mean 'lora_rank'" in err.message
    assert f"{config}:4: 'max_new_tokens' belongs to the 'generation' arguments" in err.message


def test_unknown_and_bad_values_in_a_dialect_file_reported_together(tmp_path):
    config = tmp_path / "lf.yaml"
    config.write_text("model_name_or_path: m\nstage: ppo\nuse_galore: true\nnot_a_key: 1\n")
    with pytest.raises(OpenMindError) as info:
        A.parse(TRAIN, config=config)
    msg = info.value.message
    assert info.value.code == "OM-A001" and msg.startswith("3 problems")
    assert f"{config}:2" in msg and "'ppo' is not one of" in msg
    assert f"{config}:3: LLaMA-Factory key 'use_galore'" in msg and f"{config}:4: unknown argument" in msg


def test_command_line_overrides_underscores_and_negative_numbers(tmp_path):
    path = LF / "examples" / "train_lora" / "qwen3_lora_sft.yaml"
    ns = A.parse(
        TRAIN,
        config=path,
        overrides=["model_name_or_path=/tiny", "output_dir=/tmp/x", "--learning_rate", "-1e-4", "--max-steps=2"],
    )
    assert ns.model.model == "/tiny" and ns.training.output_dir == "/tmp/x"
    assert ns.training.learning_rate == -1e-4 and ns.training.max_steps == 2
    assert A.parse_overrides(["--lr-x", "-3", "a=b=c"]) == {"lr_x": "-3", "a": "b=c"}
    with pytest.raises(OpenMindError):
        A.parse_overrides(["stray"])


def test_trainer_args_is_a_typed_mapping(tmp_path):
    ns = A.parse(["training"], overrides={"trainer_args": '{"dataloader_num_workers": 2}'})
    assert ns.training.trainer_args == {"dataloader_num_workers": 2}
    with pytest.raises(OpenMindError) as info:
        A.parse(["training"], overrides={"trainer_args": "[1, 2]"})
    assert info.value.code == "OM-A002"


def _parser_for(groups):
    from openmind.core.cli.main import _Parser

    parser = _Parser(prog="openmind")
    sub = parser.add_subparsers(dest="command")
    train = sub.add_parser("train")
    train.add_argument("config", nargs="?")
    A.add_to_parser(train, groups)
    sub.add_parser("env").add_argument("--as-json", action="store_true")
    verb = SimpleNamespace(name="train", aliases=[])
    return parser, {"train": (verb, SimpleNamespace(groups=tuple(groups)))}


def test_cli_argv_underscores_negative_numbers_and_key_value():
    from openmind.core.cli.main import split_argv

    parser, commands = _parser_for(TRAIN)
    argv = [
        "train",
        "x.yaml",
        "--output_dir",
        "out",
        "--learning-rate",
        "-1e-4",
        "--model_name_or_path",
        "/tiny",
        "max_steps=2",
        "--lora_rank=4",
    ]
    kept, extra = split_argv(parser, commands, argv)
    assert kept == ["train", "x.yaml", "--output-dir", "out", "--learning-rate=-1e-4", "--lora-rank=4"]
    assert extra == ["--model_name_or_path", "/tiny", "max_steps=2"]
    args = parser.parse_args(kept)
    assert args.learning_rate == "-1e-4" and args.output_dir == "out"
    kept, extra = split_argv(parser, commands, ["env", "--as_json"])
    assert kept == ["env", "--as-json"] and extra == []


def test_a_plugin_registers_a_dialect(tmp_path, monkeypatch):
    import openmind_dialect_fixture as fixture  # noqa: F401 - below

    from openmind.core import plugins
    from openmind.core.hookspecs import hookimpl
    from openmind.core.plugins import PluginHost
    from openmind.core.specs import ConfigDialectSpec

    def register(register):
        register(ConfigDialectSpec(name="swift", impl="openmind_dialect_fixture:DIALECT"))

    host = PluginHost(
        load_entry_points=False, extra={"swift": SimpleNamespace(openmind_register_config_dialects=hookimpl(register))}
    )
    assert not host.registry.problems
    monkeypatch.setattr(plugins, "_REGISTRY", host.registry)
    config = tmp_path / "swift.yaml"
    config.write_text("model_id_or_path: m\nsft_type: lora\n")
    ns = A.parse(TRAIN, config=config)
    assert ns.dialect == "swift" and ns.model.model == "m" and ns.finetuning.finetuning_type == "lora"


@pytest.fixture(autouse=True)
def _fixture_module(monkeypatch):
    import sys
    import types

    module = types.ModuleType("openmind_dialect_fixture")
    module.DIALECT = D.Dialect(
        name="swift", title="ms-swift", rules={"model_id_or_path": D.Map("model"), "sft_type": D.Map("finetuning_type")}
    )
    monkeypatch.setitem(sys.modules, "openmind_dialect_fixture", module)


def test_reference_tables_are_complete():
    # generated by tools/gen_dialect_keys.py from the reference sources
    assert len(LLAMAFACTORY) > 200 and LLAMAFACTORY["dataset_dir"] == ("DataArguments", "data")
    assert OPENMIND1["lora_target_modules"][0] == "LoraArguments" and "custom_dataset_info" in OPENMIND1
    assert "ddp_timeout" in HF_TRAINING and "per_device_train_batch_size" in HF_TRAINING
    assert all(re.fullmatch(r"[a-z_0-9]+", k) for k in LLAMAFACTORY)


def test_migrating_page_lists_every_key_and_name():
    from openmind.core.compat.migrating import markdown

    text = markdown()
    for key in list(LLAMAFACTORY) + list(OPENMIND1):
        assert f"| `{key}` |" in text, key
    for name in ("OmDataset", "PreTrainer", "openmind.utils.hub", "torch_dtype", "openmind-cli lmeval"):
        assert name in text
    assert any(
        f"| `feature-extraction` | {to} |" in text
        for to in (
            "`feature-extraction`",
            "`text2emb`",
            "not available (OM-I001); `openmind list tasks` shows the tasks",
        )
    )


def test_a_passed_through_optimizer_without_its_package_is_reported_with_file_line_and_pip_name(tmp_path, monkeypatch):
    """``optim: galore_adamw`` is a transformers optimizer (a trainer pass-through key) that needs
    galore-torch: reported at parse time (before any model is loaded) with file:line and the pip name,
    not as the ImportError transformers raises after loading the model (it was OM-P004)."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "galore_torch" else real(name, *a)
    )
    config = tmp_path / "galore.yaml"
    config.write_text(
        "model_name_or_path: m\nstage: sft\ndataset: d\noptim: galore_adamw\noptim_target_modules: [q_proj]\n"
    )
    with pytest.raises(OpenMindError) as info:
        A.parse(TRAIN, config=config)
    assert info.value.code == "OM-X001" and info.value.location == f"{config}:4"
    assert "pip install galore-torch" in info.value.message and "'optim'" in info.value.message
    # an optimizer of torch itself needs nothing
    config.write_text("model_name_or_path: m\nstage: sft\ndataset: d\noptim: adamw_torch\n")
    assert A.parse(TRAIN, config=config).training.trainer_args == {"optim": "adamw_torch"}
