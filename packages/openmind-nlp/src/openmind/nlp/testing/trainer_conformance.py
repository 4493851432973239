"""The trainer conformance suite: one base class, subclassed by every framework's test suite.

Every framework trainer (:class:`openmind.core.training.FrameworkTrainer`) is held to the same
contract, checked through the public doors (``openmind.train``, ``openmind train``)::

    # packages/openmind-pt/tests/training/test_trainer_conformance.py
    from openmind.nlp.testing.trainer_conformance import TrainerConformance

    class TestTorchTrainer(TrainerConformance):
        framework = "pt"
        unsupported = (({"finetuning_type": "qlora", "device": "cpu"}, "OM-T005"),)

Checks: the trainer receives the wrapper's plan (one plan, resolved once: LoRA alpha, output
folder) and uses its data step; with the same plan the loss goes down; the run folder has the
documented layout (:mod:`openmind.core.training.layout`); a LoRA adapter carries the plan's alpha;
a run SIGKILLed after a checkpoint and resumed ends exactly where an uninterrupted run ends
(:mod:`openmind.nlp.testing.resume`); unsupported stages / finetuning types fail with a coded
error before the first step.

Fixtures the subclass (or its conftest) provides: ``conformance_model_dir`` (a tiny causal LM
folder with a real tokenizer and a chat template) and ``conformance_sft_file`` (sft rows, e.g.
:func:`openmind.nlp.testing.synthetic.reversal_rows`). The class is not collected on its own.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest

from openmind.core.errors import OpenMindError
from openmind.core.training import layout as L


def _losses(history: list[dict[str, Any]]) -> list[float]:
    return [float(h["loss"]) for h in history if "loss" in h and "train_loss" not in h]


def _weights(folder: Path, name: str) -> dict[str, Any]:
    from safetensors.numpy import load_file

    return load_file(str(folder / name))


class TrainerConformance:
    #: the framework under test (``--framework``)
    framework: ClassVar[str] = ""
    #: ``(overrides, expected code)`` that this framework rejects before the first step
    unsupported: ClassVar[tuple[tuple[dict[str, Any], str], ...]] = ()
    #: the weights file of a full run / of a LoRA run
    full_weights: ClassVar[str] = "model.safetensors"
    adapter_weights: ClassVar[str] = "adapter_model.safetensors"
    #: extra environment for the CLI runs (e.g. thread limits)
    cli_env: ClassVar[dict[str, str]] = {"OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}

    # ---- helpers ---------------------------------------------------------------------
    def overrides(self, out: Path, **extra: Any) -> dict[str, Any]:
        base = dict(
            framework=self.framework,
            finetuning_type="full",
            max_steps=8,
            per_device_train_batch_size=8,
            learning_rate=3e-3,
            lr_scheduler_type="constant",
            logging_steps=1,
            save_steps=4,
            report_to=["none"],
            plot_loss=True,
            seed=3,
            output_dir=str(out),
        )
        base.update(extra)
        return base

    def train(self, model: Path, data: Path, out: Path, **extra: Any):
        import openmind

        return openmind.train({"model": str(model), "dataset": [str(data)]}, **self.overrides(out, **extra))

    # ---- the plan --------------------------------------------------------------------
    def test_trainer_gets_the_wrappers_plan(self, conformance_model_dir, conformance_sft_file, tmp_path):
        from openmind.core.training import FrameworkTrainer
        from openmind.nlp.training.base import SFTWrapper

        wrapper = SFTWrapper.prepare(
            {"model": str(conformance_model_dir), "dataset": [str(conformance_sft_file)]},
            **self.overrides(tmp_path / "run", finetuning_type="lora", lora_rank=4),
        )
        wrapper.validate()
        trainer = wrapper.trainer
        assert isinstance(trainer, FrameworkTrainer), f"the {self.framework} trainer is not a FrameworkTrainer"
        assert trainer.plan is wrapper.plan
        plan = trainer.plan
        assert (plan.stage, plan.finetuning_type, plan.framework) == ("sft", "lora", self.framework)
        assert plan.lora_alpha == 8 and plan.output_dir == str(tmp_path / "run")
        steps: list[str] = []
        data_step, template_check = plan.data_step, plan.template_check
        plan.data_step = lambda *a, **k: (steps.append("data"), data_step(*a, **k))[1]
        plan.template_check = lambda *a, **k: (steps.append("template"), template_check(*a, **k))[1]
        trainer.check()  # loads everything, runs no step
        assert steps == ["template", "data"], "the trainer must use the plan's framework-neutral steps"
        assert not list(Path(plan.output_dir).glob(f"{L.CHECKPOINT_PREFIX}*"))

    # ---- learning and the run folder ---------------------------------------------------
    def test_same_plan_loss_goes_down_and_run_folder_layout(
        self, conformance_model_dir, conformance_sft_file, tmp_path
    ):
        out = tmp_path / "run"
        result = self.train(conformance_model_dir, conformance_sft_file, out)
        assert isinstance(result, L.TrainResult)
        assert (result.stage, result.finetuning_type, result.global_step) == ("sft", "full", 8)
        losses = _losses(result.history)
        assert len(losses) == 8, result.history
        assert sum(losses[-3:]) / 3 < losses[0], f"the loss did not go down: {losses}"
        assert result.final_loss == pytest.approx(losses[-1])
        assert result.tokens > 0 and result.seconds > 0
        # run folder: one name per file, from openmind.core.training.layout
        saved = json.loads((out / L.SUMMARY_FILE).read_text())
        assert set(saved) == set(L.TrainResult.__dataclass_fields__)
        assert saved["global_step"] == 8 and saved["final_loss"] == pytest.approx(result.final_loss)
        assert (out / L.ARGS_FILE).is_file()
        from openmind.core import args as A

        args = A.load_run(out)
        assert args["stage"] == "sft" and args["framework"] == self.framework and args["lora_alpha"] is None
        assert (out / L.PLOT_FILE).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        for step in (4, 8):
            assert (L.checkpoint_dir(out, step) / L.CHECKPOINT_MARKER).is_file()
        assert sorted(L.checkpoint_step(p) for p in out.glob(f"{L.CHECKPOINT_PREFIX}*")) == [4, 8]
        assert (out / "config.json").is_file() and (out / self.full_weights).is_file()
        assert any((out / name).is_file() for name in ("tokenizer.json", "tokenizer.model", "tokenizer_config.json"))

    def test_lora_adapter_carries_the_plans_alpha(self, conformance_model_dir, conformance_sft_file, tmp_path):
        out = tmp_path / "lora"
        result = self.train(
            conformance_model_dir, conformance_sft_file, out, finetuning_type="lora", lora_rank=4, max_steps=2
        )
        assert result.global_step == 2
        config = json.loads((out / "adapter_config.json").read_text())
        assert (config["r"], config["lora_alpha"]) == (4, 8)  # alpha default: 2 x rank, decided once
        assert (out / self.adapter_weights).is_file()

    # ---- resume ----------------------------------------------------------------------
    def test_resume_after_sigkill_is_exact(self, conformance_model_dir, conformance_sft_file, tmp_path):
        import numpy as np

        from openmind.nlp.testing.resume import kill_after_checkpoint, plant_partial_checkpoint, resume, train_command

        env = dict(os.environ, OPENMIND_CACHE=str(tmp_path / "cache"), **self.cli_env)
        extra = [
            "--framework",
            self.framework,
            "--max-steps",
            "9",
            "--per-device-train-batch-size",
            "8",
            "--save-steps",
            "3",
            "--seed",
            "5",
        ]

        def cmd(out: Path) -> list[str]:
            return train_command(conformance_model_dir, conformance_sft_file, out, *extra)

        ref, run = tmp_path / "ref", tmp_path / "run"
        done = subprocess.run(cmd(ref), env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        kill_after_checkpoint(cmd(run), env, run, step=3)
        partial = plant_partial_checkpoint(run, step=6)
        resume(cmd(run), env)
        summary = json.loads((run / L.SUMMARY_FILE).read_text())
        reference = json.loads((ref / L.SUMMARY_FILE).read_text())
        assert summary["resumed_from"].endswith((f"{L.CHECKPOINT_PREFIX}3", f"{L.CHECKPOINT_PREFIX}6"))
        assert summary["global_step"] == reference["global_step"] == 9
        assert summary["final_loss"] == pytest.approx(reference["final_loss"], abs=1e-6)
        got, want = _weights(run, self.full_weights), _weights(ref, self.full_weights)
        assert set(got) == set(want)
        for name, value in want.items():
            assert np.abs(got[name].astype(np.float32) - value.astype(np.float32)).max() <= 1e-6, name
        assert partial.is_file()  # the half-written checkpoint was rewritten complete

    # ---- coded errors ----------------------------------------------------------------
    def test_unsupported_setups_fail_coded_before_step_one(self, conformance_model_dir, conformance_sft_file, tmp_path):
        cases = (
            *self.unsupported,
            ({"stage": "no-such-stage"}, "OM-A002"),  # not a registered training task
        )
        for i, (extra, code) in enumerate(cases):
            out = tmp_path / f"run{i}"
            with pytest.raises(OpenMindError) as info:
                self.train(conformance_model_dir, conformance_sft_file, out, **extra)
            assert info.value.code == code, (extra, info.value.code, info.value.message)
            assert not (out / L.SUMMARY_FILE).exists() and not list(out.glob(f"{L.CHECKPOINT_PREFIX}*"))

    def test_task_without_trainer_is_coded(self):
        """A registered training task nothing can train: OM-T012 naming what is missing."""
        from openmind.core.registry import Registry
        from openmind.core.specs import TaskSpec
        from openmind.core.training.wrapper import training_stages, wrapper_for

        registry = Registry()
        registry.add(TaskSpec(name="vl-sft", kind_of="training"))
        assert "vl-sft" in training_stages(registry)
        with pytest.raises(OpenMindError) as info:
            wrapper_for("vl-sft", registry)
        assert info.value.code == "OM-T012"
        assert "trainer wrapper" in info.value.message and "framework trainer" in info.value.message
