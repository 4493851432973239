"""The PyTorch trainers: one class per training stage, implementing the contract of
:class:`openmind.core.training.FrameworkTrainer` on transformers' Trainer (pt, sft) and trl (dpo, rm).

transformers does the loop, gradient accumulation, checkpointing and resume (optimizer,
scheduler, RNG, data position), TensorBoard, early stopping, DDP/DeepSpeed/FSDP through
accelerate; trl does the DPO and reward losses. openmind adds the unified arguments, the
checks before step 1, atomic checkpoints, the progress bar fields, the summary and the plot.
"""

from __future__ import annotations

import abc
import os
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

from openmind.core.logs import logger
from openmind.core.training.contract import FrameworkTrainer, TrainPlan
from openmind.core.training.errors import T_BAD_SETUP, T_NOT_FINITE
from openmind.core.training.layout import TrainResult, is_main_process


def tensorboard_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("tensorboard") is not None or importlib.util.find_spec("tensorboardX") is not None


#: TrainingArguments fields openmind sets for its own run-folder, progress and loss handling.
PROTECTED_TRAINER_KEYS = (
    "output_dir",
    "save_strategy",
    "save_total_limit",
    "disable_tqdm",
    "remove_unused_columns",
    "prediction_loss_only",
    "include_num_input_tokens_seen",
    "use_cpu",
)


def trainer_passthrough(extra: dict[str, Any], config_cls: Any, fields: dict[str, Any]) -> dict[str, Any]:
    """Check the ``trainer_args`` pass-through keys against the trainer config class (OM-A001 for
    a key it does not have, OM-A002 for one openmind sets itself); returns them."""
    import difflib

    from openmind.core.errors import A_BAD_VALUE, A_UNKNOWN_KEY

    for key in extra:
        if key in PROTECTED_TRAINER_KEYS:
            raise A_BAD_VALUE.error(
                f"trainer_args: {key!r} is set by openmind (run folder, checkpoints, progress); remove it",
                location=f"trainer_args.{key}",
            )
        if fields and key not in fields:
            close = difflib.get_close_matches(key, list(fields), n=3, cutoff=0.6)
            raise A_UNKNOWN_KEY.error(
                f"trainer_args: {key!r} is not a field of transformers' {config_cls.__name__}",
                hint=f"Did you mean {', '.join(map(repr, close))}?" if close else None,
                location=f"trainer_args.{key}",
            )
    return dict(extra)


def mixed_precision(choice: str, device: str) -> tuple[bool, bool]:
    """``(bf16, fp16)`` for TrainingArguments. ``auto``: bf16 where supported, fp16 on older
    CUDA, none on CPU (fp32 is both faster and exact there)."""
    import torch

    if choice == "bf16":
        return True, False
    if choice == "fp16":
        return False, True
    if choice == "no" or device.startswith("cpu"):
        return False, False
    if device.startswith("cuda"):
        return (True, False) if torch.cuda.is_bf16_supported() else (False, True)
    return True, False  # npu


