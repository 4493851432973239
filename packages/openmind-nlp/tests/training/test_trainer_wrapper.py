"""The framework-neutral side of training: wrappers, the contract with a per-framework trainer,
the train/export verbs. A fake per-framework trainer stands in for PyTorch/MindSpore."""

from __future__ import annotations

import pytest

import openmind
from openmind.core import args as A
from openmind.core.errors import OpenMindError
from openmind.nlp.training import base
from openmind.nlp.training.base import SFTWrapper, TrainResult

CALLS: list[tuple[str, object]] = []


class FakeTrainer:
    """Implements the contract of openmind.nlp.training.base, recording what it is asked."""

    finetuning_types = ("full", "lora")

    def __init__(self, args, *, stage):
        CALLS.append(("init", stage))
        self.args, self.stage = args, stage

    def check(self):
        CALLS.append(("check", self.args.training.output_dir))

    def train(self):
        # the wrapper saved the resolved arguments before the first step
        saved = A.load_run(self.args.training.output_dir)
        CALLS.append(("train", saved["learning_rate"]))
        return TrainResult(self.args.training.output_dir, self.stage, self.args.finetuning.finetuning_type, 3)

    @classmethod
    def launch_command(cls, args, argv):
        return ["launcher", "-n", str(args.training.nproc), *argv]

    @classmethod
    def export(cls, args):
        CALLS.append(("export", args.model.model, args.model.adapter))
        return args.export.out


class FakeSpec:
    framework = "fake"
    finetuning_types = FakeTrainer.finetuning_types

    def load(self):
        return FakeTrainer


@pytest.fixture(autouse=True)
def fake_framework(monkeypatch):
    CALLS.clear()
    monkeypatch.setattr(base.TrainerWrapper, "_select", lambda self: (FakeSpec(), "fake framework"))
    import openmind.core.api as api

    monkeypatch.setattr(api, "select", lambda kind, task, framework="auto": (FakeSpec(), "fake"))
    # openmind.train asks the registry whether any framework can train the stage (OM-T012 when
    # none is installed, as in this package's own test session): the fake one can
    from openmind.core.registry import Registry

    monkeypatch.setattr(Registry, "trainers_for", lambda self, task, framework=None: [FakeSpec()])


def test_train_sdk_resolves_saves_and_trains(tmp_path):
    out = tmp_path / "run"
    result = openmind.train(
        {"model": "m", "dataset": ["d.jsonl"], "learning_rate": 0.5}, output_dir=str(out), finetuning_type="full"
    )
    assert result.global_step == 3 and result.stage == "sft"
    assert CALLS == [("init", "sft"), ("train", 0.5)]
    saved = A.load_run(out)
    assert saved["stage"] == "sft" and saved["finetuning_type"] == "full" and saved["dataset"] == ["d.jsonl"]


def test_stage_picks_the_wrapper_and_yaml_config(tmp_path):
    cfg = tmp_path / "dpo.yaml"
    cfg.write_text(
        "model: {model: m}\ndata:\n  dataset: [p.jsonl]\nfinetuning:\n  stage: dpo\n  finetuning_type: lora\n",
        encoding="utf-8",
    )
    result = openmind.train(str(cfg), output_dir=str(tmp_path / "r"))
    assert result.stage == "dpo" and CALLS[0] == ("init", "dpo")


def test_run_folder_is_a_starting_point(tmp_path):
    first = tmp_path / "a"
    openmind.train({"model": "m", "dataset": ["d.jsonl"]}, output_dir=str(first), learning_rate=0.25)
    CALLS.clear()
    SFTWrapper.from_config(str(first), output_dir=str(tmp_path / "b"))
    assert CALLS[-1] == ("train", 0.25)  # inherited from the saved arguments


def test_framework_free_checks(tmp_path):
    with pytest.raises(OpenMindError) as info:
        openmind.train({"model": "m"}, output_dir=str(tmp_path / "r"))
    assert info.value.code == "OM-T001"
    with pytest.raises(OpenMindError) as info:
        openmind.train({"dataset": ["d"]}, output_dir=str(tmp_path / "r"))
    assert info.value.code == "OM-A004"
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("x")
    with pytest.raises(OpenMindError) as info:
        openmind.train({"model": "m", "dataset": ["d"]}, output_dir=str(busy))
    assert info.value.code == "OM-T006"
    with pytest.raises(OpenMindError) as info:
        openmind.train({"model": "m", "dataset": ["d"], "finetuning_type": "qlora"}, output_dir=str(tmp_path / "q"))
    assert info.value.code == "OM-T008" and "qlora" in info.value.message  # the fake trainer has no qlora
    with pytest.raises(OpenMindError) as info:
        openmind.train({"model": "m", "dataset": ["d"], "lora_rank": 0}, output_dir=str(tmp_path / "z"))
    assert info.value.code == "OM-A002"
    assert not CALLS[1:] or all(c[0] == "init" for c in CALLS)


