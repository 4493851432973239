"""Trainer wrappers and THE contract between a trainer wrapper and a per-framework trainer.

A **trainer wrapper** (one per training task: ``pt``, ``sft``, ``dpo``, ``rm``; registered as a
:class:`~openmind.core.specs.TrainerWrapperSpec`) is what users touch: ``openmind train`` and
``openmind.train(...)``. It is framework neutral: it resolves the unified arguments
(:mod:`openmind.core.args`, groups :data:`GROUPS`), fixes the stage, picks the per-framework
trainer with ``openmind.core.api.select("trainer", stage, framework)`` and saves the resolved
arguments to the run folder (``openmind_args.yaml``) before any training step.

A **per-framework trainer** (registered as a :class:`~openmind.core.specs.TrainerSpec` for
``(task, framework, backend)``) implements the training. Contract (the PyTorch trainers in
``openmind.pt.training`` and the MindSpore ones implement exactly this)::

    class FrameworkTrainer:
        #: finetuning types it accepts (also listed in its TrainerSpec)
        finetuning_types: tuple[str, ...]

        def __init__(self, args: openmind.core.args.Namespace, *, stage: str) -> None:
            '''Store the resolved arguments (groups model, template, data, finetuning,
            training). Must be cheap: no model, no data loaded yet.'''

        def check(self) -> None:
            '''Load tokenizer, template, model and data; set up the finetuning type. Raise
            every coded error that can be known up front here (OM-T0xx, OM-D0xx, OM-M0xx,
            OM-TP0xx, OM-V0xx): no training step has run when this returns or raises.'''

        def train(self) -> TrainResult:
            '''Run the stage (calls check() if it has not run). Writes into
            ``args.training.output_dir``:

            * the trained model: the full model (config.json + *.safetensors) for full/freeze,
              the adapter (adapter_config.json + adapter_model.safetensors) for lora/qlora;
              plus the tokenizer and the chat template, so the folder loads on its own;
            * checkpoint-N/ folders (model/adapter, optimizer, scheduler, RNG, data position),
              each one complete only when it holds ``openmind_checkpoint.json`` (written last,
              atomically); ``--resume`` starts from the newest complete one;
            * ``train_summary.json`` (:data:`SUMMARY_FILE`: steps, tokens, seconds, final loss,
              peak memory ...), ``loss.png`` when ``plot_loss``, TensorBoard logs in ``runs/``.'''

        @classmethod
        def launch_command(cls, args, argv: list[str]) -> list[str] | None:
            '''The command line to re-run ``openmind train argv`` under a multi-process
            launcher (torchrun, msrun) when ``args.training.nproc > 1`` and this process is not
            already one of the launched workers; None to train in this process.'''

        @classmethod
        def export(cls, args) -> pathlib.Path:
            '''``openmind export``: merge ``args.model.adapter`` into ``args.model.model`` and
            write sharded safetensors + tokenizer + template to ``args.export.out``.'''

The run folder is the hand-over point to the other stages: ``openmind chat RUN_DIR``,
``eval``, ``deploy`` and ``export --adapter RUN_DIR`` read ``openmind_args.yaml`` (model,
template, ...) and the weights written there.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from openmind.core import args as A
from openmind.core.errors import A_BAD_FILE, A_BAD_VALUE, A_MISSING
from openmind.core.logs import logger
from openmind.nlp.training.errors import T_BAD_SETUP, T_NO_DATASET, T_OUTPUT_EXISTS

#: argument groups every training stage takes
GROUPS = ("model", "template", "data", "finetuning", "training")
#: written at the end of a run, in the run folder
SUMMARY_FILE = "train_summary.json"
#: the loss curve, in the run folder
PLOT_FILE = "loss.png"
#: marks a checkpoint folder as complete (written last, atomically)
CHECKPOINT_MARKER = "openmind_checkpoint.json"


@dataclass
class TrainResult:
    """What a training run returns (also written to ``SUMMARY_FILE``)."""

    output_dir: str
    stage: str
    finetuning_type: str
    global_step: int = 0
    train_loss: float | None = None
    final_loss: float | None = None
    eval_loss: float | None = None
    tokens: int = 0
    seconds: float = 0.0
    tokens_per_second: float = 0.0
    peak_memory_mb: float | None = None
    resumed_from: str | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    #: what the trainer logged, step by step (loss, learning rate, eval loss, stage metrics)
    history: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def default_output_dir(stage: str) -> str:
    return os.path.join("runs", f"{stage}-{time.strftime('%Y%m%d-%H%M%S')}")


def is_worker_process() -> bool:
    """True inside a process started by a distributed launcher (torchrun, msrun...)."""
    return "LOCAL_RANK" in os.environ or "RANK_ID" in os.environ


def is_main_process() -> bool:
    return os.environ.get("RANK", os.environ.get("RANK_ID", "0")) in ("0", "")


class TrainerWrapper:
    """The framework-neutral trainer of one training stage.

    Example::

        from openmind.nlp.training import SFTWrapper
        result = SFTWrapper.from_config("sft.yaml", learning_rate=1e-4)   # trains
        result.final_loss, result.output_dir
    """

    stage: ClassVar[str] = ""
    groups: ClassVar[tuple[str, ...]] = GROUPS

    def __init__(self, args: A.Namespace) -> None:
        self.args = args
        finetuning = args.finetuning
        if finetuning.stage != self.stage:
            if "stage" in args.explicit:
                raise T_BAD_SETUP.error(
                    f"stage {finetuning.stage!r} given to the {self.stage!r} trainer", location="stage"
                )
            finetuning.stage = self.stage
        self.trainer_spec, self.reason = self._select()
        self._trainer = None
        spec, ft = self.trainer_spec, finetuning.finetuning_type
        if spec.finetuning_types and ft not in spec.finetuning_types:
            raise T_BAD_SETUP.error(
                f"the {spec.framework} {self.stage} trainer supports finetuning types "
                f"{', '.join(spec.finetuning_types)}, not {ft!r}",
                location="finetuning_type",
            )

    # ---- construction ----------------------------------------------------------------
    @classmethod
    def resolve(
        cls,
        config: str | os.PathLike | dict | None = None,
        overrides: list[str] | dict[str, Any] | None = None,
        base: dict[str, Any] | None = None,
    ) -> A.Namespace:
        """Resolve the unified arguments for this stage (file/mapping, then overrides)."""
        if isinstance(config, (str, os.PathLike)) and Path(config).is_dir():
            saved = A.load_run(config)
            if saved is None:
                raise A_BAD_FILE.error(f"{str(config)!r} is a folder without {A.ARGS_FILE}", location=str(config))
            base, config = {**saved, **(base or {})}, None
        return A.parse(cls.groups, config=config, overrides=overrides, base=base)

    @classmethod
    def prepare(cls, config: str | os.PathLike | dict | None = None, **overrides: Any) -> TrainerWrapper:
        """Build the wrapper without training (``.check()`` / ``.train()`` later)."""
        overrides.setdefault("stage", cls.stage)
        return cls(cls.resolve(config, overrides))

    @classmethod
    def from_config(cls, config: str | os.PathLike | dict | None = None, **overrides: Any) -> TrainResult:
        """Resolve the arguments and train; what ``openmind.train(config, **overrides)`` calls."""
        return cls.prepare(config, **overrides).train()

    # ---- the work --------------------------------------------------------------------
    def _select(self):
        from openmind.core.api import select

        return select("trainer", self.stage, self.args.model.framework)

    def validate(self) -> None:
        """Framework-free checks of the arguments (before anything is loaded)."""
        args = self.args
        if not args.model.model:
            raise A_MISSING.error("no model to train", hint="Pass --model PATH_OR_HUB_ID.", location="model")
        if not args.data.dataset:
            raise T_NO_DATASET.error(f"stage {self.stage!r} needs training data and no dataset was given")
        training = args.training
        if not training.output_dir:
            training.output_dir = default_output_dir(self.stage)
        out = Path(training.output_dir)
        if (
            out.is_dir()
            and any(p.name != A.ARGS_FILE for p in out.iterdir())
            and not (training.resume or training.overwrite_output_dir)
            and not is_worker_process()
        ):
            raise T_OUTPUT_EXISTS.error(f"output_dir {str(out)!r} already holds files", location="output_dir")
        for key in ("per_device_train_batch_size", "gradient_accumulation_steps", "nproc", "logging_steps"):
            if getattr(training, key) < 1:
                raise A_BAD_VALUE.error(f"{key} must be >= 1, not {getattr(training, key)}", location=key)
        if args.data.cutoff_len < 2:
            raise A_BAD_VALUE.error(f"cutoff_len must be >= 2, not {args.data.cutoff_len}", location="cutoff_len")
        ft = args.finetuning
        if ft.finetuning_type in ("lora", "qlora") and ft.lora_rank < 1:
            raise A_BAD_VALUE.error(f"lora_rank must be >= 1, not {ft.lora_rank}", location="lora_rank")
        if ft.finetuning_type == "qlora" and ft.quantization_bit not in (None, 4, 8):
            raise A_BAD_VALUE.error(
                f"quantization_bit must be 4 or 8, not {ft.quantization_bit}", location="quantization_bit"
            )

    @property
    def trainer(self):
        """The per-framework trainer (built on first use)."""
        if self._trainer is None:
            cls = self.trainer_spec.load()
            self._trainer = cls(self.args, stage=self.stage)
        return self._trainer

    def launch_command(self, argv: list[str]) -> list[str] | None:
        if self.args.training.nproc <= 1 or is_worker_process():
            return None
        return type(self.trainer).launch_command(self.args, argv)

    def check(self) -> None:
        """Everything that can fail before the first step: arguments, model, data, template."""
        self.validate()
        self.save_args()
        self.trainer.check()

    def save_args(self) -> Path | None:
        if not is_main_process():
            return None
        return A.save(self.args, self.args.training.output_dir)

    def train(self) -> TrainResult:
        self.validate()
        logger.info("training %s with %s", self.stage, self.reason)
        self.save_args()
        result = self.trainer.train()
        if is_main_process():
            print(f"training done: {result.output_dir} (final loss {result.final_loss})", file=sys.stderr)
        return result


class PretrainWrapper(TrainerWrapper):
    """Continued pre-training (``pt``) on plain text."""

    stage = "pt"


class SFTWrapper(TrainerWrapper):
    """Supervised fine-tuning (``sft``) on conversations."""

    stage = "sft"


class DPOWrapper(TrainerWrapper):
    """Direct preference optimisation (``dpo``) on chosen/rejected pairs."""

    stage = "dpo"


class RMWrapper(TrainerWrapper):
    """Reward-model training (``rm``) on chosen/rejected pairs."""

    stage = "rm"


WRAPPERS: dict[str, type[TrainerWrapper]] = {w.stage: w for w in (PretrainWrapper, SFTWrapper, DPOWrapper, RMWrapper)}
