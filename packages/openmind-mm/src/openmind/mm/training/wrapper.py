"""The ``mm-sft`` trainer wrapper: supervised fine-tuning of a vision-language model.

Framework neutral, like the text stages: it checks the arguments, then reads and checks every row
and media file **before any model is loaded** (a placeholder without its image, a missing or
corrupt file, a video listed as an image: located OM-D0xx errors), and gives the framework trainer
the data step (openmind-data's multimodal preparation: visual tokens expanded from the model's
image processor, labels over the assistant turns only, pixel inputs cached on disk).

Example::

    openmind train --stage mm-sft --model ./Qwen2-VL-2B-Instruct --dataset mllm_demo --dataset-dir data \\
        --finetuning-type lora --freeze-multi-modal-projector false --output-dir runs/vl
"""

from __future__ import annotations

from typing import Any

from openmind.core.lazy import import_string
from openmind.core.training.contract import PreparedData, TrainPlan
from openmind.core.training.errors import T_BAD_SETUP
from openmind.core.training.wrapper import GROUPS, TrainerWrapper

#: openmind-data's steps (installed with every backend that trains), named like a spec's impl
_LOAD = "openmind.data.loading:load"
_MEDIA_PARTS = "openmind.data.multimodal:load_media_parts"
_PREPARE = "openmind.data.training:prepare_for_training"


class DataView:
    """The data arguments plus the media keys of the ``multimodal`` group (``media_dir``,
    ``media_max_mb``), read by openmind-data as one object."""

    def __init__(self, data: Any, multimodal: Any) -> None:
        self._data = data
        self._multimodal = multimodal

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if hasattr(self._data, name):
            return getattr(self._data, name)
        return getattr(self._multimodal, name)


def multimodal_args(args: Any) -> Any:
    """The ``multimodal`` group of resolved arguments (its defaults when the group was not parsed)."""
    try:
        return args.multimodal
    except AttributeError:
        from openmind.mm.training.args import MultimodalArguments

        return MultimodalArguments()


def _step(name: str, what: str):
    return import_string(name, feature=what, requires=("openmind-data",))


class VLSFTWrapper(TrainerWrapper):
    """Supervised fine-tuning (``mm-sft``) of a vision-language model on conversations with images."""

    stage = "mm-sft"
    groups = (*GROUPS, "multimodal")

    def validate(self) -> None:
        super().validate()
        args = self.args
        if args.data.packing:
            raise T_BAD_SETUP.error(
                "packing is not supported for vision-language training (samples would attend to each other's "
                "visual tokens)",
                location="packing",
                hint="Pass --packing false.",
            )
        mm, ft = multimodal_args(args), args.finetuning
        if ft.finetuning_type in ("full", "freeze") and mm.freeze_vision_tower and mm.freeze_multi_modal_projector:
            if mm.freeze_language_model:
                raise T_BAD_SETUP.error(
                    "freeze_vision_tower, freeze_multi_modal_projector and freeze_language_model are all true: "
                    "nothing is left to train",
                    location="freeze_language_model",
                )
        # every row and media file, before any model is loaded (OM-D001 / OM-D014 located at file:line, field)
        _step(_LOAD, "multimodal training data")(self.data_args(), stage=self.stage)

    def data_args(self) -> DataView:
        return DataView(self.args.data, multimodal_args(self.args))

    def template_check(self, template: Any, tokenizer: Any) -> None:
        from openmind.nlp.training.base import check_template

        check_template(template, tokenizer)

    def data_step(self, plan: TrainPlan, tokenizer: Any, template: Any, *, quiet: bool = False) -> PreparedData:
        m, mm = plan.args.model, multimodal_args(plan.args)
        model_dir = getattr(plan, "model_dir", None) or getattr(tokenizer, "name_or_path", None) or m.model
        image_processor, config = _step(_MEDIA_PARTS, "multimodal training data")(
            model_dir,
            trust_remote_code=bool(m.trust_remote_code),
            max_pixels=mm.image_max_pixels,
            min_pixels=mm.image_min_pixels,
        )
        plan.image_processor = image_processor  # saved with the run (inference and export need it)
        return _step(_PREPARE, "multimodal training data")(
            plan,
            tokenizer,
            template,
            quiet=quiet,
            stage=self.stage,
            data_args=self.data_args(),
            image_processor=image_processor,
            model_config=config,
        )
