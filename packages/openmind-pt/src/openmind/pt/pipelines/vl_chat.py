"""Vision-language chat on transformers (Qwen2-VL / Qwen2.5-VL / Qwen3-VL, LLaVA 1.5 / NeXT, ...).

Prompts are :class:`~openmind.mm.vl.inputs.VLPrompt` (text rendered by the processor's own chat
template + the images). A batch is one processor call over its rows
(:func:`~openmind.mm.vl.inputs.batch_inputs`, left padding, rows with any number of images), then
``model.generate`` on exactly those inputs: greedy output is what the model's own ``generate``
gives on the processor's inputs. Streaming, stop strings and cancellation are the text pipeline's
(:class:`~openmind.pt.pipelines.generation.RowWatcher`); the static-cache fast path is text-only
and never used here.

Without torchvision, transformers cannot build the processors that declare a video processor
(Qwen2-VL's family): :func:`load_processor` then builds the same processor class without its video
part (images work, videos raise a coded error), and logs it once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openmind.core.logs import logger
from openmind.core.pipelines.base import LoadOptions
from openmind.mm.vl.inputs import VLPrompt, batch_inputs
from openmind.nlp.errors import I_PROMPT_TOO_LONG
from openmind.nlp.pipelines.base import GenerationParams
from openmind.nlp.pipelines.causal import merge_eos
from openmind.pt.device import import_torch
from openmind.pt.pipelines.generation import Batch, RowWatcher, TorchCausalLM
from openmind.pt.pipelines.loading import M_NO_TOKENIZER, check_model_files, dtype_name, load_model

_IMAGES_ONLY: dict[type, type] = {}


def _images_only(cls: type) -> type:
    """``cls`` without its ``video_processor`` attribute (same ``__call__`` and token expansion)."""
    if cls not in _IMAGES_ONLY:

        @classmethod
        def get_attributes(klass):
            return [a for a in cls.get_attributes() if a != "video_processor"]

        _IMAGES_ONLY[cls] = type(cls.__name__, (cls,), {"get_attributes": get_attributes, "__module__": cls.__module__})
    return _IMAGES_ONLY[cls]


def load_processor(model_dir: str, *, trust_remote_code: bool = False) -> Any:
    """The folder's processor (``AutoProcessor``); images-only when its video part needs torchvision."""
    import importlib.util

    import transformers
    from transformers import AutoImageProcessor, AutoProcessor, AutoTokenizer

    check_model_files(model_dir)
    try:
        return AutoProcessor.from_pretrained(model_dir, trust_remote_code=trust_remote_code)
    except (OSError, ValueError, TypeError, AttributeError, ImportError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        config = {}
        for name in ("processor_config.json", "preprocessor_config.json"):
            try:
                config.update(json.loads((Path(model_dir) / name).read_text(encoding="utf-8")))
            except (OSError, ValueError):
                continue
        name = config.get("processor_class") or ""
        if not name:  # a folder written by an image processor alone: the model type's processor
            from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

            try:
                model_type = json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8"))["model_type"]
            except (OSError, ValueError, KeyError, TypeError):
                model_type = ""
            name = PROCESSOR_MAPPING_NAMES.get(model_type) or ""
        cls = getattr(transformers, name, None) if name else None
        video = cls is not None and "video_processor" in cls.get_attributes()
        if not (video and importlib.util.find_spec("torchvision") is None):
            raise M_NO_TOKENIZER.error(
                f"cannot load the processor of {model_dir!r}: {type(exc).__name__}: {first}",
                location=model_dir,
                hint="A vision-language folder holds its processor files (processor_config.json or "
                "preprocessor_config.json, the tokenizer files and chat_template.jinja).",
            ) from exc
    logger.info("%s: torchvision is not installed; its %s handles images, not videos", model_dir, name)
    template = None
    for file in ("chat_template.jinja", "chat_template.json"):
        path = Path(model_dir) / file
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            template = json.loads(text)["chat_template"] if file.endswith(".json") else text
            break
    return _images_only(cls)(
        image_processor=AutoImageProcessor.from_pretrained(model_dir),
        tokenizer=AutoTokenizer.from_pretrained(model_dir, trust_remote_code=trust_remote_code),
        chat_template=template,
    )


class TorchVLChat(TorchCausalLM):
    """The PyTorch pipeline of ``mm-chat`` (``AutoModelForImageTextToText`` + its processor)."""

    supports_controls = False

    def __init__(self, model: Any, processor: Any, *, task: str, model_dir: str, device: str, dtype: Any) -> None:
        self.model = model
        self.processor = processor
        self.tokenizer = processor.tokenizer
        self.task = task
        self.model_dir = model_dir
        self.device = device
        self.dtype = dtype_name(dtype)
        config = model.config
        text = getattr(config, "text_config", None) or config
        self.max_length = getattr(text, "max_position_embeddings", None)
        gen = model.generation_config
        self._decoder = None
        self.init_ids(
            merge_eos(gen.eos_token_id, self.tokenizer.eos_token_id),
            gen.pad_token_id if gen.pad_token_id is not None else self.tokenizer.pad_token_id,
        )
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token_id = self.pad_id

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> TorchVLChat:
        from transformers import AutoModelForImageTextToText

        processor = load_processor(model_dir, trust_remote_code=options.trust_remote_code)
        model, device, dtype = load_model(model_dir, AutoModelForImageTextToText, options)
        return cls(model, processor, task=options.task, model_dir=model_dir, device=device, dtype=dtype)

    def encode(self, prompt: Any) -> list[int]:
        if isinstance(prompt, VLPrompt):
            return list(batch_inputs(self.processor, [prompt])["input_ids"][0].tolist())
        return super().encode(prompt)

    def _as_vl_prompt(self, prompt: Any) -> VLPrompt:
        """A text prompt (already rendered) or token ids as an image-less :class:`VLPrompt`."""
        if isinstance(prompt, VLPrompt):
            return prompt
        return VLPrompt(prompt if isinstance(prompt, str) else self.tokenizer.decode(prompt))

    def preprocess(self, inputs: list[Any], params: GenerationParams, indices: list[int] | None = None) -> Batch:
        prompts = [self._as_vl_prompt(p) for p in inputs]
        features = batch_inputs(self.processor, prompts, padding_side="left")
        mask = features["attention_mask"]
        lens = [int(n) for n in mask.sum(dim=1).tolist()]
        for i, n in enumerate(lens):
            if self.max_length and n >= self.max_length:
                raise I_PROMPT_TOO_LONG.error(
                    f"prompt {i} has {n} tokens (image tokens included); the model takes at most {self.max_length}",
                    location=f"input[{i}]",
                )
        eos_ids, text_stops = self.stops_for(params)
        batch = Batch(
            features["input_ids"].to(self.device),
            mask.to(self.device),
            lens,
            list(indices if indices is not None else range(len(prompts))),
            params,
            text_stops=text_stops,
            eos_ids=eos_ids,
        )
        torch = import_torch()
        extra = {}
        for key, value in features.items():
            if key in ("input_ids", "attention_mask"):
                continue
            if isinstance(value, torch.Tensor):
                value = value.to(self.device)
                if value.is_floating_point():
                    value = value.to(self.model.dtype)
            extra[key] = value
        batch.extra = extra  # type: ignore[attr-defined]
        return batch

    def forward(self, features: Batch, params: GenerationParams) -> Any:
        torch = import_torch()
        kwargs = self.generation_kwargs(params, features.eos_ids)
        if params.wants_logprobs:
            kwargs.update(output_logits=True, return_dict_in_generate=True)
        if params.num_beams == 1 and (
            features.text_stops or features.on_text is not None or features.is_cancelled is not None
        ):
            from transformers import StoppingCriteriaList

            features.watcher = RowWatcher(self.tokenizer, features)
            kwargs["stopping_criteria"] = StoppingCriteriaList([features.watcher])
        if params.seed is not None:
            torch.manual_seed(params.seed)
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=features.input_ids,
                attention_mask=features.attention_mask,
                **getattr(features, "extra", {}),
                **kwargs,
            )
        if params.wants_logprobs:
            return out.sequences, out.logits
        return out, None
