"""``POST /v1/images/generations``: OpenAI's images API over a deployed text-to-image model.

Served when ``openmind deploy`` runs a diffusers text-to-image folder: the deploy engine loads it
through the registered ``text2image`` pipeline (:class:`~openmind.nlp.serve.pipeline_engine.TaskEngine`),
so each image is what ``pipeline("text2image", model=...)`` returns for the same prompt and seed.

Request (OpenAI's fields): ``prompt``, ``model``, ``n`` (capped by ``--max-n``), ``size``
(``"WIDTHxHEIGHT"``, multiples of 8, each side at most ``--max-image-side``; ``"auto"`` or absent:
the model's own size), ``response_format`` (``"url"``, OpenAI's default: a ``file://`` URL of a PNG
written under the server's images folder ``--images-dir``; or ``"b64_json"``), ``output_format``
(``png`` | ``jpeg`` | ``webp``), ``user``. Extensions: ``seed`` (image ``j`` of a request uses
``seed + j``, as the pipeline does), ``negative_prompt``, ``num_inference_steps``,
``guidance_scale``, ``scheduler``. Bad values are 400s with an OpenMind code naming the field.

Example::

    from openai import OpenAI
    client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="x")
    out = client.images.generate(prompt="a cat", size="512x512", response_format="b64_json",
                                 extra_body={"seed": 42, "num_inference_steps": 30})
"""

from __future__ import annotations

import asyncio
import base64
import io
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Literal

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from openmind.core.errors import OpenMindError
from openmind.mm.errors import I_BAD_MEDIA_PARAM

TASK = "text2image"
#: the pipeline parameter each request field maps to (for error locations)
FIELD_OF = {"height": "size", "width": "size", "num_images_per_prompt": "n"}
FORMATS = {"png": "PNG", "jpeg": "JPEG", "webp": "WEBP"}


class ImageGenerationRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1)
    model: str | None = None
    n: StrictInt = 1
    size: str | None = None
    response_format: Literal["url", "b64_json"] = "url"
    output_format: Literal["png", "jpeg", "webp"] = "png"
    user: str | None = None
    # extensions (extra_body)
    seed: StrictInt | None = Field(None, ge=0, le=2**63 - 1)
    negative_prompt: str | None = None
    num_inference_steps: StrictInt | None = None
    guidance_scale: float | None = None
    scheduler: str | None = None


def _bad(ApiError: type, message: str, param: str) -> Exception:
    return ApiError(400, f"[{I_BAD_MEDIA_PARAM.code}] {message}", param=param, code="invalid_value")


def _option(ctx: Any, key: str, default: Any) -> Any:
    arguments = getattr(ctx.settings, "arguments", None)
    value = arguments.get(key) if arguments is not None else None
    return default if value is None else value


def images_dir(ctx: Any) -> Path:
    """The server's images folder (``--images-dir``; made once per server when not given)."""
    folder = getattr(ctx, "images_dir", None)
    if folder is None:
        given = _option(ctx, "images_dir", None)
        folder = Path(given) if given else Path(tempfile.mkdtemp(prefix="openmind-images-"))
        folder.mkdir(parents=True, exist_ok=True)
        ctx.images_dir = folder
        from openmind.nlp.serve.context import log

        log.info("/v1/images/generations writes response_format=url images under %s", folder)
    return folder


def parameters(body: ImageGenerationRequest, ctx: Any, ApiError: type) -> dict[str, Any]:
    """The pipeline's call parameters for ``body``; 400s naming the request field."""
    max_n = ctx.settings.limits.max_n
    if body.n < 1 or body.n > max_n:
        raise _bad(ApiError, f"n={body.n}: must be between 1 and this server's limit of {max_n}", "n")
    params: dict[str, Any] = {"num_images_per_prompt": body.n}
    if body.size not in (None, "auto"):
        side = int(_option(ctx, "max_image_side", 2048))
        try:
            width, height = (int(x) for x in body.size.lower().split("x"))
        except ValueError:
            raise _bad(ApiError, f"size={body.size!r}: write WIDTHxHEIGHT, e.g. 512x512", "size") from None
        if width < 8 or height < 8 or width % 8 or height % 8:
            raise _bad(ApiError, f"size={body.size!r}: width and height must be multiples of 8 (>= 8)", "size")
        if width > side or height > side:
            raise _bad(ApiError, f"size={body.size!r}: each side must be at most {side} (--max-image-side)", "size")
        params.update(width=width, height=height)
    for name in ("seed", "negative_prompt", "num_inference_steps", "guidance_scale", "scheduler"):
        value = getattr(body, name)
        if value is not None:
            params[name] = value
    from openmind.mm.pipelines.diffusion import DiffusionParams

    try:
        DiffusionParams(**{k: v for k, v in params.items() if k != "scheduler"}).check()
    except OpenMindError as exc:
        where = FIELD_OF.get(exc.location or "", exc.location)
        raise ApiError(400, f"[{exc.code}] {exc.message}", param=where, code="invalid_value") from None
    return params


def encode(images: list[Any], fmt: str) -> list[bytes]:
    out = []
    for image in images:
        buffer = io.BytesIO()
        image.save(buffer, format=FORMATS[fmt])
        out.append(buffer.getvalue())
    return out


def save(folder: Path, blobs: list[bytes], fmt: str) -> list[str]:
    stem = f"{int(time.time())}-{uuid.uuid4().hex[:12]}"
    urls = []
    for i, blob in enumerate(blobs):
        path = folder / f"{stem}-{i}.{fmt}"
        with open(path, "xb") as fh:
            fh.write(blob)
        urls.append(path.resolve().as_uri())
    return urls


async def handler(request: Request):
    from openmind.nlp.serve.context import ApiError
    from openmind.nlp.serve.engine import Job

    ctx = request.app.state.context
    body: ImageGenerationRequest = await ctx.read_body(request, ImageGenerationRequest)
    ctx.check_kind(TASK)
    ctx.resolve_model(body.model)
    params = parameters(body, ctx, ApiError)
    job = Job(kind=TASK, prompt=(body.prompt, params), n=body.n)
    await ctx.prepare_async(job)
    result = await ctx.run_job(request, job)
    images = result.value if isinstance(result.value, list) else [result.value]
    blobs = await asyncio.to_thread(encode, images, body.output_format)
    if body.response_format == "b64_json":
        data = [{"b64_json": base64.b64encode(blob).decode("ascii")} for blob in blobs]
    else:
        urls = await asyncio.to_thread(save, images_dir(ctx), blobs, body.output_format)
        data = [{"url": url} for url in urls]
    width, height = images[0].size
    return {"created": int(time.time()), "data": data, "output_format": body.output_format, "size": f"{width}x{height}"}


__all__ = ["ImageGenerationRequest", "handler", "images_dir"]
