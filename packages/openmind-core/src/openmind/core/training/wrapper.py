"""The trainer wrapper base: the framework-neutral trainer of one training stage.

A trainer wrapper (one per training task, registered as a
:class:`~openmind.core.specs.TrainerWrapperSpec`) is what users touch: ``openmind train`` and
``openmind.train(...)``. It resolves the unified arguments, fixes the stage, picks the
per-framework trainer with ``openmind.core.api.select("trainer", stage, framework)``, checks the
arguments, saves them to the run folder (``openmind_args.yaml``) before any training step and hands
the framework trainer a :class:`~openmind.core.training.contract.TrainPlan`. A domain's wrapper
fills the plan's data steps (:meth:`TrainerWrapper.data_step`, :meth:`TrainerWrapper.template_check`).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

from openmind.core import args as A
from openmind.core.errors import A_BAD_FILE, A_BAD_VALUE, A_MISSING, OpenMindError
from openmind.core.logs import logger
from openmind.core.training.contract import FrameworkTrainer, PreparedData, TrainPlan
from openmind.core.training.errors import (
    T_BAD_SETUP,
    T_NO_CHECKPOINT,
    T_NO_DATASET,
    T_NOT_TRAINABLE,
    T_OUTPUT_EXISTS,
)
from openmind.core.training.layout import TrainResult, default_output_dir, is_main_process, is_worker_process

#: argument groups every training stage takes
GROUPS = ("model", "template", "data", "finetuning", "training")


def training_stages(registry: Any = None) -> tuple[str, ...]:
    """The ``stage`` choices: every registered training task (and its aliases), so a plugin's
    training task is a stage without editing openmind-core."""
    if registry is None:
        from openmind.core.plugins import get_registry

        registry = get_registry()
    names: list[str] = []
    for task in registry.tasks():
        if task.kind_of == "training":
            names += [task.name, *task.aliases]
    return tuple(names)


def wrapper_for(stage: str, registry: Any = None):
    """The :class:`~openmind.core.specs.TrainerWrapperSpec` of ``stage`` (a task name or alias);
    OM-T012 when the task is registered but nothing can train it (no wrapper, or no framework
    trainer)."""
    if registry is None:
        from openmind.core.plugins import get_registry

        registry = get_registry()
    stages = training_stages(registry)
    if stage not in stages:  # the same answer as the argument parser's for --stage
        listed = ", ".join(stages) or "(none registered: install the package that provides them)"
        raise A_BAD_VALUE.error(f"stage: {stage!r} is not one of {listed}", location="stage")
    task = registry.task(stage)
    spec = registry.find("trainer-wrapper", task.name)
    missing = []
    if spec is None:
        missing.append(f"trainer wrapper (TrainerWrapperSpec(task={task.name!r}))")
    if not registry.trainers_for(task.name):
        missing.append(f"framework trainer (TrainerSpec(task={task.name!r}, framework=...))")
    if missing:
        raise T_NOT_TRAINABLE.error(
            f"training task {task.name!r} (registered by {task.component or 'a plugin'}) cannot be trained yet: "
            f"no {' and no '.join(missing)} is registered",
            location="stage",
        )
    return spec


#: the stage a vision-language model folder trains with when ``sft`` is asked for
VISION_LANGUAGE_STAGE = "mm-sft"


def stage_for_model(stage: str, model: Any, registry: Any = None) -> str:
    """``sft`` on a local vision-language model folder (config.json with a ``vision_config``) is
    ``mm-sft`` when a trainer wrapper for it is registered; any other stage is returned as is."""
    import json

    if stage != "sft" or not model or not isinstance(model, (str, os.PathLike)):
        return stage
    config = Path(os.path.expanduser(str(model))) / "config.json"
    try:
        is_vl = config.is_file() and "vision_config" in json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return stage
    if not is_vl:
        return stage
    if registry is None:
        from openmind.core.plugins import get_registry

        registry = get_registry()
    if (
        VISION_LANGUAGE_STAGE not in training_stages(registry)
        or registry.find("trainer-wrapper", VISION_LANGUAGE_STAGE) is None
    ):
        return stage
    logger.info("%s is a vision-language model: stage sft trains as %s", model, VISION_LANGUAGE_STAGE)
    return VISION_LANGUAGE_STAGE


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
        self._plan: TrainPlan | None = None
        #: (checkpoint folder, skipped verdicts) once validate() has verified the resume point
        self._resume: tuple[str, list] | None = None
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
        return A.parse(cls.all_groups(), config=config, overrides=overrides, base=base)

    @classmethod
    def all_groups(cls) -> tuple[str, ...]:
        """:attr:`groups` plus the registered argument groups of the ``train`` verb (a backend
        plugin's own flags, e.g. ``mindspeed``): the SDK takes the same keys as ``openmind train``."""
        from openmind.core.plugins import get_registry

        names = [g.name for g in get_registry().argument_groups_for("train")]
        return cls.groups + tuple(n for n in names if n not in cls.groups)

    @classmethod
    def prepare(cls, config: str | os.PathLike | dict | None = None, **overrides: Any) -> TrainerWrapper:
        """Build the wrapper without training (``.check()`` / ``.train()`` later)."""
        overrides.setdefault("stage", cls.stage)
        return cls(cls.resolve(config, overrides))

    @classmethod
    def from_config(cls, config: str | os.PathLike | dict | None = None, **overrides: Any) -> TrainResult:
        """Resolve the arguments and train; what ``openmind.train(config, **overrides)`` calls."""
        return cls.prepare(config, **overrides).train()

    # ---- the framework-neutral steps a domain fills in ----------------------------------
    def template_check(self, template: Any, tokenizer: Any) -> None:
        """Raise OM-T002 when ``template`` does not fit ``tokenizer`` (domains override)."""

    def data_step(self, plan: TrainPlan, tokenizer: Any, template: Any, *, quiet: bool = False) -> PreparedData:
        """Prepared train/eval data for ``plan`` (domains override; OM-T003 for cutoff problems)."""
        raise T_BAD_SETUP.error(f"stage {self.stage!r}: its trainer wrapper gives no data preparation")

    # ---- the work --------------------------------------------------------------------
    def _select(self):
        from openmind.core.api import select
        from openmind.core.errors import I_NO_PIPELINE, OpenMindError

        try:
            return select("trainer", self.stage, self.args.model.framework)
        except OpenMindError as exc:
            if exc.code != I_NO_PIPELINE.code:
                raise
            # a training stage this framework does not train: a training error, named as such
            raise T_BAD_SETUP.error(
                f"stage {self.stage!r} cannot be trained with framework {self.args.model.framework!r}: {exc.message}",
                hint="`openmind list trainers` shows the stages and finetuning types of each framework.",
                location="stage",
            ) from exc

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
        check_output_dir(out)
        check_numbers(args)
        if (
            out.is_dir()
            and any(p.name != A.ARGS_FILE for p in out.iterdir())
            and not (training.resume or training.overwrite_output_dir)
            and not is_worker_process()
        ):
            raise T_OUTPUT_EXISTS.error(f"output_dir {str(out)!r} already holds files", location="output_dir")
        if training.resume and not is_worker_process() and self._resume is None:
            self._resume = find_resume(out)
        for key in ("per_device_train_batch_size", "gradient_accumulation_steps", "nproc", "nnodes", "logging_steps"):
            if getattr(training, key) < 1:
                raise A_BAD_VALUE.error(f"{key} must be >= 1, not {getattr(training, key)}", location=key)
        if not 0 <= training.node_rank < training.nnodes:
            raise A_BAD_VALUE.error(
                f"node_rank must be in 0..{training.nnodes - 1} (nnodes={training.nnodes}), not {training.node_rank}",
                location="node_rank",
            )
        from openmind.core.compat.common import optimizer_problem
        from openmind.core.errors import X_MISSING

        for key, value in (getattr(training, "trainer_args", None) or {}).items():
            problem = optimizer_problem(key, value)
            if problem:  # transformers would raise ImportError only after the model is loaded
                raise X_MISSING.error(f"trainer_args: {problem}", location=f"trainer_args.{key}")
        if args.data.cutoff_len < 2:
            raise A_BAD_VALUE.error(f"cutoff_len must be >= 2, not {args.data.cutoff_len}", location="cutoff_len")
        ft = args.finetuning
        if ft.finetuning_type in ("lora", "qlora") and ft.lora_rank < 1:
            raise A_BAD_VALUE.error(f"lora_rank must be >= 1, not {ft.lora_rank}", location="lora_rank")
        if ft.finetuning_type in ("lora", "qlora") and ft.lora_alpha is not None and ft.lora_alpha < 1:
            raise A_BAD_VALUE.error(f"lora_alpha must be >= 1, not {ft.lora_alpha}", location="lora_alpha")
        if ft.finetuning_type == "qlora" and ft.quantization_bit not in (None, 4, 8):
            raise A_BAD_VALUE.error(
                f"quantization_bit must be 4 or 8, not {ft.quantization_bit}", location="quantization_bit"
            )

    @property
    def plan(self) -> TrainPlan:
        """The plan handed to the framework trainer (built once, after :meth:`validate`)."""
        if self._plan is None:
            plan = TrainPlan.from_args(self.args, self.stage, getattr(self.trainer_spec, "framework", ""))
            plan.template_check = self.template_check
            plan.data_step = self.data_step
            if self._resume is not None:
                plan.resume_from, plan.resume_skipped = self._resume
            self._plan = plan
        return self._plan

    @property
    def trainer(self):
        """The per-framework trainer (built on first use)."""
        if self._trainer is None:
            cls = self.trainer_spec.load()
            if isinstance(cls, type) and issubclass(cls, FrameworkTrainer):
                self._trainer = cls(self.args, stage=self.stage, plan=self.plan)
            else:  # an untyped trainer that follows the documented contract
                self._trainer = cls(self.args, stage=self.stage)
        return self._trainer

    def launch_command(self, argv: list[str]) -> list[str] | None:
        t = self.args.training
        if (t.nproc <= 1 and t.nnodes <= 1) or is_worker_process():
            return None
        return type(self.trainer).launch_command(self.args, argv)

    def check(self) -> None:
        """Everything that can fail before the first step: arguments, model, data, template."""
        with self.located():
            self.validate()
            self.save_args()
            self.trainer.check()

    @contextlib.contextmanager
    def located(self):
        """An error located at a field the config file set names that file's line too
        (``at: run.yaml:12 (deepspeed)``), whichever step raised it."""
        try:
            yield
        except OpenMindError as exc:
            where = getattr(self.args, "where", None) or {}
            field = exc.location
            if isinstance(field, str) and field in where and not field.startswith(where[field]):
                exc.location = f"{where[field]} ({field})"
            raise

    def save_args(self) -> Path | None:
        if not is_main_process():
            return None
        return A.save(self.args, self.args.training.output_dir)

    def train(self) -> TrainResult:
        with self.located():
            return self._train()

    def _train(self) -> TrainResult:
        self.validate()
        logger.info("training %s with %s", self.stage, self.reason)
        if self.args.training.resume and (Path(self.args.training.output_dir) / A.ARGS_FILE).is_file():
            # a resume that fails while loading (model, data, checkpoint) leaves the run folder as it was
            self.trainer.check()
        out = Path(self.args.training.output_dir)
        existed = out.is_dir()
        before = set(out.iterdir()) if existed else set()
        self.save_args()
        try:
            result = self.trainer.train()
        except BaseException:
            if not is_worker_process():
                _undo_failed_start(out, existed, before)
            raise
        if is_main_process():
            print(f"training done: {result.output_dir} (final loss {result.final_loss})", file=sys.stderr)
        return result


#: what a run writes to its folder before loading anything (save_args)
_SETUP_FILES = (A.ARGS_FILE, "openmind_template.txt")


def _undo_failed_start(out: Path, existed: bool, before: set[Path]) -> None:
    """A run that fails before its first checkpoint (a setup error raised while loading) leaves the
    run folder as it found it: what it wrote there (openmind_args.yaml, ...) is removed, and the folder
    itself when this run created it. A run that got further (a checkpoint, logs) keeps its folder."""

    try:
        new = [p for p in out.iterdir() if p not in before]
    except OSError:
        return
    if any(p.name not in _SETUP_FILES or not p.is_file() for p in new):
        return  # it got further (data, logs, checkpoints): keep what it wrote
    for path in new:
        path.unlink(missing_ok=True)
    if not existed:
        try:
            out.rmdir()
        except OSError:
            pass


def check_output_dir(out: Path) -> None:
    """OM-A002 when ``output_dir`` is a file, lies under a file, or cannot be written (checked before loading)."""
    for parent in [out, *out.parents]:
        if parent.exists():
            if not parent.is_dir():
                what = "is a file" if parent == out else f"lies under {str(parent)!r}, which is a file"
                raise A_BAD_VALUE.error(
                    f"output_dir {str(out)!r} {what}",
                    location="output_dir",
                    hint="Pass --output-dir a folder path (new or existing).",
                )
            if not os.access(parent, os.W_OK | os.X_OK):
                raise A_BAD_VALUE.error(
                    f"output_dir {str(out)!r} cannot be written: {str(parent)!r} is not writable",
                    location="output_dir",
                    hint="Pass --output-dir a folder you can write to, or fix its permissions.",
                )
            return


def check_numbers(args: Any) -> None:
    """OM-A002 for numbers no run can use (negative / NaN learning rate, a fractional val_size > 1)."""
    t = args.training
    for key in ("learning_rate", "weight_decay", "max_grad_norm", "warmup_ratio", "num_train_epochs"):
        value = getattr(t, key, None)
        if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if math.isnan(value) or math.isinf(value) or value < 0 or (key == "learning_rate" and value == 0):
            need = "> 0" if key == "learning_rate" else ">= 0"
            raise A_BAD_VALUE.error(f"{key} must be a finite number {need}, not {value}", location=key)
    check_val_size(getattr(args.data, "val_size", 0))


def check_val_size(value: Any) -> None:
    """``val_size`` is a fraction in [0, 1) or a whole number of rows (>= 1)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value < 0:
        raise A_BAD_VALUE.error(
            f"val_size must be a fraction in [0, 1) or a row count, not {value!r}", location="val_size"
        )
    if value >= 1 and float(value) != int(value):
        raise A_BAD_VALUE.error(
            f"val_size={value} is neither a fraction (< 1) nor a whole number of rows",
            location="val_size",
            hint="Use e.g. 0.1 (10% of the rows) or 200 (200 rows).",
        )


def find_resume(out: Path) -> tuple[str, list]:
    """The newest intact checkpoint in ``out`` (OM-T007 when there is none, naming what is wrong with each)."""
    from openmind.core.training.checkpoints import checkpoints, latest_intact

    folder, skipped = latest_intact(out)
    if folder is None:
        found = [f"{v.folder.name}: {v.problem}" for v in skipped]
        raise T_NO_CHECKPOINT.error(
            f"no intact checkpoint in {str(out)!r}" + (f" ({'; '.join(found)})" if found else ""),
            location="resume" if not checkpoints(out) else str(skipped[0].folder),
        )
    return str(folder), skipped