class TorchTrainer(FrameworkTrainer):
    """Base of the PyTorch stage trainers (the contract: :class:`openmind.core.training.FrameworkTrainer`)."""

    stage: ClassVar[str] = ""
    finetuning_types: ClassVar[tuple[str, ...]] = ("full", "freeze", "lora", "qlora")

    def __init__(self, args: Any, *, stage: str | None = None, plan: TrainPlan | None = None) -> None:
        super().__init__(args, stage=stage or self.stage, plan=plan)
        if plan is None:  # built outside a trainer wrapper: the NLP steps of the stage
            from openmind.nlp.training.base import check_template, prepare_data

            self.plan.template_check, self.plan.data_step = check_template, prepare_data
        self.loaded = None
        self.data = None
        self.hf = None
        self.resume_from: str | None = None
        self._resume_skipped: list = []

    # ---- contract --------------------------------------------------------------------
    def check(self) -> None:
        """Load and validate everything; no training step runs here."""
        if self.hf is not None:
            return
        from openmind.pt.training.data import build_datasets
        from openmind.pt.training.model import load_model_into, load_tokenizer_and_template

        self.check_supported()
        self._check_arguments()
        self.resume_from = self._find_resume()
        # data before weights: a data problem is reported without loading the model
        self.loaded = load_tokenizer_and_template(self.args, self.stage, self.plan)
        self.data = build_datasets(
            self.args,
            self.loaded.tokenizer,
            self.loaded.template,
            self.stage,
            quiet=not is_main_process(),
            plan=self.plan,
        )
        load_model_into(self.loaded, self.args, self.stage)
        self.data.use_attention(getattr(self.loaded.model.config, "_attn_implementation", None))
        self.hf = self.build_trainer()

    def train(self) -> TrainResult:
        from openmind.pt.training.distributed import end_process_group_at_exit

        end_process_group_at_exit()
        self.check()
        out = Path(self.args.training.output_dir)
        start = time.perf_counter()
        tokens0 = self.hf.state.num_input_tokens_seen
        if self._resume_skipped and is_main_process():
            from openmind.core.training.checkpoints import set_aside_broken

            for p in set_aside_broken(self._resume_skipped):
                logger.warning("set aside %s (it does not match its checkpoint marker)", p)
        result = self.hf.train(resume_from_checkpoint=self.resume_from)
        seconds = time.perf_counter() - start
        if self.stopper.bad_step is not None:
            raise T_NOT_FINITE.error(f"the training loss became NaN/inf at step {self.stopper.bad_step}")
        self.save_final()
        metrics = dict(result.metrics)
        eval_loss = None
        if self.data.eval is not None:
            metrics.update(self.hf.evaluate())
            eval_loss = metrics.get("eval_loss")
        history = self.hf.state.log_history
        losses = [h["loss"] for h in history if "loss" in h]
        tokens = self.hf.state.num_input_tokens_seen - tokens0
        from openmind.pt.training.callbacks import peak_memory_mb, plot_loss, plot_path, write_summary

        summary = TrainResult(
            output_dir=str(out),
            stage=self.stage,
            finetuning_type=self.args.finetuning.finetuning_type,
            global_step=self.hf.state.global_step,
            train_loss=metrics.get("train_loss"),
            final_loss=losses[-1] if losses else metrics.get("train_loss"),
            eval_loss=eval_loss,
            tokens=int(tokens),
            seconds=round(seconds, 3),
            tokens_per_second=round(tokens / seconds, 2) if seconds > 0 else 0.0,
            peak_memory_mb=peak_memory_mb(self.loaded.device),
            resumed_from=self.resume_from,
            metrics={
                **{k: v for k, v in metrics.items() if isinstance(v, (int, float, str))},
                "total_tokens": int(self.hf.state.num_input_tokens_seen),
                "trainable_params": self.loaded.trainable_params,
                "total_params": self.loaded.total_params,
                "data": self.data.stats,
            },
            history=[dict(h) for h in history],
        )
        if self.hf.is_world_process_zero():
            write_summary(out, summary.to_dict())
            if self.args.training.plot_loss:
                plot_loss(history, plot_path(out), title=f"{self.stage} / {self.args.finetuning.finetuning_type}")
        return summary

    @classmethod
    def launch_command(cls, args: Any, argv: list[str]) -> list[str] | None:
        from openmind.pt.training.launch import torchrun_command

        return torchrun_command(args, argv)

    @classmethod
    def export(cls, args: Any) -> Path:
        from openmind.pt.training.export import export_model

        return export_model(args)

    # ---- pieces ----------------------------------------------------------------------
    def _check_arguments(self) -> None:
        t = self.args.training
        if t.early_stopping_patience is not None and not (self.args.data.val_size or self.args.data.eval_dataset):
            raise T_BAD_SETUP.error(
                "early_stopping_patience needs an evaluation set: pass --val-size or --eval-dataset",
                location="early_stopping_patience",
            )
        from openmind.pt.training.distributed import check_distributed

        check_distributed(self.args, _device_guess())

    def _find_resume(self) -> str | None:
        from openmind.core.training.wrapper import find_resume

        out = self.args.training.output_dir
        if not self.args.training.resume:
            return None
        if self.plan.resume_from is not None:  # verified by the trainer wrapper before anything was written
            latest, skipped = self.plan.resume_from, self.plan.resume_skipped
        else:
            latest, skipped = find_resume(Path(out))
        self._resume_skipped = skipped  # set aside in train(), once loading has succeeded
        note = f" (newer: {'; '.join(f'{v.folder.name}: {v.problem}' for v in skipped)})" if skipped else ""
        print(f"resuming from {latest}{note}", file=sys.stderr)
        return str(latest)

    def training_arguments(self, config_cls: Any, **extra: Any) -> Any:
        t = self.args.training
        bf16, fp16 = mixed_precision(t.mixed_precision, self.loaded.device)
        has_eval = self.data.eval is not None
        eval_steps = t.eval_steps or t.save_steps
        report = [r for r in t.report_to if r and r != "none"]
        if "tensorboard" in report and not tensorboard_available():
            # an optional extra: training goes on without event files (never a crash)
            logger.warning(
                "report_to tensorboard: tensorboard is not installed, no event files are written "
                '(pip install "openmind-pt[tensorboard]", or pass --report-to none)'
            )
            report.remove("tensorboard")
        fields = getattr(config_cls, "__dataclass_fields__", {})
        kwargs: dict[str, Any] = dict(
            output_dir=t.output_dir,
            num_train_epochs=t.num_train_epochs,
            max_steps=t.max_steps,
            per_device_train_batch_size=t.per_device_train_batch_size,
            per_device_eval_batch_size=t.per_device_eval_batch_size,
            gradient_accumulation_steps=t.gradient_accumulation_steps,
            learning_rate=t.learning_rate,
            lr_scheduler_type=t.lr_scheduler_type,
            warmup_steps=t.warmup_ratio,  # transformers 5: a float < 1 is a ratio of the steps
            weight_decay=t.weight_decay,
            max_grad_norm=t.max_grad_norm,
            seed=t.seed,
            data_seed=t.seed,
            logging_steps=t.logging_steps,
            save_strategy="steps",
            save_steps=t.save_steps,
            save_total_limit=None,  # rotated by openmind after the new checkpoint is complete
            eval_strategy="steps" if has_eval else "no",
            eval_steps=eval_steps if has_eval else None,
            bf16=bf16,
            fp16=fp16,
            use_cpu=self.loaded.device.startswith("cpu"),
            report_to=report or "none",
            disable_tqdm=True,  # openmind's own bar (loss, lr, tokens/s, ETA)
            remove_unused_columns=False,
            prediction_loss_only=True,
            include_num_input_tokens_seen="no",  # counted by openmind (exact, padding-free aware)
            dataloader_num_workers=0,
            ddp_find_unused_parameters=False,
            **extra,
        )
        from openmind.pt.training.distributed import trainer_kwargs

        kwargs.update(trainer_kwargs(self.args))
        if t.gradient_checkpointing:
            # transformers 5 renamed it activation_checkpointing; older releases know the old name
            name = "activation_checkpointing" if "activation_checkpointing" in fields else "gradient_checkpointing"
            kwargs[name] = True
            kwargs[f"{name}_kwargs"] = {"use_reentrant": False}
        if t.early_stopping_patience is not None:
            kwargs.update(load_best_model_at_end=True, metric_for_best_model="eval_loss", greater_is_better=False)
            kwargs["eval_steps"] = t.save_steps
        kwargs.update(trainer_passthrough(getattr(t, "trainer_args", None) or {}, config_cls, fields))
        return config_cls(**kwargs)

    def callbacks(self) -> list[Any]:
        from transformers import EarlyStoppingCallback

        from openmind.pt.training.callbacks import StopOnNonFinite

        self.stopper = StopOnNonFinite()
        cbs: list[Any] = [self.stopper]
        if self.args.training.early_stopping_patience is not None:
            cbs.append(EarlyStoppingCallback(early_stopping_patience=self.args.training.early_stopping_patience))
        return cbs

    def attach_progress(self, hf: Any) -> Any:
        from transformers.trainer_callback import PrinterCallback, ProgressCallback

        from openmind.pt.training.callbacks import ProgressBar

        hf.remove_callback(ProgressCallback)
        hf.remove_callback(PrinterCallback)
        hf.add_callback(ProgressBar(_StateTokens(hf)))
        return hf

    @abc.abstractmethod
    def build_trainer(self) -> Any:
        """The transformers/trl trainer object of this stage."""

    def save_final(self) -> None:
        """The trained model (or adapter) + tokenizer + template in the run folder."""
        out = self.args.training.output_dir
        self.hf.save_model(out)
        if self.hf.is_world_process_zero():
            self.loaded.tokenizer.save_pretrained(out)
            save_template_file(self.loaded, out)


