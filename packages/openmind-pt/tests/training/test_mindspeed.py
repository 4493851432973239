"""The MindSpeed backend (plugin ``pt-mindspeed``): its registration, the Ascend guard, and the
translation of the unified arguments and data into MindSpeed-LLM's command lines (golden command
lines; every unmappable field a coded error naming it). Running MindSpeed-LLM needs Ascend; nothing
here pretends to run it."""

from __future__ import annotations

import json

import pytest

from openmind.nlp.testing.conformance import raises_code

PY = "/py/bin/python"
HOME = "/opt/MindSpeed-LLM"


def _args(model_dir, **overrides):
    from openmind.core import args as A

    base = {"model": str(model_dir), "dataset": ["data.jsonl"], "output_dir": "/runs/a", "report_to": ["none"]}
    base.update(overrides)
    return A.parse(("model", "template", "data", "finetuning", "training", "mindspeed"), overrides=base)


def _steps(args, stage, model_dir, samples=100):
    from openmind.core.api import read_config
    from openmind.pt.mindspeed.translate import plan_steps

    return plan_steps(
        args, stage, read_config(model_dir), model_dir=str(model_dir), home=HOME, samples=samples, python=PY
    )


def _qwen_dir(tmp_path, kind):
    """A Qwen2 / Qwen3 config.json as transformers writes it (the translation reads only the config)."""
    import transformers

    cls = {"qwen2": transformers.Qwen2Config, "qwen3": transformers.Qwen3Config}[kind]
    config = cls(
        hidden_size=64,
        intermediate_size=160,
        num_hidden_layers=3,
        num_attention_heads=8,
        num_key_value_heads=2,
        head_dim=16 if kind == "qwen3" else None,
        vocab_size=151936,
        max_position_embeddings=4096,
        rope_theta=1000000.0,
        tie_word_embeddings=kind == "qwen3",
    )
    folder = tmp_path / kind
    config.save_pretrained(folder)
    return folder


def test_plugin_registers_trainers_marked_needs_ascend():
    from openmind.core.api import select
    from openmind.core.plugins import get_registry

    registry = get_registry()
    for stage in ("pt", "sft", "dpo"):
        specs = [t for t in registry.trainers_for(stage, "pt") if t.backend == "mindspeed"]
        assert len(specs) == 1 and "needs Ascend" in specs[0].note
        assert specs[0].finetuning_types == ("full", "lora") and specs[0].component.plugin == "pt-mindspeed"
        assert "torch-npu>=2.1" in specs[0].requires
        # torch_npu / MindSpeed are not installed here: select() falls back to the default backend
        chosen, reason = select("trainer", stage, "pt")
        assert chosen.backend == "default" and "backend default" in reason
    assert not [t for t in registry.trainers_for("kto", "pt") if t.backend == "mindspeed"]
    group = [g for g in registry.argument_groups_for("train") if g.name == "mindspeed"]
    assert group and group[0].component.plugin == "pt-mindspeed"
    from openmind.nlp.training.cli import TrainCommand

    command = TrainCommand()
    command.verb = "train"
    assert "mindspeed" in command.all_groups()  # `openmind train --tensor-parallel-size 2 ...`
    # the SDK takes the same keys: openmind.train(..., tensor_parallel_size=2)
    from openmind.nlp.training.base import SFTWrapper

    ns = SFTWrapper.resolve(None, {"model": "m", "dataset": "d", "tensor_parallel_size": 2})
    assert ns.mindspeed.tensor_parallel_size == 2 and "mindspeed" in SFTWrapper.all_groups()


def test_matrix_lists_the_backend_as_needing_ascend():
    from openmind.core.cli.docs import support_markdown

    rows = [line for line in support_markdown().splitlines() if "| pt | mindspeed |" in line]
    assert [r.split(" | ")[0] for r in rows] == ["| dpo", "| pt", "| sft"], rows
    assert all("needs Ascend" in row and "| full, lora |" in row for row in rows)


def test_guard_is_a_coded_error_before_any_work(tiny_dir, sft_file, tmp_path):
    from openmind.pt.mindspeed.trainer import MindSpeedTrainer

    args = _args(tiny_dir, dataset=[str(sft_file)], output_dir=str(tmp_path / "run"), template="llama2")
    trainer = MindSpeedTrainer(args, stage="sft")
    with raises_code("OM-PT001") as info:
        trainer.check()
    assert "needs Ascend" in info.value.message and "torch_npu" in info.value.message
    assert "MindSpeed-LLM" in info.value.hint and "pt-mindspeed" in info.value.hint
    assert trainer.rows is None and not (tmp_path / "run").exists()  # nothing loaded or written
    assert MindSpeedTrainer.launch_command(args, ["a.yaml"]) is None  # it runs torchrun itself


