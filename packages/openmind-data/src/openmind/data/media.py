"""The media files of multimodal rows: where they are and whether they can be used.

Checked while rows are read (``openmind data validate``, and ``openmind train`` before any model
loads), each problem located at the row and ``images[i]`` / ``videos[i]`` / ``audios[i]``:

* the file exists (a relative path is looked up in ``media_dir``, then beside the data file, then
  in ``dataset_dir`` — LLaMA-Factory's ``mllm_demo_data/1.jpg`` works as it is);
* it is what its list says: a video (or audio) file listed under ``images`` is refused, found by
  its leading bytes, not its name;
* an image decodes (PIL, fully: a truncated JPEG fails here, not in the 100th training step) and
  stays within :class:`MediaLimits` (file size, decoded pixels: a decompression bomb is refused
  before it is decoded).

Remote URLs are refused in training data (download the files and list their paths).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmind.data.formats import MEDIA, Problem

#: error code of an unusable media file (declared in :mod:`openmind.data.errors`)
MEDIA_CODE = "OM-D014"
_KIND_NAMES = {"images": "image", "videos": "video", "audios": "audio"}


@dataclass(frozen=True)
class MediaLimits:
    """Largest media file accepted (bytes) and largest decoded image (pixels)."""

    max_bytes: int = 64 << 20
    max_pixels: int = 1 << 26

    @classmethod
    def of(cls, data_args: Any) -> MediaLimits:
        mb = getattr(data_args, "media_max_mb", None)
        return cls(max_bytes=int(float(mb) * (1 << 20))) if mb else cls()


def bases(source_path: str | None, data_args: Any) -> tuple[str, ...]:
    """Folders a relative media path is looked up in, in order."""
    out = []
    for folder in (
        getattr(data_args, "media_dir", None),
        os.path.dirname(os.path.abspath(source_path)) if source_path and os.path.exists(source_path) else None,
        getattr(data_args, "dataset_dir", None),
    ):
        if folder and folder not in out:
            out.append(str(folder))
    return tuple(out)


def resolve(name: str, where: tuple[str, ...]) -> Path | None:
    path = Path(os.path.expanduser(name))
    if path.is_absolute():
        return path if path.is_file() else None
    for folder in where:
        candidate = Path(folder) / path
        if candidate.is_file():
            return candidate
    return None


def sniff(path: Path) -> str:
    """``video``, ``audio``, ``image`` or ``""`` (unknown) from the file's leading bytes."""
    with open(path, "rb") as f:
        head = f.read(16)
    if head[4:8] == b"ftyp":  # mp4, mov, m4v, 3gp (m4a is audio)
        return "audio" if head[8:11] == b"M4A" else "video"
    if head.startswith(b"\x1a\x45\xdf\xa3") or head.startswith(b"FLV"):  # mkv/webm, flv
        return "video"
    if head.startswith(b"RIFF"):
        return {b"AVI ": "video", b"WAVE": "audio", b"WEBP": "image"}.get(head[8:12], "")
    if head.startswith(b"\x00\x00\x01\xba") or head.startswith(b"\x00\x00\x01\xb3"):  # mpeg
        return "video"
    if head.startswith((b"ID3", b"fLaC", b"OggS")) or head[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return "audio"
    if head.startswith((b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"BM", b"II*\x00", b"MM\x00*")):
        return "image"
    return ""


#: (path, size, mtime) -> problem text or None: a file used by many rows is decoded once per process
_DECODED: dict[tuple[str, int, int], str | None] = {}


def decode_problem(path: Path, limits: MediaLimits) -> str | None:
    """Why the image at ``path`` cannot be used (None when it decodes within the limits)."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key in _DECODED:
        return _DECODED[key]
    import warnings

    from PIL import Image

    problem = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as im:
                w, h = im.size
                if w * h > limits.max_pixels:
                    problem = f"image of {w}x{h} pixels is larger than the limit of {limits.max_pixels} pixels"
                else:
                    im.load()
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        problem = f"cannot be decoded as an image ({type(exc).__name__}: {exc})"
    if len(_DECODED) > 100_000:
        _DECODED.clear()
    _DECODED[key] = problem
    return problem


def check_files(row: dict[str, Any], where: tuple[str, ...], limits: MediaLimits) -> tuple[list[Problem], dict]:
    """Problems of the media files of a standard multimodal row, and the resolved paths
    (``{"images": [abs paths], ...}``) when there is none."""
    problems: list[Problem] = []
    resolved: dict[str, list[str]] = {}
    for media in MEDIA:
        files = row.get(media) or []
        resolved[media] = []
        for i, name in enumerate(files):
            field = f"{media}[{i}]"
            if not isinstance(name, str):
                continue  # reported by the placeholder check
            if name.startswith(("http://", "https://", "ftp://", "s3://")):
                problems.append(
                    Problem(field, f"{name!r} is a remote URL: download the file and list its path", MEDIA_CODE)
                )
                continue
            path = resolve(name, where)
            if path is None:
                looked = ", ".join(where) or "the current folder"
                problems.append(Problem(field, f"file not found: {name!r} (looked in {looked})", MEDIA_CODE))
                continue
            size = path.stat().st_size
            if size > limits.max_bytes:
                problems.append(
                    Problem(field, f"{name!r} is {size} bytes, over the limit of {limits.max_bytes}", MEDIA_CODE)
                )
                continue
            kind, wanted = sniff(path), _KIND_NAMES[media]
            if kind and kind != wanted:
                tag = {"image": "<image>", "video": "<video>", "audio": "<audio>"}[kind]
                problems.append(
                    Problem(
                        field,
                        f"{name!r} is a {kind} file, not {'an' if wanted[0] in 'aeiou' else 'a'} {wanted} file as {media} needs: list it under {kind}s "
                        f"with a {tag} placeholder",
                        MEDIA_CODE,
                    )
                )
                continue
            if media == "images":
                why = decode_problem(path, limits)
                if why:
                    problems.append(Problem(field, f"{name!r}: {why}", MEDIA_CODE))
                    continue
            resolved[media].append(str(path))
    return problems, resolved