def _device_guess() -> str:
    """The device the run will use, without loading a model (for the checks before step 1)."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class _StateTokens:
    """Live view of the effective tokens seen (for the progress bar)."""

    def __init__(self, hf: Any) -> None:
        self.hf = hf

    @property
    def tokens(self) -> int:
        return int(self.hf.state.num_input_tokens_seen)


def save_template_file(loaded: Any, out: str | os.PathLike) -> None:
    """Keep the chat template beside the weights: the tokenizer's own, else the template's Jinja
    source when it has one; the template's name goes to ``openmind_template.txt``."""
    template = loaded.template
    if template is None:
        return
    out = Path(out)
    (out / "openmind_template.txt").write_text(getattr(template, "name", "") + "\n", encoding="utf-8")
    if not (out / "chat_template.jinja").is_file():
        source = getattr(template, "source", None)
        if source:
            (out / "chat_template.jinja").write_text(source, encoding="utf-8")


class CausalLMStageTrainer(TorchTrainer):
    """pt and sft: causal-LM loss on ``labels``."""

    def build_trainer(self) -> Any:
        from transformers import TrainingArguments

        from openmind.pt.training.hf import CausalLMTrainer

        hf = CausalLMTrainer(
            model=self.loaded.model,
            args=self.training_arguments(TrainingArguments),
            train_dataset=self.data.train,
            eval_dataset=self.data.eval,
            data_collator=self.data.collator,
            processing_class=self.loaded.tokenizer,
            callbacks=self.callbacks(),
        )
        hf.keep_checkpoints = self.args.training.save_total_limit
        return self.attach_progress(hf)


