"""The mindformers backend: its plugin, the import guard, and the translation logic (runs anywhere;
training and generation through mindformers need Ascend)."""

from __future__ import annotations

import os
import types

import numpy as np

from openmind.nlp.testing.conformance import raises_code


def test_plugin_registers_specs_marked_needs_ascend():
    from openmind.core.api import select
    from openmind.core.plugins import get_registry

    registry = get_registry()
    specs = [p for p in registry.pipelines_for("chat", "ms") if p.backend == "mindformers"]
    assert specs and all("needs Ascend" in p.note for p in specs)
    assert specs[0].component.plugin == "ms-mindformers"
    trainers = [t for t in registry.trainers_for("sft", "ms") if t.backend == "mindformers"]
    assert trainers and trainers[0].finetuning_types == ("full", "lora") and "needs Ascend" in trainers[0].note
    # mindformers is not installed here: select() falls back to the native backend and says so
    chosen, reason = select("pipeline", "chat", "ms")
    assert chosen.backend == "native" and "backend native" in reason


def test_loading_without_mindformers_is_a_coded_error(llama2_dir):
    from openmind.ms.mindformers.pipeline import require_mindformers

    with raises_code("OM-MS006") as info:
        require_mindformers("the mindformers chat pipeline")
    assert "mindformers" in info.value.message and "Ascend" in info.value.hint


def test_names_round_trip_and_match_mindformers_layout(llama2_dir):
    from openmind.ms.mindformers.translate import hf_to_mf_name, mf_to_hf_name, translate_state
    from openmind.ms.models.weights import read_safetensors

    state = read_safetensors(llama2_dir / "model.safetensors")
    mf = translate_state(state, to="mindformers")
    assert "model.tok_embeddings.embedding_weight" in mf and "model.norm_out.weight" in mf
    assert "model.layers.1.attention.wq.weight" in mf and "model.layers.0.feed_forward.w1.weight" in mf
    assert "model.layers.0.feed_forward.w3.weight" in mf and "model.layers.0.attention_norm.weight" in mf
    assert "model.layers.0.ffn_norm.weight" in mf and "lm_head.weight" in mf
    assert hf_to_mf_name("model.layers.3.mlp.down_proj.weight") == "model.layers.3.feed_forward.w2.weight"
    back = translate_state(mf, to="hf")
    assert set(back) == set(state) and all(mf_to_hf_name(hf_to_mf_name(k)) == k for k in state)


def test_checkpoint_translation_round_trip(llama2_dir, tmp_path):
    from openmind.ms import runtime

    runtime.set_device("cpu")
    from openmind.ms.mindformers.checkpoint import ckpt_to_hf, hf_to_ckpt
    from openmind.ms.models.weights import load_state_dict, read_safetensors

    ckpt = hf_to_ckpt(llama2_dir, tmp_path / "model.ckpt")
    import mindspore as ms

    names = set(ms.load_checkpoint(str(ckpt)))
    assert "model.layers.0.attention.wk.weight" in names
    ckpt_to_hf(ckpt, tmp_path / "back")
    original = read_safetensors(llama2_dir / "model.safetensors")
    again = load_state_dict(tmp_path / "back")
    assert set(again) == set(original)
    assert all(np.array_equal(again[k], original[k]) for k in original)


def test_model_config_translation(llama2_dir):
    from openmind.core.api import read_config
    from openmind.ms.mindformers.translate import model_config

    section = model_config(read_config(llama2_dir), seq_length=512)
    cfg = section["model_config"]
    assert section["arch"] == {"type": "LlamaForCausalLM"} and cfg["type"] == "LlamaConfig"
    assert (cfg["hidden_size"], cfg["num_layers"], cfg["num_heads"], cfg["n_kv_heads"]) == (64, 2, 4, 4)
    assert (cfg["vocab_size"], cfg["intermediate_size"], cfg["seq_length"]) == (32000, 128, 512)
    assert cfg["theta"] == 10000.0 and cfg["extend_method"] == "None" and cfg["qkv_has_bias"] is False
    assert cfg["compute_dtype"] == "float16" and cfg["eos_token_id"] == 2
    qwen = model_config(
        {
            "model_type": "qwen2",
            "hidden_size": 8,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "intermediate_size": 16,
            "vocab_size": 10,
            "rope_theta": 1e6,
            "rope_scaling": {"type": "linear", "factor": 4.0},
        },
        dtype="bfloat16",
    )["model_config"]
    assert qwen["qkv_has_bias"] and qwen["extend_method"] == "PI" and qwen["scaling_factor"] == 4.0
    assert qwen["theta"] == 1e6 and qwen["compute_dtype"] == "bfloat16"
    with raises_code("OM-MS003"):
        model_config({"model_type": "gpt2"})


