"""sft / pt through mindformers' Trainer, launched with msrun (Ascend). The argument translation
(:mod:`openmind.ms.mindformers.translate`) is unit-tested; running needs Ascend + mindformers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from openmind.core.training.layout import TrainResult
from openmind.ms.mindformers.pipeline import require_mindformers
from openmind.ms.training.trainer import MindSporeTrainer


class MindFormersTrainer(MindSporeTrainer):
    finetuning_types = ("full", "lora")
    relaunches = False  # train() starts msrun over mindformers' run_mindformer.py itself

    def config(self, dataset_dir: str, checkpoint: str) -> dict[str, Any]:
        from openmind.core.api import read_config
        from openmind.ms.mindformers.translate import training_config

        return training_config(self.args, read_config(self.model_dir), dataset_dir=dataset_dir, checkpoint=checkpoint)

    def check(self) -> None:  # pragma: no cover - Ascend only
        require_mindformers("the mindformers trainer")
        super().check()

    def train(self) -> TrainResult:  # pragma: no cover - Ascend only
        import yaml

        from openmind.ms.mindformers.checkpoint import hf_to_ckpt
        from openmind.ms.mindformers.translate import msrun_command, run_script

        self.check()
        out = Path(self.args.training.output_dir)
        work = out / "mindformers"
        work.mkdir(parents=True, exist_ok=True)
        dataset_dir = work / "data"
        src = self.data.train.with_format("numpy")
        import mindspore.mindrecord as mr

        writer = mr.FileWriter(str(dataset_dir / "train.mindrecord"), shard_num=1, overwrite=True)
        writer.add_schema({"input_ids": {"type": "int32", "shape": [-1]}, "labels": {"type": "int32", "shape": [-1]}})
        writer.write_raw_data([{"input_ids": r["input_ids"], "labels": r["labels"]} for r in src])
        writer.commit()
        ckpt = hf_to_ckpt(self.model_dir, work / "base.ckpt")
        config_file = work / "config.yaml"
        config_file.write_text(yaml.safe_dump(self.config(str(dataset_dir), str(ckpt))), encoding="utf-8")
        script = run_script()
        if script is None:
            from openmind.ms.errors import MS_MINDFORMERS

            raise MS_MINDFORMERS.error("mindformers' run_mindformer.py was not found", hint="set MINDFORMERS_HOME")
        cmd = msrun_command(str(config_file), nproc=max(1, self.args.training.nproc), script=script, log_dir=str(work))
        # msrun and the `python` it starts its workers with: this interpreter's (a venv need not be activated)
        path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
        subprocess.run(cmd, check=True, env=dict(os.environ, PATH=path))
        result = TrainResult(
            output_dir=str(out), stage=self.stage, finetuning_type=self.args.finetuning.finetuning_type
        )
        (out / "train_summary.json").write_text(json.dumps(result.to_dict(), indent=2), encoding="utf-8")
        return result
