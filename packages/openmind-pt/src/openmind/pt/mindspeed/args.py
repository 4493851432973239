"""The ``mindspeed`` argument group of ``openmind train`` (used only by the MindSpeed backend)."""

from __future__ import annotations

from dataclasses import dataclass

from openmind.core.args import arg


@dataclass
class MindSpeedArguments:
    mindspeed_home: str | None = arg(
        None, "MindSpeed backend: the MindSpeed-LLM checkout (default: MINDSPEED_LLM_HOME)."
    )
    tensor_parallel_size: int = arg(1, "MindSpeed backend: tensor-parallel size (--tensor-model-parallel-size).")
    pipeline_parallel_size: int = arg(1, "MindSpeed backend: pipeline-parallel size (--pipeline-model-parallel-size).")
    sequence_parallel: bool = arg(
        False, "MindSpeed backend: Megatron sequence parallelism (needs tensor_parallel_size > 1)."
    )
    mindspeed_prompt_type: str | None = arg(
        None, "MindSpeed backend: MindSpeed-LLM --prompt-type (default: translated from --template)."
    )
    mindspeed_args: list[str] = arg(
        [],
        "MindSpeed backend: extra flags appended to the training command, e.g. [--use-flash-attn, --use-fused-rmsnorm].",
    )