def test_unknown_key_is_an_error_with_a_suggestion(tmp_path):
    with pytest.raises(OpenMindError) as info:
        openmind.train({"model": "m", "dataset": ["d"]}, learning_rat=1.0)
    assert info.value.code == "OM-A001" and "learning_rate" in info.value.hint


def test_cli_train_and_nproc_relaunch(tmp_path, monkeypatch):
    import subprocess

    from openmind.core.cli.main import main

    ran = []
    hooks = []

    def run(cmd, check=False, preexec_fn=None):
        hooks.append(preexec_fn)
        return ran.append(cmd) or type("R", (), {"returncode": 0})

    monkeypatch.setattr(subprocess, "run", run)
    out = tmp_path / "run"
    code = main(["train", "--model", "m", "--dataset", "d.jsonl", "--output-dir", str(out), "--nproc", "2"])
    assert code == 0
    assert ran == [["launcher", "-n", "2", str(out / A.ARGS_FILE)]]
    assert callable(hooks[0])  # the job is told to stop when the launcher dies (Linux)
    # the workers read back exactly the resolved arguments
    assert A.load_run(out)["nproc"] == 2
    code = main(["train", "--model", "m", "--dataset", "d.jsonl", "--output-dir", str(tmp_path / "one")])
    assert code == 0 and CALLS[-1] == ("train", 5e-5)


def test_cli_export_takes_the_base_from_the_run(tmp_path):
    from openmind.core.cli.main import main

    run = tmp_path / "run"
    openmind.train({"model": "base-model", "dataset": ["d"]}, output_dir=str(run))
    code = main(["export", "--adapter", str(run), "--out", str(tmp_path / "merged")])
    assert code == 0 and CALLS[-1] == ("export", "base-model", str(run))


def test_registrations():
    from openmind.core.plugins import get_registry

    registry = get_registry()
    for stage in ("pt", "sft", "dpo", "rm"):
        spec = registry.get("trainer-wrapper", stage)
        assert spec.load().stage == stage
    assert registry.command("train").load().groups == base.GROUPS
    assert registry.command("export").load().groups == ("model", "export")


def test_old_import_paths_reexport_the_core_contracts():
    import openmind.core.training as T
    from openmind.core.training import errors as core_errors
    from openmind.nlp.training import errors

    assert base.TrainResult is T.TrainResult and base.TrainerWrapper is T.TrainerWrapper
    assert base.FrameworkTrainer is T.FrameworkTrainer and base.TrainPlan is T.TrainPlan
    assert (base.CHECKPOINT_MARKER, base.SUMMARY_FILE, base.PLOT_FILE) == (
        T.CHECKPOINT_MARKER,
        T.SUMMARY_FILE,
        T.PLOT_FILE,
    )
    assert errors.T_CUTOFF is core_errors.T_CUTOFF and errors.T_TEMPLATE_MISMATCH is core_errors.T_TEMPLATE_MISMATCH
    assert issubclass(base.SFTWrapper, T.TrainerWrapper)


def test_wrapper_hands_its_plan_to_a_typed_trainer(tmp_path, monkeypatch):
    """A FrameworkTrainer gets the wrapper's plan: LoRA alpha resolved once, the NLP steps attached."""
    import openmind.core.training as T

    seen = {}

    class Typed(T.FrameworkTrainer):
        finetuning_types = ("lora",)

        def check(self):
            seen["plan"] = self.plan

        def train(self):
            self.check()
            return T.TrainResult(self.plan.output_dir, self.stage, self.plan.finetuning_type)

    class Spec:
        framework = "fake"
        finetuning_types = ("lora",)

        def load(self):
            return Typed

    monkeypatch.setattr(base.TrainerWrapper, "_select", lambda self: (Spec(), "fake"))
    wrapper = SFTWrapper.prepare({"model": "m", "dataset": ["d.jsonl"]}, output_dir=str(tmp_path / "r"), lora_rank=3)
    result = wrapper.train()
    plan = seen["plan"]
    assert plan is wrapper.plan and result.stage == "sft"
    assert (plan.lora_alpha, plan.framework, plan.output_dir) == (6, "fake", str(tmp_path / "r"))
    assert plan.template_check == wrapper.template_check and plan.data_step == wrapper.data_step
    assert A.load_run(tmp_path / "r")["lora_alpha"] is None  # the saved arguments are what the user gave