def test_prepare_translates_a_real_dataset(tiny_dir, sft_file, pref_file, tmp_path):
    """What check() does after the guard: the model resolved, every row loaded through openmind's
    data engine and translated, the iterations counted from the rows."""
    from openmind.pt.mindspeed.trainer import MindSpeedTrainer

    args = _args(tiny_dir, dataset=[str(sft_file)], output_dir=str(tmp_path / "run"), template="llama2")
    steps = MindSpeedTrainer(args, stage="sft").prepare(HOME)
    train = steps[2].argv
    # 160 rows x 3 epochs / (batch 4 x accumulation 1 x 1 process) = 120 iterations
    assert train[train.index("--train-iters") + 1] == "120" and train[train.index("--global-batch-size") + 1] == "4"
    assert steps[0].argv[steps[0].argv.index("--input") + 1] == str(tmp_path / "run" / "mindspeed/data/train.jsonl")
    assert not (tmp_path / "run").exists()  # prepare writes nothing

    args = _args(tiny_dir, dataset=[str(pref_file)], output_dir=str(tmp_path / "dpo"), template="llama2", max_steps=5)
    trainer = MindSpeedTrainer(args, stage="dpo")
    assert trainer.prepare(HOME)[2].argv[11] == "posttrain_gpt.py" and len(trainer.rows) == 96
    args = _args(tiny_dir, dataset=[str(sft_file)], output_dir=str(tmp_path / "x"), template="llama2", packing=True)
    with raises_code("OM-PT002"):
        MindSpeedTrainer(args, stage="sft").prepare(HOME)


def test_checkout_check_names_what_is_missing(tmp_path, monkeypatch):
    from openmind.pt.mindspeed.guard import HOME_ENV, check_home, find_home

    monkeypatch.setenv(HOME_ENV, str(tmp_path / "from-env"))
    assert find_home(None) == tmp_path / "from-env"
    assert find_home(str(tmp_path / "given")) == tmp_path / "given"
    home = tmp_path / "MindSpeed-LLM"
    (home / "mindspeed_llm").mkdir(parents=True)
    for name in ("preprocess_data.py", "convert_ckpt_v2.py", "posttrain_gpt.py", "pretrain_gpt.py"):
        (home / name).write_text("")
    with raises_code("OM-PT001") as info:
        check_home(home)
    assert "megatron" in info.value.message and info.value.location == "mindspeed_home"
    (home / "megatron").mkdir()
    assert check_home(home) == home
    monkeypatch.delenv(HOME_ENV)
    with raises_code("OM-PT001"):
        check_home(None)


