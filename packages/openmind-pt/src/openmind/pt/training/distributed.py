"""FSDP and DeepSpeed ZeRO through the same ``openmind train`` arguments.

``--fsdp`` takes a preset (``full_shard``, ``shard_grad_op``, ``full_shard_offload``: FSDP2 through
accelerate, consolidated ``FULL_STATE_DICT`` checkpoints) or a JSON file of transformers'
``fsdp_config``; ``--deepspeed`` takes a preset (``z1``, ``z2``, ``z2-offload``, ``z3``,
``z3-offload``) or a DeepSpeed JSON file. The presets are files shipped in
``openmind/pt/training/presets/`` (copy one to start a custom file). The engines themselves are
accelerate's FSDP2 and DeepSpeed, driven by transformers' Trainer; openmind only resolves the
configuration and refuses, before any step (OM-T014), the combinations that cannot run.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from openmind.core.training.errors import T_BAD_SETUP, T_DISTRIBUTED

PRESETS = Path(__file__).parent / "presets"
DEEPSPEED_PRESETS = ("z1", "z2", "z2-offload", "z3", "z3-offload")
FSDP_PRESETS = ("full_shard", "shard_grad_op", "full_shard_offload")


def deepspeed_config(value: str) -> dict[str, Any]:
    """``--deepspeed`` preset name or file -> the DeepSpeed config (a dict; ``auto`` values are filled by transformers)."""
    if value in DEEPSPEED_PRESETS:
        path = PRESETS / f"ds_{value}.json"
    else:
        path = Path(value)
        if not path.is_file():
            raise T_BAD_SETUP.error(
                f"DeepSpeed config {value!r} is neither a preset ({', '.join(DEEPSPEED_PRESETS)}) nor a file",
                location="deepspeed",
            )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise T_BAD_SETUP.error(
            f"DeepSpeed config {str(path)!r} is not valid JSON ({exc.msg} at line {exc.lineno})", location="deepspeed"
        ) from None


def fsdp_config(value: str) -> dict[str, Any]:
    """``--fsdp`` preset name or JSON file -> transformers' ``fsdp_config`` (FSDP2 by default)."""
    if value in FSDP_PRESETS:
        path = PRESETS / f"fsdp_{value}.json"
    elif value.endswith(".json") or os.path.isfile(value):
        path = Path(value)
        if not path.is_file():
            raise T_BAD_SETUP.error(f"FSDP config file {value!r} does not exist", location="fsdp")
    else:
        raise T_BAD_SETUP.error(
            f"--fsdp {value!r} is neither a preset ({', '.join(FSDP_PRESETS)}) nor a JSON file of fsdp_config",
            location="fsdp",
        )
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise T_BAD_SETUP.error(
            f"FSDP config {str(path)!r} is not valid JSON ({exc.msg} at line {exc.lineno})", location="fsdp"
        ) from None
    config.setdefault("version", 2)
    return config


def zero_stage(config: dict[str, Any]) -> int:
    return int((config.get("zero_optimization") or {}).get("stage", 0) or 0)


def check_distributed(args: Any, device: str) -> None:
    """OM-T014 for engine combinations that cannot run, before any model is loaded."""
    t, ft = args.training, args.finetuning
    if t.deepspeed and t.fsdp:
        raise T_DISTRIBUTED.error("--deepspeed and --fsdp are two engines; pass one of them", location="deepspeed")
    if t.deepspeed:
        config = deepspeed_config(t.deepspeed)
        if importlib.util.find_spec("deepspeed") is None:
            raise T_DISTRIBUTED.error(
                "--deepspeed needs the deepspeed package", hint="pip install deepspeed", location="deepspeed"
            )
        stage = zero_stage(config)
        if ft.finetuning_type == "qlora" and stage == 3:
            raise T_DISTRIBUTED.error(
                "qlora with ZeRO-3 cannot run: ZeRO-3 partitions the 4/8-bit bitsandbytes weights, which only "
                "CUDA kernels read" + (" (and this run is on CPU)" if device.startswith("cpu") else ""),
                location="deepspeed",
                hint="Use --deepspeed z2 with qlora, or --finetuning-type lora with z3.",
            )
        if args.finetuning.stage == "grpo" and stage == 3:
            raise T_DISTRIBUTED.error(
                "grpo generates with the trained model at every step; ZeRO-3 would gather every layer per token",
                location="deepspeed",
                hint="Use --deepspeed z2 (or z1) for grpo.",
            )
    if t.fsdp:
        config = fsdp_config(t.fsdp)
        if ft.finetuning_type == "qlora":
            raise T_DISTRIBUTED.error(
                "qlora with FSDP cannot run here: bitsandbytes' quantised weights are not sharded by FSDP2",
                location="fsdp",
                hint="Use --finetuning-type lora or full with --fsdp, or qlora without --fsdp.",
            )
        if int(config.get("version", 2)) != 2:
            raise T_DISTRIBUTED.error(
                "only FSDP2 (fsdp_config version 2) is supported: FSDP1 is deprecated in transformers",
                location="fsdp",
            )
        if args.finetuning.stage == "grpo":
            raise T_DISTRIBUTED.error(
                "grpo generates with the trained model at every step; use DDP (--nproc) or --deepspeed z2",
                location="fsdp",
            )


def trainer_kwargs(args: Any) -> dict[str, Any]:
    """``deepspeed`` / ``fsdp`` + ``fsdp_config`` keyword arguments of transformers' TrainingArguments."""
    t = args.training
    if t.deepspeed:
        return {"deepspeed": deepspeed_config(t.deepspeed)}
    if t.fsdp:
        return {"fsdp": True, "fsdp_config": fsdp_config(t.fsdp)}
    return {}


@functools.cache  # registered once per process
def end_process_group_at_exit() -> None:
    """Destroy the default process group when the process exits, while the interpreter is still whole.

    A torchrun worker that leaves without ``destroy_process_group()`` can be killed by SIGABRT
    ("terminate called without an active exception") during interpreter teardown: gloo's worker
    threads still hold work objects whose tensors need the GIL. The group stays usable until exit
    (an SDK caller can still evaluate or save after ``train()``).

    Destroying the group does not stop gloo's threads while the model still holds the group (FSDP's
    device mesh, DDP's reducer), so a CLI worker also asks to leave without interpreter teardown
    (:func:`openmind.core.exiting.leave_promptly`): its atexit functions run, then ``os._exit``.
    """
    atexit.register(_destroy_process_group)
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        from openmind.core.exiting import leave_promptly

        leave_promptly("torch.distributed worker: the process group's threads outlive destroy_process_group")


def _destroy_process_group() -> None:
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
    except Exception as exc:  # exit must go on; the training's results are already written
        from openmind.core.logs import logger

        logger.debug("destroying the process group at exit failed: %s", exc)
