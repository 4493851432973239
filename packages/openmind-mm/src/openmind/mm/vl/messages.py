"""Conversations with images, framework neutral: OpenAI content parts, ``{"type": "image"}`` parts and
LLaMA-Factory ``<image>`` placeholders turned into one canonical form, every image loaded and checked
against limits, each failure a coded error that names the field (``messages[2].content[1].image_url``).

The canonical form is what the families' official chat templates read (Hugging Face's multimodal
message shape): every ``content`` is a list of ``{"type": "text", "text": ...}`` and ``{"type":
"image"}`` parts, the images themselves in a separate list in the order of their parts.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from openmind.core.errors import I_BAD_INPUT
from openmind.mm.errors import I_BAD_CONTENT_PART, I_MEDIA_LIMIT, I_MEDIA_MISMATCH, I_REMOTE_MEDIA
from openmind.mm.media import load_image

ROLES = ("system", "user", "assistant")
#: LLaMA-Factory's (and ShareGPT-4V's) image placeholder in text content
IMAGE_PLACEHOLDER = "<image>"


@dataclass(frozen=True)
class MediaLimits:
    """What one request may carry (``None``: no limit).

    ``file_roots``: ``None`` reads any local path (the SDK: the caller owns the machine); a tuple
    confines ``file://`` URLs and paths to those folders (the server; empty: no local files at all).
    ``fetch``: downloads an http(s) URL to bytes; remote URLs are refused (OM-I307) without it.
    """

    max_images: int | None = None
    max_image_bytes: int | None = None
    max_image_pixels: int | None = None
    file_roots: tuple[str, ...] | None = None
    fetch: Callable[[str, int | None], bytes] | None = None


NO_LIMITS = MediaLimits()


@dataclass
class Conversation:
    """Canonical messages and their images (PIL, RGB), in placeholder order."""

    messages: list[dict[str, Any]]
    images: list[Any] = field(default_factory=list)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 80 else text[:77] + "..."


def _within(path: Path, roots: tuple[str, ...]) -> bool:
    real = os.path.realpath(path)
    for root in roots:
        base = os.path.realpath(root)
        if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
            return True
    return False


def _check_bytes(size: int, where: str, limits: MediaLimits) -> None:
    if limits.max_image_bytes is not None and size > limits.max_image_bytes:
        raise I_MEDIA_LIMIT.error(
            f"{where}: the image is {size} bytes; the limit is {limits.max_image_bytes}", location=where
        )


def read_image(value: Any, where: str, limits: MediaLimits = NO_LIMITS) -> Any:
    """One image (PIL, RGB) from a path, ``file://`` URL, ``data:`` URL, http(s) URL (with
    ``limits.fetch``), PIL image or numpy array, checked against ``limits``."""
    if isinstance(value, str):
        scheme = value.split(":", 1)[0].lower() if ":" in value else ""
        if scheme in ("http", "https"):
            if limits.fetch is None:
                raise I_REMOTE_MEDIA.error(f"{where}: remote URL {_short(value)} refused", location=where)
            try:
                content = limits.fetch(value, limits.max_image_bytes)
            except (OSError, ValueError) as exc:
                from openmind.mm.errors import I_BAD_IMAGE

                raise I_BAD_IMAGE.error(f"{where}: cannot download {_short(value)}: {exc}", location=where) from None
            _check_bytes(len(content), where, limits)
            value = "data:image/unknown;base64," + base64.b64encode(content).decode()
        elif scheme == "data":
            payload = value.partition(",")[2]
            _check_bytes(len(payload) * 3 // 4, where, limits)
        elif "://" in value and scheme != "file":
            raise I_REMOTE_MEDIA.error(
                f"{where}: URL scheme {scheme!r} is not supported ({_short(value)})", location=where
            )
        else:
            path = Path(os.path.expanduser(unquote(urlparse(value).path) if scheme == "file" else value))
            if limits.file_roots is not None and not _within(path, limits.file_roots):
                raise I_REMOTE_MEDIA.error(
                    f"{where}: local file {str(path)!r} is outside the allowed media folders"
                    + (f" ({', '.join(limits.file_roots)})" if limits.file_roots else " (none allowed)"),
                    location=where,
                )
            if path.is_file():
                _check_bytes(path.stat().st_size, where, limits)
    image = load_image(value, where)
    if limits.max_image_pixels is not None and image.width * image.height > limits.max_image_pixels:
        raise I_MEDIA_LIMIT.error(
            f"{where}: the image is {image.width}x{image.height} = {image.width * image.height} pixels; "
            f"the limit is {limits.max_image_pixels}",
            location=where,
        )
    return image


def _image_of(part: dict[str, Any], where: str) -> tuple[Any, str] | None:
    """``(payload, field location)`` of an image part; ``None`` for a bare ``{"type": "image"}``."""
    kind = part.get("type")
    if kind == "image_url":
        inner = part.get("image_url")
        url = inner.get("url") if isinstance(inner, dict) else inner
        if not isinstance(url, str) or not url:
            raise I_BAD_CONTENT_PART.error(
                f'{where}.image_url: expected {{"url": "data:..." | "file://..." | path}}, got {_short(inner)}',
                location=f"{where}.image_url",
            )
        return url, f"{where}.image_url"
    for key in ("image", "url", "path"):
        if part.get(key) is not None:
            return part[key], f"{where}.{key}"
    return None


class _Collector:
    def __init__(self, images: list[Any] | None, limits: MediaLimits, where_images: str) -> None:
        self.given = images
        self.used = 0
        self.limits = limits
        self.where_images = where_images
        self.images: list[Any] = []

    def add(self, value: Any, where: str) -> None:
        limit = self.limits.max_images
        if limit is not None and len(self.images) >= limit:
            raise I_MEDIA_LIMIT.error(f"{where}: more than {limit} images in one request", location=where)
        self.images.append(read_image(value, where, self.limits))

    def take(self, where: str) -> None:
        """The next image of the separate ``images`` list (a placeholder or bare image part)."""
        if self.given is None or self.used >= len(self.given):
            have = 0 if self.given is None else len(self.given)
            raise I_MEDIA_MISMATCH.error(
                f"{where}: image placeholder number {self.used + 1}, but {self.where_images} has {have} image(s)",
                location=where,
            )
        self.add(self.given[self.used], f"{self.where_images}[{self.used}]")
        self.used += 1


def normalise_conversation(
    messages: Any,
    images: list[Any] | None = None,
    *,
    limits: MediaLimits = NO_LIMITS,
    where: str = "messages",
    where_images: str = "images",
) -> Conversation:
    """The canonical :class:`Conversation` of ``messages`` (+ LLaMA-Factory-style ``images``).

    Accepted content: a string (with ``<image>`` placeholders when ``images`` is given), or a list
    of parts: ``{"type": "text", "text"}``, ``{"type": "image_url", "image_url": {"url"}}``,
    ``{"type": "image", "image" | "url" | "path": ...}`` and bare ``{"type": "image"}`` (takes the
    next entry of ``images``). Errors: OM-I304 (a bad part), OM-I305 (placeholders vs images),
    OM-I306 (limits), OM-I307 (refused URL), OM-I301 (unreadable image), OM-I001 (bad message).
    """
    if not isinstance(messages, (list, tuple)) or not all(isinstance(m, dict) for m in messages):
        raise I_BAD_INPUT.error(
            f"{where}: a conversation is a list of {{role, content}} messages, got {type(messages).__name__}",
            location=where,
        )
    if images is not None and not isinstance(images, (list, tuple)):
        images = [images]
    collector = _Collector(list(images) if images is not None else None, limits, where_images)
    out: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        at = f"{where}[{i}]"
        role = message.get("role")
        if role not in ROLES:
            raise I_BAD_INPUT.error(f"{at}.role is {role!r}; use one of {', '.join(ROLES)}", location=f"{at}.role")
        content = message.get("content")
        parts: list[dict[str, Any]] = []
        if content is None:
            content = ""
        if isinstance(content, str):
            pieces = content.split(IMAGE_PLACEHOLDER) if images is not None else [content]
            for k, text in enumerate(pieces):
                if k:
                    collector.take(f"{at}.content")
                    parts.append({"type": "image"})
                if text:
                    parts.append({"type": "text", "text": text})
        elif isinstance(content, (list, tuple)):
            for j, part in enumerate(content):
                pw = f"{at}.content[{j}]"
                if isinstance(part, str):
                    part = {"type": "text", "text": part}
                if not isinstance(part, dict) or part.get("type") not in ("text", "image", "image_url"):
                    kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                    raise I_BAD_CONTENT_PART.error(
                        f"{pw}: unsupported content part {kind!r}; use text, image_url or image",
                        location=f"{pw}.type" if isinstance(part, dict) else pw,
                    )
                if part["type"] == "text":
                    text = part.get("text")
                    if not isinstance(text, str):
                        raise I_BAD_CONTENT_PART.error(
                            f"{pw}.text must be a string, got {type(text).__name__}", location=f"{pw}.text"
                        )
                    parts.append({"type": "text", "text": text})
                    continue
                found = _image_of(part, pw)
                if found is None:
                    collector.take(pw)
                else:
                    collector.add(*found)
                parts.append({"type": "image"})
        else:
            raise I_BAD_INPUT.error(
                f"{at}.content must be a string or a list of content parts, not {type(content).__name__}",
                location=f"{at}.content",
            )
        out.append({"role": role, "content": parts})
    if collector.given is not None and collector.used != len(collector.given):
        raise I_MEDIA_MISMATCH.error(
            f"{where_images} has {len(collector.given)} image(s) but the messages have {collector.used} "
            f"<image> placeholder(s)",
            location=f"{where_images}[{collector.used}]",
        )
    return Conversation(out, collector.images)


def has_images(messages: Any) -> bool:
    """Whether OpenAI-style ``messages`` carry an image part (cheap; loads nothing)."""
    if not isinstance(messages, (list, tuple)):
        return False
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, (list, tuple)):
            if any(isinstance(p, dict) and p.get("type") in ("image", "image_url") for p in content):
                return True
    return False