def test_golden_sft_lora(tiny_dir):
    args = _args(
        tiny_dir,
        template="llama2",
        finetuning_type="lora",
        lora_rank=8,
        learning_rate=1e-4,
        lr_scheduler_type="cosine",
        warmup_ratio=0.1,
        num_train_epochs=2,
        per_device_train_batch_size=2,
        gradient_accumulation_steps=4,
        cutoff_len=512,
        seed=7,
        nproc=8,
        tensor_parallel_size=2,
        save_steps=50,
        logging_steps=5,
    )
    pre, hf2mg, train, mg2hf = _steps(args, "sft", tiny_dir, samples=1000)
    assert [s.name for s in (pre, hf2mg, train, mg2hf)] == ["preprocess", "convert-hf2mg", "train", "convert-mg2hf"]
    assert {pre.cwd, hf2mg.cwd, train.cwd, mg2hf.cwd} == {HOME}
    m, w = str(tiny_dir), "/runs/a/mindspeed"
    assert list(pre.argv) == [
        PY, "preprocess_data.py",
        "--input", f"{w}/data/train.jsonl",
        "--tokenizer-type", "PretrainedFromHF",
        "--tokenizer-name-or-path", m,
        "--output-prefix", f"{w}/data/train",
        "--handler-name", "SharegptStyleInstructionHandler",
        "--workers", "1",
        "--log-interval", "1000",
        "--prompt-type", "llama2",
        "--seq-length", "512",
    ]  # fmt: skip
    assert list(hf2mg.argv) == [
        PY, "convert_ckpt_v2.py",
        "--load-model-type", "hf", "--save-model-type", "mg",
        "--target-tensor-parallel-size", "2", "--target-pipeline-parallel-size", "1",
        "--load-dir", m, "--save-dir", f"{w}/base_mcore",
        "--model-type-hf", "llama2",
    ]  # fmt: skip
    # 8 devices / tp 2 = data parallel 4; global batch 2 x 4 x 4 = 32; 2 epochs of 1000 rows = 63 iterations
    assert list(train.argv) == [
        "torchrun", "--nproc_per_node", "8", "--nnodes", "1", "--node_rank", "0",
        "--master_addr", "localhost", "--master_port", "6000",
        "posttrain_gpt.py",
        "--tensor-model-parallel-size", "2", "--pipeline-model-parallel-size", "1",
        "--use-mcore-models",
        "--num-layers", "2", "--hidden-size", "64", "--ffn-hidden-size", "128", "--num-attention-heads", "4",
        "--max-position-embeddings", "2048", "--seq-length", "512",
        "--position-embedding-type", "rope", "--use-rotary-position-embeddings", "--rotary-base", "10000",
        "--normalization", "RMSNorm", "--norm-epsilon", "1e-06",
        "--swiglu", "--disable-bias-linear", "--untie-embeddings-and-output-weights",
        "--make-vocab-size-divisible-by", "1", "--padded-vocab-size", "32000",
        "--attention-dropout", "0.0", "--hidden-dropout", "0.0",
        "--tokenizer-type", "PretrainedFromHF", "--tokenizer-name-or-path", m,
        "--micro-batch-size", "2", "--global-batch-size", "32", "--train-iters", "63",
        "--lr", "0.0001", "--lr-decay-style", "cosine", "--min-lr", "0.0",
        "--weight-decay", "0.0", "--clip-grad", "1",
        "--adam-beta1", "0.9", "--adam-beta2", "0.999", "--adam-eps", "1e-08",
        "--seed", "7", "--bf16",
        "--attention-softmax-in-fp32", "--no-masked-softmax-fusion", "--no-gradient-accumulation-fusion",
        "--lr-warmup-fraction", "0.1",
        "--data-path", f"{w}/data/train", "--split", "100,0,0",
        "--handler-name", "SharegptStyleInstructionHandler",
        "--finetune", "--stage", "sft", "--is-instruction-dataset", "--prompt-type", "llama2",
        "--lora-r", "8", "--lora-alpha", "16",
        "--lora-target-modules", "linear_qkv", "linear_proj", "linear_fc1", "linear_fc2",
        "--load", f"{w}/base_mcore", "--save", f"{w}/checkpoints",
        "--no-load-optim", "--no-load-rng", "--ckpt-format", "torch",
        "--log-interval", "5", "--save-interval", "50", "--eval-interval", "63", "--eval-iters", "0",
        "--distributed-backend", "nccl", "--transformer-impl", "local",
    ]  # fmt: skip
    assert list(mg2hf.argv) == [
        PY, "convert_ckpt_v2.py", "--load-model-type", "mg", "--save-model-type", "hf",
        "--load-dir", f"{w}/base_mcore", "--lora-load", f"{w}/checkpoints",
        "--lora-r", "8", "--lora-alpha", "16",
        "--lora-target-modules", "linear_qkv", "linear_proj", "linear_fc1", "linear_fc2",
        "--save-lora-to-hf",
        "--save-dir", "/runs/a", "--hf-cfg-dir", m, "--model-type-hf", "llama2",
    ]  # fmt: skip


