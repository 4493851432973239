"""Media inputs, framework neutral: images and audio from paths, file URLs, base64 data URLs, PIL
images and numpy arrays, each checked with a coded error that names the input (OM-I301/OM-I302).

Pillow and numpy are imported when an input is read, never at import time.
"""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from openmind.mm.errors import I_BAD_AUDIO, I_BAD_IMAGE

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff")
AUDIO_SUFFIXES = (".wav",)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 80 else text[:77] + "..."


def _bytes_of(value: str, where: str, error: Any) -> tuple[bytes, str]:
    """``(content, name)`` of a path, ``file://`` URL or ``data:`` URL."""
    if value.startswith("data:"):
        header, _, payload = value.partition(",")
        if ";base64" not in header:
            raise error.error(f"{where}: a data URL must be base64 encoded ({header[:40]!r})", location=where)
        try:
            return base64.b64decode(payload, validate=False), "data URL"
        except ValueError as exc:
            raise error.error(f"{where}: invalid base64 in the data URL: {exc}", location=where) from None
    if value.startswith("file://"):
        value = unquote(urlparse(value).path)
    elif "://" in value:
        raise error.error(
            f"{where}: {_short(value)} is a remote URL; openmind reads local files only",
            location=where,
            hint="Download the file first (or pass it as a base64 data URL).",
        )
    path = Path(os.path.expanduser(value))
    if not path.is_file():
        raise error.error(f"{where}: file {str(path)!r} does not exist", location=where)
    try:
        return path.read_bytes(), str(path)
    except OSError as exc:
        raise error.error(f"{where}: cannot read {str(path)!r}: {exc}", location=where) from None


def is_image_like(value: Any) -> bool:
    """Whether ``value`` looks like one image (not a list of them)."""
    if isinstance(value, str):
        return True
    if hasattr(value, "getpixel") and hasattr(value, "mode"):
        return True
    return hasattr(value, "shape") and hasattr(value, "dtype")


def load_image(value: Any, where: str = "input", mode: str | None = "RGB") -> Any:
    """A PIL image from a path / file URL / data URL / PIL image / numpy array, converted to ``mode``."""
    from PIL import Image, UnidentifiedImageError

    if isinstance(value, Image.Image):
        image = value
    elif isinstance(value, str):
        content, name = _bytes_of(value, where, I_BAD_IMAGE)
        try:
            image = Image.open(io.BytesIO(content))
            image.load()
        except (UnidentifiedImageError, OSError, ValueError) as exc:
            raise I_BAD_IMAGE.error(f"{where}: {name} is not a readable image ({exc})", location=where) from None
    elif hasattr(value, "shape") and hasattr(value, "dtype"):
        image = _from_array(value, where)
    else:
        raise I_BAD_IMAGE.error(
            f"{where}: an image is a path, URL, PIL image or numpy array; got {type(value).__name__}", location=where
        )
    if mode and image.mode != mode:
        image = image.convert(mode)
    return image


def _from_array(array: Any, where: str) -> Any:
    import numpy as np
    from PIL import Image

    array = np.asarray(array)
    if array.ndim == 3 and array.shape[0] in (1, 3, 4) and array.shape[-1] not in (1, 3, 4):
        array = array.transpose(1, 2, 0)  # channels first -> last
    if array.ndim == 3 and array.shape[-1] == 1:
        array = array[..., 0]
    if array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[-1] not in (3, 4)):
        raise I_BAD_IMAGE.error(
            f"{where}: a numpy image is H x W, H x W x 3 or H x W x 4; got shape {tuple(array.shape)}", location=where
        )
    if array.dtype != np.uint8:
        if np.issubdtype(array.dtype, np.floating) and array.size and (array.min() < 0 or array.max() > 1):
            raise I_BAD_IMAGE.error(
                f"{where}: float images must be in [0, 1]; got values in [{array.min():.3g}, {array.max():.3g}]",
                location=where,
            )
        array = (
            (array * 255).round().clip(0, 255).astype(np.uint8)
            if np.issubdtype(array.dtype, np.floating)
            else array.astype(np.uint8)
        )
    return Image.fromarray(array)


def load_audio(value: Any, where: str = "input", sampling_rate: int | None = None) -> dict[str, Any]:
    """``{"array": float32 mono numpy array, "sampling_rate": int}`` from a WAV path / URL / data URL,
    a numpy array (with ``sampling_rate``) or such a mapping."""
    import numpy as np

    if isinstance(value, dict):
        if "array" not in value or "sampling_rate" not in value:
            raise I_BAD_AUDIO.error(f"{where}: an audio mapping needs 'array' and 'sampling_rate'", location=where)
        return {"array": _mono(np.asarray(value["array"]), where), "sampling_rate": int(value["sampling_rate"])}
    if isinstance(value, str):
        content, name = _bytes_of(value, where, I_BAD_AUDIO)
        return _read_wav(content, name, where)
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        if not sampling_rate:
            raise I_BAD_AUDIO.error(
                f"{where}: a numpy audio array needs its sampling rate",
                location=where,
                hint="Pass sampling_rate=16000 (or the array as {'array': ..., 'sampling_rate': ...}).",
            )
        return {"array": _mono(np.asarray(value), where), "sampling_rate": int(sampling_rate)}
    raise I_BAD_AUDIO.error(
        f"{where}: audio is a .wav path, URL or numpy array; got {type(value).__name__}", location=where
    )


def _mono(array: Any, where: str) -> Any:
    import numpy as np

    if array.ndim == 2:
        array = array.mean(axis=0 if array.shape[0] < array.shape[1] else 1)
    if array.ndim != 1 or array.size == 0:
        raise I_BAD_AUDIO.error(
            f"{where}: audio must be a non-empty 1-D (mono) array; got shape {array.shape}", location=where
        )
    return array.astype(np.float32)


def _read_wav(content: bytes, name: str, where: str) -> dict[str, Any]:
    import wave

    import numpy as np

    try:
        with wave.open(io.BytesIO(content)) as wav:
            channels, width, rate = wav.getnchannels(), wav.getsampwidth(), wav.getframerate()
            frames = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as exc:
        raise I_BAD_AUDIO.error(f"{where}: {name} is not a PCM WAV file ({exc})", location=where) from None
    dtype = {1: np.uint8, 2: np.int16, 4: np.int32}.get(width)
    if dtype is None:
        raise I_BAD_AUDIO.error(f"{where}: {name} has {8 * width}-bit samples; use 8, 16 or 32-bit PCM", location=where)
    data = np.frombuffer(frames, dtype=dtype).astype(np.float32)
    data = (data - 128) / 128 if width == 1 else data / float(2 ** (8 * width - 1))
    if channels > 1:
        data = data.reshape(-1, channels).mean(axis=1)
    return {"array": _mono(data, where), "sampling_rate": rate}


def write_wav(path: str | os.PathLike, array: Any, sampling_rate: int) -> Path:
    """Write a mono float array in [-1, 1] as 16-bit PCM WAV."""
    import wave

    import numpy as np

    data = (np.clip(np.asarray(array, dtype=np.float32).reshape(-1), -1, 1) * 32767).astype("<i2")
    path = Path(path)
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(int(sampling_rate))
        wav.writeframes(data.tobytes())
    return path


def image_to_data_url(image: Any, fmt: str = "PNG") -> str:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    return f"data:image/{fmt.lower()};base64," + base64.b64encode(buffer.getvalue()).decode()
