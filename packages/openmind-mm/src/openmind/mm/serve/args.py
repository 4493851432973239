"""The ``images`` argument group of ``openmind deploy`` (registered by openmind-mm): where
``/v1/images/generations`` writes the files it answers with ``response_format="url"``, and the
largest image side it accepts."""

from __future__ import annotations

from dataclasses import dataclass

from openmind.core.args import arg


@dataclass
class ImagesArguments:
    images_dir: str | None = arg(
        None,
        "Folder where /v1/images/generations writes the images it answers with response_format=url "
        "(file:// URLs; default: a new temporary folder, named in the server log).",
    )
    max_image_side: int = arg(2048, "Cap on the width and height /v1/images/generations accepts (pixels).")
