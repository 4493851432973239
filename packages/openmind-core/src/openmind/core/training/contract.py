"""The typed contract between a trainer wrapper and a per-framework trainer, and the plan the
wrapper hands over.

A **trainer wrapper** (:class:`~openmind.core.training.wrapper.TrainerWrapper`, one per training
task) does every framework-neutral step once: it resolves and checks the arguments, resolves the
defaults (LoRA alpha), saves ``openmind_args.yaml`` and builds a :class:`TrainPlan`. The domain
that owns the stage (openmind-nlp for ``pt``/``sft``/``dpo``/``rm``) fills the plan's data steps:
the template/tokenizer check (OM-T002) and data preparation with the cutoff errors (OM-T003).

A **framework trainer** (:class:`FrameworkTrainer`, registered as a
:class:`~openmind.core.specs.TrainerSpec` for ``(task, framework)``) only trains: it loads the
tokenizer/template/model its framework's way, calls ``plan.check_template(...)`` and
``plan.prepare_data(...)``, then runs the loop and writes the run folder
(:mod:`openmind.core.training.layout`).
"""

from __future__ import annotations

import abc
import pathlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from openmind.core.training.errors import T_BAD_SETUP
from openmind.core.training.layout import TrainResult

__all__ = ["FrameworkTrainer", "PreparedData", "TrainPlan", "default_lora_alpha"]


def default_lora_alpha(lora_rank: int, lora_alpha: int | None = None) -> int:
    """LoRA alpha: the given one, else ``2 x rank`` (THE place of this default)."""
    return int(lora_alpha) if lora_alpha is not None else 2 * int(lora_rank)


@dataclass
class PreparedData:
    """Tokenised, label-masked (optionally packed) train/eval sets, framework neutral (``datasets``
    tables or lists of rows); the framework trainer turns them into batches its own way."""

    train: Any
    eval: Any
    stats: dict[str, Any] = field(default_factory=dict)


def _no_template_check(template: Any, tokenizer: Any) -> None:
    return None


def _no_data(plan: TrainPlan, tokenizer: Any, template: Any, *, quiet: bool = False) -> PreparedData:
    raise T_BAD_SETUP.error(f"stage {plan.stage!r}: its trainer wrapper gives no data preparation", location="stage")


@dataclass
class TrainPlan:
    """What a trainer wrapper hands a framework trainer: the resolved arguments plus every
    framework-neutral value and step decided once (never recomputed by a backend)."""

    args: Any
    stage: str
    finetuning_type: str
    output_dir: str
    #: the framework this plan was selected for (``pt``, ``ms``, a plugin's)
    framework: str = ""
    #: resolved LoRA alpha (``lora_alpha`` or 2 x rank), None when not a LoRA type
    lora_alpha: int | None = None
    resume: bool = False
    #: the intact checkpoint to resume from, verified by the wrapper before anything is written
    resume_from: str | None = None
    #: newer checkpoints skipped because they are damaged or unfinished (``Verdict`` objects)
    resume_skipped: list = field(default_factory=list)
    #: ``(template, tokenizer) -> None``; raises OM-T002 on a mismatch
    template_check: Callable[[Any, Any], None] = _no_template_check
    #: ``(plan, tokenizer, template, quiet=) -> PreparedData``; raises OM-T003 / OM-D0xx
    data_step: Callable[..., PreparedData] = _no_data

    @classmethod
    def from_args(cls, args: Any, stage: str, framework: str = "") -> TrainPlan:
        ft = args.finetuning
        lora = ft.finetuning_type in ("lora", "qlora")
        return cls(
            args=args,
            stage=stage,
            finetuning_type=ft.finetuning_type,
            output_dir=str(args.training.output_dir or ""),
            framework=framework,
            lora_alpha=default_lora_alpha(ft.lora_rank, ft.lora_alpha) if lora else None,
            resume=bool(args.training.resume),
        )

    def check_template(self, template: Any, tokenizer: Any) -> None:
        if template is not None:
            self.template_check(template, tokenizer)

    def prepare_data(self, tokenizer: Any, template: Any, *, quiet: bool = False) -> PreparedData:
        return self.data_step(self, tokenizer, template, quiet=quiet)


class FrameworkTrainer(abc.ABC):
    """The per-framework trainer of one or more stages (the typed form of the trainer contract).

    * ``__init__(args, *, stage, plan=None)`` stores the arguments; cheap (nothing loaded). A trainer
      built without a plan (old callers) gets :meth:`TrainPlan.from_args`.
    * :meth:`check` loads tokenizer, template, model and data and raises every coded error that can
      be known up front (no training step has run when it returns or raises).
    * :meth:`train` runs the stage (calls :meth:`check` first) and writes the run folder: the model
      or adapter + tokenizer + template, ``checkpoint-N/`` each complete once it holds
      ``openmind_checkpoint.json``, ``train_summary.json``, ``loss.png`` when ``plot_loss``.
    * :meth:`launch_command` the command line to re-run under a multi-process launcher, or None.
    * :meth:`export` merges ``args.model.adapter`` into ``args.model.model`` into ``args.export.out``.
    """

    #: stages it trains (empty: any stage its TrainerSpecs register it for)
    stages: ClassVar[tuple[str, ...]] = ()
    #: finetuning types it accepts (also listed in its TrainerSpec)
    finetuning_types: ClassVar[tuple[str, ...]] = ("full",)

    def __init__(self, args: Any, *, stage: str | None = None, plan: TrainPlan | None = None) -> None:
        self.args = args
        self.stage = stage or getattr(self, "stage", "") or args.finetuning.stage
        self.plan = plan if plan is not None else TrainPlan.from_args(args, self.stage)

    def check_supported(self) -> None:
        """OM-T008 for a stage or finetuning type this trainer does not implement."""
        name = type(self).__name__
        if self.stages and self.stage not in self.stages:
            raise T_BAD_SETUP.error(
                f"{name} trains stages {', '.join(self.stages)}, not {self.stage!r}", location="stage"
            )
        ft = self.plan.finetuning_type
        if self.finetuning_types and ft not in self.finetuning_types:
            raise T_BAD_SETUP.error(
                f"{name} supports finetuning types {', '.join(self.finetuning_types)}, not {ft!r}",
                location="finetuning_type",
            )

    @abc.abstractmethod
    def check(self) -> None: ...

    @abc.abstractmethod
    def train(self) -> TrainResult: ...

    @classmethod
    def launch_command(cls, args: Any, argv: list[str]) -> list[str] | None:
        return None

    @classmethod
    def export(cls, args: Any) -> pathlib.Path:
        raise T_BAD_SETUP.error(f"{cls.__name__} cannot export", location="framework")
