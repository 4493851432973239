"""The framework- and domain-neutral training contracts of openmind.core.training: run-folder names,
the plan and its one LoRA default, the typed framework trainer, stage and formatting choices computed
from the registry (a plugin's training task is a stage), OM-T012 for a task nothing can train."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from openmind.core import args as A
from openmind.core.errors import OpenMindError
from openmind.core.hookspecs import hookimpl
from openmind.core.plugins import PluginHost
from openmind.core.specs import DatasetFormatSpec, TaskSpec, TrainerSpec, TrainerWrapperSpec
from openmind.core.training import (
    CHECKPOINT_MARKER,
    IGNORE_INDEX,
    PLOT_FILE,
    SUMMARY_FILE,
    FrameworkTrainer,
    TrainPlan,
    TrainResult,
    checkpoint_dir,
    checkpoint_step,
    default_lora_alpha,
    training_stages,
)
from openmind.core.training.wrapper import wrapper_for


def _host(*task_specs, trainers=(), wrappers=(), formats=()):
    def reg(specs):
        return lambda register: [register(s) for s in specs]

    plug = SimpleNamespace(
        openmind_register_tasks=hookimpl(reg(task_specs)),
        openmind_register_trainer_wrappers=hookimpl(reg(wrappers)),
        openmind_register_trainers=hookimpl(reg(trainers)),
        openmind_register_dataset_formats=hookimpl(reg(formats)),
    )
    return PluginHost(load_entry_points=False, extra={"plug": plug})


def test_run_folder_names_have_one_home_and_stay_what_users_have():
    assert (SUMMARY_FILE, PLOT_FILE, CHECKPOINT_MARKER, A.ARGS_FILE) == (
        "train_summary.json",
        "loss.png",
        "openmind_checkpoint.json",
        "openmind_args.yaml",
    )
    assert IGNORE_INDEX == -100
    assert checkpoint_dir("runs/a", 12).as_posix() == "runs/a/checkpoint-12"
    assert checkpoint_step("runs/a/checkpoint-12") == 12 and checkpoint_step("checkpoint-x") is None
    assert checkpoint_step(".checkpoint-3.tmp") is None
    assert set(TrainResult("o", "sft", "lora").to_dict()) >= {"global_step", "final_loss", "history", "metrics"}


def test_plan_resolves_lora_alpha_once():
    assert default_lora_alpha(8) == 16 and default_lora_alpha(8, 5) == 5
    ns = A.parse(["model", "data", "finetuning", "training"], overrides={"lora_rank": 4, "output_dir": "o"})
    plan = TrainPlan.from_args(ns, "sft", "pt")
    assert (plan.stage, plan.finetuning_type, plan.lora_alpha, plan.output_dir) == ("sft", "lora", 8, "o")
    assert ns.finetuning.lora_alpha is None  # the saved arguments keep what the user gave
    full = TrainPlan.from_args(
        A.parse(["model", "data", "finetuning", "training"], overrides={"finetuning_type": "full"}), "sft"
    )
    assert full.lora_alpha is None
    with pytest.raises(OpenMindError) as info:
        full.prepare_data(None, None)  # a wrapper that gives no data step says so, coded
    assert info.value.code == "OM-T008"


def test_framework_trainer_is_typed_and_rejects_unsupported_setups_coded():
    with pytest.raises(TypeError):
        FrameworkTrainer(None)  # abstract: check() and train() must be implemented

    class Tiny(FrameworkTrainer):
        stages = ("sft",)
        finetuning_types = ("full",)

        def check(self):
            self.check_supported()

        def train(self):
            return TrainResult(self.plan.output_dir, self.stage, self.plan.finetuning_type)

    ns = A.parse(["model", "data", "finetuning", "training"], overrides={"finetuning_type": "full"})
    assert Tiny(ns, stage="sft").train().stage == "sft"
    for stage, overrides, location in (("dpo", {"finetuning_type": "full"}, "stage"), ("sft", {}, "finetuning_type")):
        trainer = Tiny(A.parse(["model", "data", "finetuning", "training"], overrides=overrides), stage=stage)
        with pytest.raises(OpenMindError) as info:
            trainer.check()
        assert info.value.code == "OM-T008" and info.value.location == location


def test_stage_choices_come_from_registered_training_tasks(monkeypatch):
    from openmind.core import plugins

    host = _host(
        TaskSpec(name="chat"),
        TaskSpec(name="sft", kind_of="training"),
        TaskSpec(name="poem-sft", kind_of="training", aliases=("poet",)),
    )
    monkeypatch.setattr(plugins, "get_registry", lambda: host.registry)
    assert training_stages() == ("sft", "poem-sft", "poet")
    ns = A.parse(["finetuning"], overrides={"stage": "poem-sft"})
    assert ns.finetuning.stage == "poem-sft"
    for bad in ("chat", "rlhf"):  # an inference task is no stage
        with pytest.raises(OpenMindError) as info:
            A.parse(["finetuning"], overrides={"stage": bad})
        assert info.value.code == "OM-A002" and "poem-sft" in info.value.message


def test_formatting_choices_come_from_registered_dataset_formats(monkeypatch):
    from openmind.core import plugins

    host = _host(formats=(DatasetFormatSpec(name="poems", produces="openai", impl="m:f"),))
    monkeypatch.setattr(plugins, "get_registry", lambda: host.registry)
    assert A.parse(["data"], overrides={"formatting": "poems"}).data.formatting == "poems"
    with pytest.raises(OpenMindError) as info:
        A.parse(["data"], overrides={"formatting": "alpaca"})  # no plugin registers it here
    assert info.value.code == "OM-A002"


def test_registered_training_task_nothing_trains_is_t012():
    host = _host(
        TaskSpec(name="mm-sft", kind_of="training"),
        TaskSpec(name="sft", kind_of="training"),
        wrappers=(TrainerWrapperSpec(task="sft", impl="m:W"),),
        trainers=(TrainerSpec(task="sft", framework="pt", impl="m:T"),),
    )
    assert wrapper_for("sft", host.registry).task == "sft"
    with pytest.raises(OpenMindError) as info:
        wrapper_for("mm-sft", host.registry)
    assert info.value.code == "OM-T012" and info.value.location == "stage"
    assert "TrainerWrapperSpec(task='mm-sft')" in info.value.message and "TrainerSpec" in info.value.message


def test_training_contracts_import_no_framework():
    code = (
        "import sys, openmind.core.training, openmind.core.training.wrapper;"
        "bad = [m for m in ('torch', 'mindspore', 'transformers', 'datasets', 'openmind.nlp', 'openmind.data')"
        " if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_unknown_or_inference_stage_is_the_parsers_coded_error():
    host = _host(TaskSpec(name="chat"), TaskSpec(name="sft", kind_of="training"))
    for bad in ("chat", "no-such-stage"):
        with pytest.raises(OpenMindError) as info:
            wrapper_for(bad, host.registry)
        assert info.value.code == "OM-A002" and "sft" in info.value.message


def test_launcher_roles(monkeypatch):
    """torchrun's and msrun's processes: rank 0 is the main process; msrun's scheduler (which runs the
    same command with RANK_ID=0 and only serves the cluster) is a worker but never the main process."""
    from openmind.core.training.layout import is_main_process, is_worker_process

    for name in ("LOCAL_RANK", "RANK", "RANK_ID", "MS_ROLE"):
        monkeypatch.delenv(name, raising=False)
    assert is_main_process() and not is_worker_process()
    monkeypatch.setenv("RANK_ID", "1")
    monkeypatch.setenv("MS_ROLE", "MS_WORKER")
    assert is_worker_process() and not is_main_process()
    monkeypatch.setenv("RANK_ID", "0")
    assert is_worker_process() and is_main_process()
    monkeypatch.setenv("MS_ROLE", "MS_SCHED")
    assert is_worker_process() and not is_main_process()
    monkeypatch.delenv("MS_ROLE")
    monkeypatch.delenv("RANK_ID")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("RANK", "3")
    assert is_worker_process() and not is_main_process()