def test_golden_dpo_full_qwen3_pipeline_parallel(tmp_path):
    model = _qwen_dir(tmp_path, "qwen3")
    args = _args(
        model,
        template="qwen3",
        finetuning_type="full",
        pref_beta=0.2,
        pref_loss="ipo",
        max_steps=40,
        per_device_train_batch_size=1,
        mixed_precision="fp16",
        nproc=4,
        nnodes=2,
        node_rank=1,
        master_addr="10.0.0.1",
        master_port=29500,
        tensor_parallel_size=2,
        pipeline_parallel_size=2,
        sequence_parallel=True,
        gradient_checkpointing=True,
        lr_scheduler_type="constant",
        warmup_ratio=0.1,
        report_to=["tensorboard"],
        mindspeed_args=["--use-flash-attn", "--use-fused-rmsnorm"],
    )
    pre, hf2mg, train, mg2hf = _steps(args, "dpo", model)
    assert pre.argv[pre.argv.index("--handler-name") + 1] == "SharegptStylePairwiseHandler"
    assert pre.argv[pre.argv.index("--prompt-type") + 1] == "qwen3"
    assert hf2mg.argv[-2:] == ("--model-type-hf", "qwen3")
    assert ("--target-tensor-parallel-size", "2", "--target-pipeline-parallel-size", "2") == hf2mg.argv[6:10]
    w = "/runs/a/mindspeed"
    assert list(train.argv) == [
        "torchrun", "--nproc_per_node", "4", "--nnodes", "2", "--node_rank", "1",
        "--master_addr", "10.0.0.1", "--master_port", "29500",
        "posttrain_gpt.py",
        "--tensor-model-parallel-size", "2", "--pipeline-model-parallel-size", "2", "--sequence-parallel",
        "--use-mcore-models",
        "--num-layers", "3", "--hidden-size", "64", "--ffn-hidden-size", "160", "--num-attention-heads", "8",
        "--group-query-attention", "--num-query-groups", "2",
        "--spec", "mindspeed_llm.tasks.models.spec.qwen3_spec", "layer_spec", "--qk-layernorm",
        "--kv-channels", "16",
        "--max-position-embeddings", "4096", "--seq-length", "1024",
        "--position-embedding-type", "rope", "--use-rotary-position-embeddings", "--rotary-base", "1000000",
        "--normalization", "RMSNorm", "--norm-epsilon", "1e-06",
        "--swiglu", "--disable-bias-linear",
        "--make-vocab-size-divisible-by", "1", "--padded-vocab-size", "151936",
        "--attention-dropout", "0.0", "--hidden-dropout", "0.0",
        "--tokenizer-type", "PretrainedFromHF", "--tokenizer-name-or-path", str(model),
        "--micro-batch-size", "1", "--global-batch-size", "2", "--train-iters", "40",
        "--lr", "5e-05", "--lr-decay-style", "constant", "--min-lr", "0.0",
        "--weight-decay", "0.0", "--clip-grad", "1",
        "--adam-beta1", "0.9", "--adam-beta2", "0.999", "--adam-eps", "1e-08",
        "--seed", "42", "--fp16",
        "--attention-softmax-in-fp32", "--no-masked-softmax-fusion", "--no-gradient-accumulation-fusion",
        "--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1",
        "--data-path", f"{w}/data/train", "--split", "100,0,0",
        "--finetune", "--stage", "dpo", "--is-pairwise-dataset", "--prompt-type", "qwen3",
        "--dpo-loss-type", "ipo", "--dpo-beta", "0.2",
        "--load", f"{w}/base_mcore", "--save", f"{w}/checkpoints",
        "--no-load-optim", "--no-load-rng", "--ckpt-format", "torch",
        "--log-interval", "10", "--save-interval", "40", "--eval-interval", "40", "--eval-iters", "0",
        "--distributed-backend", "nccl", "--transformer-impl", "local",
        "--tensorboard-dir", f"{w}/tensorboard",
        "--use-flash-attn", "--use-fused-rmsnorm",
    ]  # fmt: skip
    assert list(mg2hf.argv) == [
        PY, "convert_ckpt_v2.py", "--load-model-type", "mg", "--save-model-type", "hf",
        "--load-dir", f"{w}/checkpoints",
        "--save-dir", "/runs/a", "--hf-cfg-dir", str(model), "--model-type-hf", "qwen3",
    ]  # fmt: skip


def test_golden_pt_full_qwen2(tmp_path):
    model = _qwen_dir(tmp_path, "qwen2")
    args = _args(model, finetuning_type="full", stage="pt", max_steps=100, cutoff_len=2048, mixed_precision="no")
    pre, _, train, _ = _steps(args, "pt", model)
    assert pre.argv[pre.argv.index("--handler-name") + 1] == "GeneralPretrainHandler"
    assert pre.argv[-3:] == ("--json-keys", "text", "--append-eod") and "--prompt-type" not in pre.argv
    assert train.argv[11] == "pretrain_gpt.py"
    i = train.argv.index("--data-path")
    assert train.argv[i : i + 4] == ("--data-path", "/runs/a/mindspeed/data/train_text_document", "--split", "100,0,0")
    for flag in ("--stage", "--finetune", "--prompt-type", "--bf16", "--fp16", "--lora-r", "--tensorboard-dir"):
        assert flag not in train.argv
    assert "--add-qkv-bias" in train.argv and "--untie-embeddings-and-output-weights" in train.argv
    assert train.argv[train.argv.index("--train-iters") + 1] == "100"
    assert train.argv[train.argv.index("--num-query-groups") + 1] == "2" and "--qk-layernorm" not in train.argv


