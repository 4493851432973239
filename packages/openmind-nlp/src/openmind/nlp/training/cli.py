"""The ``train`` and ``export`` verbs (framework neutral; the work is done by the selected
per-framework trainer, see :mod:`openmind.core.training`)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from openmind.core import args as A
from openmind.core.cli.command import Command
from openmind.core.errors import A_MISSING
from openmind.core.training.errors import T_EXPORT, T_LAUNCH
from openmind.core.training.layout import is_worker_process
from openmind.core.training.wrapper import GROUPS, stage_for_model, wrapper_for


class TrainCommand(Command):
    groups = GROUPS
    takes_config = True
    description = (
        "Train a model: continued pre-training (pt), supervised fine-tuning (sft), DPO or a reward model (rm), "
        "with full, freeze, LoRA or QLoRA fine-tuning.\n\n"
        "CONFIG is a YAML/JSON file of arguments (flat or grouped by model/data/template/finetuning/training) "
        "or a run folder to start from; --key value flags override it. The resolved arguments are saved to "
        "OUTPUT_DIR/openmind_args.yaml before the first step."
    )
    epilog = """examples:
  openmind train sft.yaml
  openmind train --model ./tiny --dataset data.jsonl --stage sft --finetuning-type lora --output-dir runs/a
  openmind train sft.yaml --resume true                 continue from the latest complete checkpoint
  openmind train sft.yaml --nproc 2                     DDP through torchrun (gloo on CPU)
  openmind train sft.yaml --nproc 2 --fsdp full_shard   FSDP2 (or --deepspeed z2 / z3-offload / FILE)
  openmind train sft.yaml --nnodes 2 --node-rank 0 --master-addr 10.0.0.1    (same on node 1 with rank 1)
  openmind chat runs/a                                  chat with the result

A run folder holds: the model or adapter, checkpoint-N/, train_summary.json, loss.png, runs/ (TensorBoard)."""

    def run(self, args: argparse.Namespace) -> int:
        ns = self.resolve(args)
        # sft on a vision-language model folder trains as mm-sft (when openmind-mm registers it)
        ns.finetuning.stage = stage_for_model(ns.finetuning.stage, ns.model.model)
        spec = wrapper_for(ns.finetuning.stage)  # OM-T012 for a registered task nothing can train
        wrapper = spec.load()(ns)
        t = ns.training
        if (t.nproc > 1 or t.nnodes > 1) and not is_worker_process():
            wrapper.validate()
            args_file = wrapper.save_args()
            command = wrapper.launch_command([str(args_file)])
            if command is not None:
                where = f" on node {t.node_rank} of {t.nnodes}" if t.nnodes > 1 else ""
                print(f"launching {t.nproc} processes{where}: {' '.join(command)}", file=sys.stderr, flush=True)
                try:
                    return subprocess.run(command, check=False, preexec_fn=_stop_with_launcher).returncode
                except FileNotFoundError as exc:
                    raise T_LAUNCH.error(f"cannot start {command[0]!r}: {exc}") from None
        wrapper.train()
        return 0


def _stop_with_launcher() -> None:
    """In the relaunched job (torchrun, before it starts): on Linux, SIGTERM it when this launcher dies,
    even by SIGKILL, so that it stops its workers (it starts them in sessions of their own; they would
    otherwise go on training into the run folder)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


class ExportCommand(Command):
    groups = ("model", "export")
    takes_config = True
    description = (
        "Export a model: merge a LoRA adapter (or a LoRA training run folder) into its base model and write "
        "sharded safetensors with the tokenizer and chat template; --push ID uploads the result to a hub.\n\n"
        "A full fine-tuning run folder passed as --model is exported as is (re-sharded, dtype converted).\n\n"
        "CONFIG is a YAML/JSON file of arguments (LLaMA-Factory's merge_lora files and openMind 1.0's export "
        "files are read through their dialects); a folder given instead is the model to export (--model)."
    )
    epilog = """examples:
  openmind export --model ./base --adapter runs/lora --out ./merged
  openmind export --adapter runs/lora --out ./merged          (base model read from the run's arguments)
  openmind export --model ./base --adapter runs/lora --out ./merged --push hf::me/merged
  openmind export examples/merge_lora/qwen3_lora_sft.yaml     (LLaMA-Factory's merge file, export_dir -> out)"""

    def run(self, args: argparse.Namespace) -> int:
        if args.config is not None and os.path.isdir(args.config):
            # a folder is the model to export (a run folder's saved arguments are its training's, not an export's)
            if args.model is None:
                args.model = args.config
            args.config = None
        ns = self.resolve(args)
        run_export(ns)
        return 0


def run_export(ns: A.Namespace) -> Path:
    """Fill in the base model from an adapter run folder, then export through the framework's trainer."""
    from openmind.core.api import select

    model, export = ns.model, ns.export
    if not export.out:
        raise A_MISSING.error("no export folder given", hint="Pass --out DIR.", location="out")
    if model.adapter and not os.path.exists(model.adapter):
        raise T_EXPORT.error(f"adapter {model.adapter!r} does not exist", location="adapter")
    if model.adapter and not model.model:
        saved = A.load_run(model.adapter)
        if saved and saved.get("model"):
            model.model = saved["model"]
    if not model.model:
        raise A_MISSING.error(
            "no base model given", hint="Pass --model BASE (the model the adapter was trained on).", location="model"
        )
    spec, _ = select("trainer", "sft", model.framework)
    path = spec.load().export(ns)
    print(f"exported to {path}", file=sys.stderr)
    if export.push:
        from openmind.core.hub import push

        result = push(path, export.push, hub=model.hub)
        print(f"pushed {path} to {export.push}: {result}", file=sys.stderr)
    return Path(path)