class PretrainTrainer(CausalLMStageTrainer):
    stage = "pt"


class SFTTrainer(CausalLMStageTrainer):
    stage = "sft"


class DPOTrainer(TorchTrainer):
    """DPO through trl (loss variants: sigmoid, hinge, ipo, robust; beta = pref_beta)."""

    stage = "dpo"

    def build_trainer(self) -> Any:
        from trl import DPOConfig

        from openmind.pt.training.hf import dpo_trainer_class

        ft = self.args.finetuning
        config = self.training_arguments(
            DPOConfig,
            beta=ft.pref_beta,
            loss_type=[ft.pref_loss],
            label_smoothing=0.1 if ft.pref_loss == "robust" else 0.0,
            max_length=self.args.data.cutoff_len,
        )
        hf = dpo_trainer_class()(
            model=self.loaded.model,
            ref_model=None,  # trl builds the frozen reference (or disables the adapter with LoRA)
            args=config,
            train_dataset=self.data.train,
            eval_dataset=self.data.eval,
            processing_class=self.loaded.tokenizer,
            callbacks=self.callbacks(),
        )
        hf.keep_checkpoints = self.args.training.save_total_limit
        return self.attach_progress(hf)


class RewardTrainer(TorchTrainer):
    """Reward model (sequence classification, one score) on chosen/rejected pairs through trl."""

    stage = "rm"

    def build_trainer(self) -> Any:
        from trl import RewardConfig

        from openmind.pt.training.hf import reward_trainer_class

        config = self.training_arguments(RewardConfig, max_length=self.args.data.cutoff_len)
        hf = reward_trainer_class()(
            model=self.loaded.model,
            args=config,
            train_dataset=self.data.train,
            eval_dataset=self.data.eval,
            processing_class=self.loaded.tokenizer,
            callbacks=self.callbacks(),
        )
        hf.keep_checkpoints = self.args.training.save_total_limit
        return self.attach_progress(hf)


class _TrlStage(TorchTrainer):
    def finish(self, hf: Any) -> Any:
        hf.keep_checkpoints = self.args.training.save_total_limit
        return self.attach_progress(hf)


