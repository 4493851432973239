"""The NLP training stages (``pt``, ``sft``, ``dpo``, ``rm``) on the core training contracts.

The framework- and domain-neutral contracts live in :mod:`openmind.core.training` (trainer wrapper
base, the typed :class:`~openmind.core.training.FrameworkTrainer`, the :class:`TrainPlan`, the run
folder names and :class:`TrainResult`); they are re-exported here so old imports keep working.

This module adds what is NLP-specific and framework neutral, done ONCE for every backend through
the plan: the template/tokenizer check (OM-T002, :func:`check_template`) and data preparation with
the data engine plus the cutoff errors (OM-T003, :func:`prepare_data`, implemented by openmind-data). The PyTorch and MindSpore
trainers call ``plan.check_template(...)`` / ``plan.prepare_data(...)`` and then only train.
"""

from __future__ import annotations

import re
from typing import Any

from openmind.core.training.contract import FrameworkTrainer, PreparedData, TrainPlan, default_lora_alpha
from openmind.core.training.errors import T_TEMPLATE_MISMATCH
from openmind.core.training.layout import (
    CHECKPOINT_MARKER,
    IGNORE_INDEX,
    PLOT_FILE,
    SUMMARY_FILE,
    TrainResult,
    default_output_dir,
    is_main_process,
    is_worker_process,
)
from openmind.core.training.wrapper import GROUPS, TrainerWrapper

__all__ = [
    "CHECKPOINT_MARKER",
    "GROUPS",
    "IGNORE_INDEX",
    "PLOT_FILE",
    "SUMMARY_FILE",
    "WRAPPERS",
    "DPOWrapper",
    "FrameworkTrainer",
    "GRPOWrapper",
    "KTOWrapper",
    "ORPOWrapper",
    "SimPOWrapper",
    "NLPTrainerWrapper",
    "PretrainWrapper",
    "RMWrapper",
    "SFTWrapper",
    "TrainPlan",
    "TrainResult",
    "TrainerWrapper",
    "check_template",
    "default_lora_alpha",
    "default_output_dir",
    "is_main_process",
    "is_worker_process",
    "prepare_data",
]


def check_template(template: Any, tokenizer: Any) -> None:
    """OM-T002 when the template's stop words / special markers are not single tokens of the tokenizer.

    A template written for another family (ChatML's ``<|im_end|>`` on a Llama tokenizer, say)
    would otherwise train the model on markers split into many ordinary tokens, which it never
    emits as one stop token at inference.
    """
    vocab = tokenizer.get_vocab()
    eos = getattr(tokenizer, "eos_token", None)
    bad = []
    for word in getattr(template, "stop_words", ()) or ():
        if not word or word == eos:
            continue
        looks_special = bool(re.fullmatch(r"<[^<>\s]+>|<\|[^|]+\|>|\[[A-Z_/]+\]", word))
        if looks_special and word not in vocab:
            bad.append(word)
    if bad:
        raise T_TEMPLATE_MISMATCH.error(
            f"template {getattr(template, 'name', '?')!r} uses {', '.join(repr(b) for b in bad)}, which tokenizer "
            f"{getattr(tokenizer, 'name_or_path', '')!r} does not have as a token",
            location="template",
        )


#: the data step of the text stages: openmind-data's preparation (installed with every backend
#: that trains: openmind-pt and openmind-ms depend on it), named as a string like a spec's impl
DATA_STEP = "openmind.data.training:prepare_for_training"


def prepare_data(plan: TrainPlan, tokenizer: Any, template: Any, *, quiet: bool = False) -> PreparedData:
    """The data step of a text stage: :func:`openmind.data.training.prepare_for_training`
    (tokenised, label-masked, optionally packed sets; OM-T003 for cutoff problems)."""
    from openmind.core.lazy import import_string

    step = import_string(DATA_STEP, feature=f"training data of stage {plan.stage!r}", requires=("openmind-data",))
    return step(plan, tokenizer, template, quiet=quiet)


class NLPTrainerWrapper(TrainerWrapper):
    """A text training stage: the plan checks templates and prepares data with openmind-data."""

    def template_check(self, template: Any, tokenizer: Any) -> None:
        check_template(template, tokenizer)

    def data_step(self, plan: TrainPlan, tokenizer: Any, template: Any, *, quiet: bool = False) -> PreparedData:
        return prepare_data(plan, tokenizer, template, quiet=quiet)


class PretrainWrapper(NLPTrainerWrapper):
    """Continued pre-training (``pt``) on plain text."""

    stage = "pt"


class SFTWrapper(NLPTrainerWrapper):
    """Supervised fine-tuning (``sft``) on conversations."""

    stage = "sft"


class DPOWrapper(NLPTrainerWrapper):
    """Direct preference optimisation (``dpo``) on chosen/rejected pairs."""

    stage = "dpo"


class RMWrapper(NLPTrainerWrapper):
    """Reward-model training (``rm``) on chosen/rejected pairs."""

    stage = "rm"


class KTOWrapper(NLPTrainerWrapper):
    """KTO (``kto``) on single answers marked desirable or not (``label`` / LLaMA-Factory's ``kto_tag``)."""

    stage = "kto"


class ORPOWrapper(NLPTrainerWrapper):
    """ORPO (``orpo``) on chosen/rejected pairs: SFT loss + odds-ratio term, no reference model."""

    stage = "orpo"


class SimPOWrapper(NLPTrainerWrapper):
    """SimPO (``simpo``) on chosen/rejected pairs: length-normalised, reference-free margin loss."""

    stage = "simpo"


class GRPOWrapper(NLPTrainerWrapper):
    """GRPO (``grpo``) on prompts (+ reference answers) scored by reward functions."""

    stage = "grpo"


WRAPPERS: dict[str, type[TrainerWrapper]] = {
    w.stage: w
    for w in (
        PretrainWrapper,
        SFTWrapper,
        DPOWrapper,
        RMWrapper,
        KTOWrapper,
        ORPOWrapper,
        SimPOWrapper,
        GRPOWrapper,
    )
}