@pytest.mark.parametrize(
    ("stage", "overrides", "field"),
    [
        ("sft", {"finetuning_type": "freeze"}, "finetuning_type"),
        ("sft", {"finetuning_type": "lora", "use_dora": True}, "use_dora"),
        ("sft", {"finetuning_type": "lora", "lora_dropout": 0.05}, "lora_dropout"),
        ("sft", {"lr_scheduler_type": "cosine_with_restarts"}, "lr_scheduler_type"),
        ("pt", {}, "num_train_epochs"),
        ("sft", {"resume": True}, "resume"),
        ("sft", {"deepspeed": "z2"}, "deepspeed"),
        ("sft", {"fsdp": "full_shard"}, "fsdp"),
        ("sft", {"val_size": 0.1}, "val_size"),
        ("sft", {"packing": True}, "packing"),
        ("sft", {"train_on": "all"}, "train_on"),
        ("sft", {"truncation": "left"}, "truncation"),
        ("sft", {"eval_steps": 10}, "eval_steps"),
        ("sft", {"trainer_args": {"dataloader_num_workers": 4}}, "trainer_args.dataloader_num_workers"),
        ("dpo", {"pref_loss": "robust"}, "pref_loss"),
        ("kto", {}, "stage"),
        ("sft", {"nproc": 6, "tensor_parallel_size": 4}, "nproc"),
        ("sft", {"sequence_parallel": True}, "sequence_parallel"),
        ("sft", {"template": None}, "template"),
        ("sft", {"template": "phi3"}, "template"),
    ],
)
def test_unmappable_arguments_name_the_field(tiny_dir, stage, overrides, field):
    base = {"template": "llama2", "finetuning_type": "full"}
    args = _args(tiny_dir, **{**base, **overrides})
    with raises_code("OM-PT002") as info:
        _steps(args, stage, tiny_dir)
    assert info.value.location == field and field.split(".")[-1] in info.value.message


def test_mapped_choices(tiny_dir):
    from openmind.pt.mindspeed.translate import lora_targets

    # a prompt type given directly wins; the default truncation is MindSpeed-LLM's own (proportional)
    args = _args(tiny_dir, template="phi3", mindspeed_prompt_type="chatml", finetuning_type="full")
    assert _steps(args, "sft", tiny_dir)[0].argv[-3] == "chatml"
    args = _args(tiny_dir, template="llama2", finetuning_type="full", truncation="proportional")
    _steps(args, "sft", tiny_dir)
    args = _args(tiny_dir, template="llama2", trainer_args={"adam_beta2": 0.95}, finetuning_type="full")
    train = _steps(args, "sft", tiny_dir)[2].argv
    assert train[train.index("--adam-beta2") + 1] == "0.95"
    assert lora_targets(["q_proj", "k_proj", "v_proj", "down_proj"]) == ["linear_qkv", "linear_fc2"]
    assert lora_targets(["o_proj", "up_proj", "gate_proj"]) == ["linear_proj", "linear_fc1"]
    assert lora_targets(["linear_fc2"]) == ["linear_fc2"] and lora_targets(["all"]) == list(
        ("linear_qkv", "linear_proj", "linear_fc1", "linear_fc2")
    )
    with raises_code("OM-T004") as info:
        lora_targets(["q_proj", "v_proj"])  # k_proj missing: Megatron's linear_qkv is one module
    assert "linear_qkv" in info.value.message and info.value.location == "lora_target"
    with raises_code("OM-T004"):
        lora_targets(["c_attn"])


def test_unsupported_models_are_coded_errors(tiny_dir, tmp_path):
    from openmind.pt.mindspeed.translate import model_args

    config = json.loads((tiny_dir / "config.json").read_text())
    for change, field in (
        ({"model_type": "gpt2"}, "model_type"),
        ({"rope_parameters": {"rope_type": "llama3", "factor": 8.0, "rope_theta": 5e5}}, "rope_parameters"),
        ({"hidden_act": "gelu"}, "hidden_act"),
        ({"mlp_bias": True}, "mlp_bias"),
        ({"attention_bias": True}, "attention_bias"),
    ):
        with raises_code("OM-PT003") as info:
            model_args({**config, **change}, seq_length=128)
        assert field in info.value.location