def test_training_arguments_translation(llama2_dir):
    from openmind.core import args as A
    from openmind.core.api import read_config
    from openmind.ms.mindformers.translate import lora_config, msrun_command, training_config

    ns = A.parse(
        ("model", "template", "data", "finetuning", "training"),
        overrides={
            "model": str(llama2_dir),
            "finetuning_type": "lora",
            "lora_rank": 4,
            "lora_target": ["q_proj", "v_proj"],
            "learning_rate": 1e-4,
            "lr_scheduler_type": "cosine",
            "nproc": 8,
            "cutoff_len": 256,
            "per_device_train_batch_size": 2,
            "output_dir": "/tmp/out",
        },
    )
    cfg = training_config(ns, read_config(llama2_dir), dataset_dir="/data", checkpoint="/ckpt/base.ckpt")
    pet = cfg["model"]["model_config"]["pet_config"]
    assert pet == {
        "pet_type": "lora",
        "lora_rank": 4,
        "lora_alpha": 8,
        "lora_dropout": 0.0,
        "target_modules": ".*(wq|wv)$",
    }
    assert cfg["lr_schedule"]["type"] == "CosineWithWarmUpLR" and cfg["lr_schedule"]["learning_rate"] == 1e-4
    assert cfg["parallel_config"]["data_parallel"] == 8 and cfg["use_parallel"] is True
    assert cfg["model"]["model_config"]["seq_length"] == 256 and cfg["runner_config"]["batch_size"] == 2
    assert cfg["load_checkpoint"] == "/ckpt/base.ckpt" and cfg["train_dataset"]["data_loader"]["dataset_dir"] == "/data"
    assert lora_config(["all"], rank=8, alpha=16, dropout=0.1)["target_modules"] == ".*(wq|wk|wv|wo|w1|w2|w3)$"
    with raises_code("OM-T004"):
        lora_config(["c_attn"], rank=8, alpha=16, dropout=0.0)
    cmd = msrun_command("/w/config.yaml", nproc=8, script="/mf/run_mindformer.py", log_dir="/w/logs")
    assert cmd[:3] == ["msrun", "--worker_num=8", "--local_worker_num=8"]
    assert "--config=/w/config.yaml" in cmd and "/mf/run_mindformer.py" in cmd and "--use_parallel=True" in cmd


def test_native_trainer_launch_command(monkeypatch):
    """--nproc/--nnodes/--node-rank/--master-addr/--master-port map onto msrun's arguments as they
    map onto torchrun's on PyTorch; the workers run `openmind train ARGS_FILE` with this interpreter."""
    import sys

    from openmind.ms.training.trainer import MindSporeTrainer

    def training(**kw):
        base = dict(nproc=2, nnodes=1, node_rank=0, master_addr=None, master_port=None, output_dir="/tmp/run")
        base.update(fsdp=None, deepspeed=None)
        return types.SimpleNamespace(
            training=types.SimpleNamespace(**{**base, **kw}), finetuning=types.SimpleNamespace(stage="sft")
        )

    def opts(cmd):
        return {cmd[i]: cmd[i + 1] for i in range(len(cmd) - 1) if cmd[i].startswith("--")}

    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
    cmd = MindSporeTrainer.launch_command(training(), ["/tmp/run/openmind_args.yaml"])
    assert cmd[:3] == [sys.executable, "-m", "mindspore.parallel.cluster.run"]
    o = opts(cmd)
    assert (o["--worker_num"], o["--local_worker_num"], o["--node_rank"]) == ("2", "2", "0")
    assert o["--master_addr"] == "127.0.0.1" and int(o["--master_port"]) > 0 and o["--join"] == "True"
    assert o["--log_dir"] == "/tmp/run/msrun_log"
    assert cmd[-5:] == ["python", "-m", "openmind.core.cli.main", "train", "/tmp/run/openmind_args.yaml"]
    # node 1 of 2, 4 processes each: 8 workers, this node's first is global rank 4
    cmd = MindSporeTrainer.launch_command(training(nproc=4, nnodes=2, node_rank=1, master_addr="10.0.0.1"), ["a"])
    o = opts(cmd)
    assert (o["--worker_num"], o["--local_worker_num"], o["--node_rank"]) == ("8", "4", "1")
    assert (o["--master_addr"], o["--master_port"], o["--tail_worker_log"]) == ("10.0.0.1", "29500", "4")
    # msrun starts `python` from PATH: when that is another interpreter, PATH is set for it
    monkeypatch.setenv("PATH", "/usr/bin")
    cmd = MindSporeTrainer.launch_command(training(), ["a"])
    assert cmd[0] == "env" and cmd[1].startswith(f"PATH={os.path.dirname(sys.executable)}{os.pathsep}")
    assert MindSporeTrainer.launch_command(training(nproc=1), ["a"]) is None
    with raises_code("OM-T014") as info:  # refused before msrun starts
        MindSporeTrainer.launch_command(training(fsdp="full_shard"), ["a"])
    assert info.value.location == "fsdp"
