"""pt / sft / dpo through MindSpeed-LLM on Ascend: the unified arguments and data translated
(:mod:`openmind.pt.mindspeed.translate`, unit-tested anywhere), then MindSpeed-LLM's own scripts
run as subprocesses from its checkout. Running needs Ascend (:mod:`openmind.pt.mindspeed.guard`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from openmind.core.training.contract import FrameworkTrainer
from openmind.core.training.errors import T_LAUNCH
from openmind.core.training.layout import SUMMARY_FILE, TrainResult
from openmind.pt.mindspeed import translate as T

#: Megatron's training log line: `` iteration        3/      10 | ... | lm loss: 1.054688E+01 | ...``
#: (``loss:`` for the preference stages); ``loss scale:`` is not a loss
LOSS_LINE = re.compile(r"iteration\s+(\d+)\s*/\s*\d+\s*\|.*?\|\s*(?:lm )?loss:\s*([-+0-9.]+(?:[eE][-+]?\d+)?)\s*\|")


def parse_losses(lines: list[str]) -> list[dict[str, Any]]:
    """``[{"step": N, "loss": x}, ...]`` from MindSpeed-LLM's (Megatron's) training log lines."""
    out = []
    for line in lines:
        match = LOSS_LINE.search(line)
        if match:
            out.append({"step": int(match.group(1)), "loss": float(match.group(2))})
    return out


class MindSpeedTrainer(FrameworkTrainer):
    stages = T.STAGES
    finetuning_types = ("full", "lora")

    def __init__(self, args: Any, *, stage: str | None = None, plan: Any = None) -> None:
        super().__init__(args, stage=stage, plan=plan)
        self.home: Path | None = None
        self.model_dir = ""
        self.rows: Any = None

    # ---- the translation (no Ascend needed) -----------------------------------------------
    def steps(self, *, samples: int, home: str, model_dir: str) -> list[T.Step]:
        from openmind.core.api import read_config

        return T.plan_steps(
            self.args, self.stage, read_config(model_dir), model_dir=model_dir, home=home, samples=samples
        )

    # ---- the contract ----------------------------------------------------------------------
    def check(self) -> None:
        """The guard first (OM-PT001 before any work), then :meth:`prepare`."""
        from openmind.pt.mindspeed.guard import require_mindspeed

        self.check_supported()
        home = require_mindspeed(
            f"stage {self.stage} on the MindSpeed backend", T.mindspeed_group(self.args).mindspeed_home
        )
        self.prepare(str(home))

    def prepare(self, home: str) -> list[T.Step]:
        """Every argument checked and translated, the model resolved, every row loaded (through
        openmind's data engine) and translated: the steps a run from checkout ``home`` executes."""
        from openmind.core.api import resolve_model
        from openmind.data.api import load_dataset

        T.check_arguments(self.args, self.stage)
        m = self.args.model
        self.model_dir = resolve_model(m.model, revision=m.revision, hub=m.hub)
        self.rows = load_dataset(self.args.data, stage=self.stage)
        for _ in T.records(self.rows, self.stage, system=self.args.template.system):
            pass  # every row translates (OM-PT002 names the first that does not)
        self.home = Path(home)
        return self.steps(samples=len(self.rows), home=home, model_dir=self.model_dir)

    def train(self) -> TrainResult:  # pragma: no cover - Ascend only
        self.check()
        out = Path(self.args.training.output_dir)
        layout = T.Layout(str(out / "mindspeed"))
        started = time.time()
        count = T.write_records(self.rows, self.stage, layout.data_file, system=self.args.template.system)
        history: list[dict[str, Any]] = []
        for step in self.steps(samples=count, home=str(self.home), model_dir=self.model_dir):
            lines = run_step(step, Path(layout.work) / f"{step.name}.log")
            if step.name == "train":
                history = parse_losses(lines)
        losses = [h["loss"] for h in history]
        result = TrainResult(
            output_dir=str(out),
            stage=self.stage,
            finetuning_type=self.plan.finetuning_type,
            global_step=history[-1]["step"] if history else 0,
            train_loss=sum(losses) / len(losses) if losses else None,
            final_loss=losses[-1] if losses else None,
            seconds=time.time() - started,
            metrics={"backend": "mindspeed", "rows": count},
            history=history,
        )
        (out / SUMMARY_FILE).write_text(json.dumps(result.to_dict(), indent=2), encoding="utf-8")
        return result


def run_step(step: T.Step, log_file: Path) -> list[str]:  # pragma: no cover - Ascend only
    """Run one MindSpeed-LLM step, echoing and logging its output; OM-T009 naming the step when it fails."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    print(f"mindspeed {step.name}: {' '.join(step.argv)}", file=sys.stderr, flush=True)
    lines: list[str] = []
    try:
        proc = subprocess.Popen(
            list(step.argv), cwd=step.cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
        )
    except FileNotFoundError as exc:
        raise T_LAUNCH.error(f"MindSpeed step {step.name}: cannot start {step.argv[0]!r}: {exc}") from None
    with log_file.open("w", encoding="utf-8") as log:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stderr.write(line)
            log.write(line)
            lines.append(line)
    if proc.wait() != 0:
        raise T_LAUNCH.error(
            f"MindSpeed step {step.name} exited with status {proc.returncode} (its log: {log_file})",
            location=str(log_file),
        )
    return lines