class KTOTrainer(_TrlStage):
    """KTO through trl (desirable/undesirable answers; beta = pref_beta)."""

    stage = "kto"

    def _check_arguments(self) -> None:
        super()._check_arguments()
        # before the data and the model are loaded
        if self.args.training.per_device_train_batch_size < 2:
            raise T_BAD_SETUP.error(
                "kto estimates its KL term from mismatched pairs within a batch: it needs "
                "per_device_train_batch_size >= 2",
                location="per_device_train_batch_size",
            )

    def build_trainer(self) -> Any:
        from trl import KTOConfig

        from openmind.pt.training.hf import kto_trainer_class

        ft = self.args.finetuning
        config = self.training_arguments(
            KTOConfig,
            beta=ft.pref_beta,
            desirable_weight=ft.kto_desirable_weight,
            undesirable_weight=ft.kto_undesirable_weight,
            max_length=self.args.data.cutoff_len,
        )
        hf = kto_trainer_class()(
            model=self.loaded.model,
            ref_model=None,  # trl builds the frozen reference (or disables the adapter with LoRA)
            args=config,
            train_dataset=self.data.train,
            eval_dataset=self.data.eval,
            processing_class=self.loaded.tokenizer,
            callbacks=self.callbacks(),
        )
        return self.finish(hf)


class _PairTokensTrainer(_TrlStage):
    """A trl stage trained on paired token rows (ORPO, SimPO); subclasses give ``kind`` and
    :meth:`config`."""

    kind = ""

    @abc.abstractmethod
    def config(self) -> Any:
        """trl's config object of the stage."""

    def build_trainer(self) -> Any:
        from openmind.pt.training.hf import paired_token_trainer_class

        tokenizer = self.loaded.tokenizer
        if tokenizer.pad_token_id is None:  # trl's pair collator pads with it; the mask hides it
            tokenizer.pad_token = tokenizer.eos_token
        hf = paired_token_trainer_class(self.kind)(
            model=self.loaded.model,
            args=self.config(),
            train_dataset=self.data.train,
            eval_dataset=self.data.eval,
            processing_class=tokenizer,
            callbacks=self.callbacks(),
        )
        return self.finish(hf)


class ORPOTrainer(_PairTokensTrainer):
    """ORPO through trl (no reference model; lambda = pref_beta)."""

    stage = "orpo"
    kind = "orpo"

    def config(self) -> Any:
        from trl.experimental.orpo import ORPOConfig

        return self.training_arguments(
            ORPOConfig, beta=self.args.finetuning.pref_beta, max_length=self.args.data.cutoff_len
        )


class SimPOTrainer(_PairTokensTrainer):
    """SimPO through trl's CPO trainer with ``loss_type="simpo"`` and ``cpo_alpha=0`` (as LLaMA-Factory)."""

    stage = "simpo"
    kind = "cpo"

    def config(self) -> Any:
        from trl.experimental.cpo import CPOConfig

        ft = self.args.finetuning
        return self.training_arguments(
            CPOConfig,
            loss_type="simpo",
            cpo_alpha=0.0,
            beta=ft.pref_beta,
            simpo_gamma=ft.simpo_gamma,
            max_length=self.args.data.cutoff_len,
        )


class GRPOTrainer(_TrlStage):
    """GRPO through trl: completions generated by trl from openmind's prompt tokens, scored by the
    reward functions of ``--reward-funcs`` (:mod:`openmind.pt.training.rewards`)."""

    stage = "grpo"

    def build_trainer(self) -> Any:
        from trl import GRPOConfig

        from openmind.pt.training.hf import grpo_trainer_class
        from openmind.pt.training.rewards import resolve_rewards

        ft, t = self.args.finetuning, self.args.training
        rewards = resolve_rewards(ft.reward_funcs)
        tokenizer = self.loaded.tokenizer
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        config = self.training_arguments(
            GRPOConfig,
            beta=ft.pref_beta,
            num_generations=ft.num_generations,
            max_completion_length=ft.max_completion_length,
            temperature=ft.generation_temperature,
            generation_batch_size=t.per_device_train_batch_size * t.gradient_accumulation_steps,
        )
        cls = grpo_trainer_class()
        hf = cls(
            model=self.loaded.model,
            reward_funcs=rewards,
            args=config,
            train_dataset=self.data.train,
            eval_dataset=self.data.eval,
            processing_class=tokenizer,
            callbacks=self.callbacks(),
        )
        hf.prompt_ids_of = dict(zip(self.data.train["prompt"], self.data.train["prompt_ids"]))
        if self.data.eval is not None:
            hf.prompt_ids_of.update(zip(self.data.eval["prompt"], self.data.eval["prompt_ids"]))
        return self.finish(hf)