def test_data_becomes_mindspeed_sharegpt_records(sft_file, pref_file, pt_file, tmp_path):
    from openmind.core import args as A
    from openmind.data.api import load_dataset
    from openmind.pt.mindspeed.translate import records, write_records

    def rows(path, stage):
        ns = A.parse(("data",), overrides={"dataset": [str(path)]})
        return load_dataset(ns.data, stage=stage, quiet=True)

    sft = rows(sft_file, "sft")
    out = tmp_path / "sft.jsonl"
    assert write_records(sft, "sft", str(out), system="Be brief.") == len(sft)
    first = json.loads(out.read_text().splitlines()[0])
    source = json.loads(sft_file.read_text().splitlines()[0])["messages"]
    assert first == {
        "conversations": [
            {"from": "system", "value": "Be brief."},
            {"from": "human", "value": source[0]["content"]},
            {"from": "gpt", "value": source[1]["content"]},
        ]
    }
    pref = list(records(rows(pref_file, "dpo"), "dpo"))
    raw = json.loads(pref_file.read_text().splitlines()[3])
    assert pref[3] == {
        "conversations": [{"from": "human", "value": raw["messages"][0]["content"]}],
        "chosen": {"from": "gpt", "value": raw["chosen"]},
        "rejected": {"from": "gpt", "value": raw["rejected"]},
    }
    text = list(records(rows(pt_file, "pt"), "pt"))
    assert text[0] == {"text": json.loads(pt_file.read_text().splitlines()[0])["text"]}

    tool_row = {
        "_file": "chat.jsonl",
        "_row": 7,
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "w", "arguments": "{}"}}]},
        ],
    }
    with raises_code("OM-PT002") as info:
        list(records([tool_row], "sft"))
    assert info.value.location == "chat.jsonl:7 field 'messages[1]'"
    two_users = {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}
    with raises_code("OM-PT002"):
        list(records([two_users], "sft"))


def test_loss_history_from_megatron_log_lines():
    from openmind.pt.mindspeed.trainer import parse_losses

    lines = [
        "building GPT model ...\n",
        " [2026-12-02 02:30:01] iteration        1/      10 | consumed samples:           32 | elapsed time per "
        "iteration (ms): 5012.3 | learning rate: 1.000000E-05 | global batch size:    32 | lm loss: 2.304512E+00 | "
        "loss scale: 1.0 | grad norm: 12.345 | number of skipped iterations:   0 | number of nan iterations:   0 |\n",
        " [2026-12-02 02:30:06] iteration        2/      10 | consumed samples:           64 | elapsed time per "
        "iteration (ms): 812.0 | learning rate: 9.755283E-06 | global batch size:    32 | lm loss: 1.998001E+00 | "
        "loss scale: 1.0 | grad norm: 9.876 | number of skipped iterations:   0 | number of nan iterations:   0 |\n",
        " [2026-12-02 02:30:07] iteration        3/      10 | consumed samples:           96 | learning rate: "
        "9.0E-06 | global batch size:    32 | loss: 6.931472E-01 | loss scale: 1.0 |\n",
    ]
    assert parse_losses(lines) == [
        {"step": 1, "loss": 2.304512},
        {"step": 2, "loss": 1.998001},
        {"step": 3, "loss": 0.6931472},
    ]


#: the prompt types of MindSpeed-LLM's configs/finetune/templates.json at c77308a1 (2026-08-21)
MINDSPEED_PROMPT_TYPES = (
    "chatglm2 chatglm3 chatglm3_system glm4 glm4_moe chatml chatml_de cpm default empty trl qwen_lf qwen qwen_r1 "
    "qwen_math_r1 llama3 mistral mixtral magistral gemma llama2 alpaca deepseek2 deepseek2-lite minicpm3 baichuan2 "
    "deepseek3 intern2 hunyuan qwen3 bailing_mini plm gpt_oss deepseek4"
).split()


def test_template_table_names_real_templates_on_both_sides():
    from openmind.core.plugins import get_registry
    from openmind.core.specs import TemplateSpec
    from openmind.pt.mindspeed.translate import PROMPT_TYPES

    ours = {t.name for t in get_registry().all(TemplateSpec)}
    assert set(PROMPT_TYPES) <= ours, set(PROMPT_TYPES) - ours
    assert set(PROMPT_TYPES.values()) <= set(MINDSPEED_PROMPT_TYPES)
