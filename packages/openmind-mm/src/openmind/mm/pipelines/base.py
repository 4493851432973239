"""The base of openmind-mm's wrappers: a model folder recognised by kind, media inputs checked
and decoded here (framework neutral), the framework's pipeline doing the rest."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from openmind.core.api import select
from openmind.core.logs import logger
from openmind.core.pipelines.base import LoadOptions, Pipeline
from openmind.core.pipelines.errors import I_BAD_PARAM
from openmind.core.pipelines.wrapper import check_return_format
from openmind.core.plugins import attributed
from openmind.mm.folders import resolve_media_model
from openmind.mm.media import is_image_like, load_audio, load_image
from openmind.nlp.pipelines.wrapper import PipelineWrapper


@dataclass(frozen=True)
class NoParams:
    def check(self) -> None:
        return None


class MediaWrapper(PipelineWrapper):
    """A task whose inputs are images or audio (or carry them): ``input_kind`` says which.

    ``input_kind``: ``"image"`` (one image per input), ``"audio"``, ``"text"``, or
    ``"image+text"`` (a mapping ``{"image", <text_key>}``).
    """

    input_kind: ClassVar[str] = "image"
    text_key: ClassVar[str] = "text"
    #: folder kinds the task takes
    kinds: ClassVar[tuple[str, ...]] = ("processor", "transformers")
    params_cls: ClassVar[type | None] = NoParams
    record_keys = ("image", "input", "path", "audio")
    #: outputs are images/audio (``openmind run`` needs ``--output-dir``)
    writes_media: ClassVar[bool] = False

    def __init__(
        self,
        task: str | None = None,
        model: str | os.PathLike | None = None,
        framework: str | None = "auto",
        device: str | None = "auto",
        dtype: str | None = "auto",
        batch_size: int = 1,
        *,
        trust_remote_code: bool = False,
        allow_pickle: bool = False,
        revision: str | None = None,
        hub: str | None = None,
        return_format: str = "transformers",
        **options: Any,
    ) -> None:
        self.task = task or type(self).task
        self.return_format = check_return_format(return_format)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise I_BAD_PARAM.error(f"batch_size={batch_size!r}: must be an integer >= 1", location="batch_size")
        self.batch_size = batch_size
        folder = resolve_media_model(model, allow_pickle=allow_pickle, revision=revision, hub=hub, kinds=self.kinds)
        self.model_dir, self.config, self.folder_kind = folder.path, folder.config, folder.kind
        spec, reason = select("pipeline", self.task, framework or "auto")
        self._component = spec.component
        cls = spec.load()
        load_options = LoadOptions(
            task=self.task,
            device=device or "auto",
            dtype=dtype or "auto",
            trust_remote_code=trust_remote_code,
            allow_pickle=allow_pickle,
        )
        with attributed(self._component):
            self.backend: Pipeline = cls.load(self.model_dir, load_options)
        info = self.backend.describe()
        logger.info("%s pipeline: %s, %s on %s (%s)", self.task, reason, spec.impl, info["device"], info["dtype"])
        self.selection = {"reason": reason, "impl": spec.impl, **info}
        self.defaults = self.configure(**options)

    # ---- inputs ------------------------------------------------------------------------------
    def is_one(self, value: Any) -> bool:
        if self.input_kind == "image":
            return is_image_like(value)
        if self.input_kind == "audio":
            return isinstance(value, (str, dict)) or (hasattr(value, "ndim") and value.ndim == 1)
        if self.input_kind == "image+text":
            return isinstance(value, dict)
        return isinstance(value, str)

    def check_item(self, item: Any, index: int | None) -> Any:
        where = f"input[{index}]" if index is not None else "input"
        if self.input_kind == "image":
            return load_image(item, where)
        if self.input_kind == "audio":
            return load_audio(item, where, getattr(self, "_sampling_rate", None))
        if self.input_kind == "image+text":
            from openmind.core.errors import I_BAD_INPUT

            if not isinstance(item, dict) or "image" not in item or not isinstance(item.get(self.text_key), str):
                raise I_BAD_INPUT.error(
                    f"task {self.task!r} takes {{image, {self.text_key}}} mappings; {where} is {type(item).__name__}"
                    + (f" with keys {', '.join(item)}" if isinstance(item, dict) else ""),
                    location=where,
                )
            return {"image": load_image(item["image"], f"{where} field 'image'"), self.text_key: item[self.text_key]}
        return super().check_item(item, index)

    def split(self, inputs: Any) -> tuple[bool, list[Any]]:
        if self.is_one(inputs):
            return True, [self.check_item(inputs, None)]
        if isinstance(inputs, (list, tuple)):
            return False, [self.check_item(item, i) for i, item in enumerate(inputs)]
        return True, [self.check_item(inputs, None)]

    def from_record(self, record: Any, where: str) -> Any:
        if self.input_kind == "image+text":
            return record
        return super().from_record(record, where)

    # ---- outputs -----------------------------------------------------------------------------
    def save(self, output: Any, folder: Path, stem: str) -> Any:
        """Write the images/audio of one output under ``folder``; returns the output with file
        paths in place of them (what ``openmind run --output-dir`` prints)."""
        return save_media(output, folder, stem)

    def to_text(self, output: Any) -> str:
        import json

        return json.dumps(jsonable(output), ensure_ascii=False)


def jsonable(value: Any) -> Any:
    """An output as JSON values (images as ``<image WxH>``; use ``save`` to write them)."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "save") and hasattr(value, "size"):
        return f"<image {value.size[0]}x{value.size[1]}>"
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def save_media(value: Any, folder: Path, stem: str) -> Any:
    """Replace every PIL image in ``value`` by the path of a PNG written under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    counter = [0]

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            if "audio" in v and "sampling_rate" in v:
                from openmind.mm.media import write_wav

                path = folder / f"{stem}-{counter[0]}.wav"
                counter[0] += 1
                return {
                    **{k: walk(x) for k, x in v.items() if k != "audio"},
                    "audio": str(write_wav(path, v["audio"], v["sampling_rate"])),
                }
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        if hasattr(v, "save") and hasattr(v, "size"):
            path = folder / f"{stem}-{counter[0]}.png"
            counter[0] += 1
            v.save(path)
            return str(path)
        if hasattr(v, "tolist"):
            return v.tolist()
        return v

    return walk(value)
