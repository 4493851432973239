"""safetensors checkpoints <-> numpy, without any framework.

Reads single-file and sharded (``model.safetensors.index.json``) checkpoints, bf16 included
(numpy has no bfloat16: bf16 tensors are widened to float32 exactly). Writes with
``safetensors.numpy`` and the ``{"format": "pt"}`` metadata that transformers expects, so what
MindSpore trains loads on PyTorch unchanged. Pickle files (``*.bin``, ``*.pt``) are refused.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import numpy as np

from openmind.ms.errors import MS_CHECKPOINT

_DTYPES = {
    "F64": np.float64,
    "F32": np.float32,
    "F16": np.float16,
    "I64": np.int64,
    "I32": np.int32,
    "I16": np.int16,
    "I8": np.int8,
    "U8": np.uint8,
    "BOOL": np.bool_,
}
WEIGHTS_NAME = "model.safetensors"
INDEX_NAME = "model.safetensors.index.json"
#: transformers refuses safetensors files whose metadata does not name a known format
SAFETENSORS_METADATA = {"format": "pt"}


def read_safetensors(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """All tensors of one ``.safetensors`` file as numpy arrays (bf16 -> float32)."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            (size,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(size))
        data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    except (OSError, ValueError, struct.error) as exc:
        raise MS_CHECKPOINT.error(f"{path} is not a readable safetensors file: {exc}", location=str(path)) from None
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        raw = data[start:end]
        dtype = info["dtype"]
        if dtype == "BF16":
            array = (np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif dtype in _DTYPES:
            array = np.frombuffer(raw, dtype=_DTYPES[dtype])
        else:
            raise MS_CHECKPOINT.error(f"tensor {name!r} has dtype {dtype}, which is not supported", location=str(path))
        out[name] = np.array(array.reshape(info["shape"]))  # copy: the memmap is closed with the file
    return out


def checkpoint_files(model_dir: str | os.PathLike) -> list[Path]:
    """The safetensors files of a model folder; pickle-only folders are refused (OM-MS008)."""
    folder = Path(model_dir)
    index = folder / INDEX_NAME
    if index.is_file():
        weight_map = json.loads(index.read_text(encoding="utf-8")).get("weight_map", {})
        return [folder / name for name in sorted(set(weight_map.values()))]
    single = folder / WEIGHTS_NAME
    if single.is_file():
        return [single]
    others = sorted(folder.glob("*.safetensors"))
    if others:
        return others
    pickles = sorted(p.name for p in folder.glob("*.bin")) + sorted(p.name for p in folder.glob("*.pt*"))
    if pickles:
        from openmind.nlp.errors import M_PICKLE

        raise M_PICKLE.error(
            f"{folder} holds only pickle weights ({', '.join(pickles[:3])}); the MindSpore backend reads safetensors",
            location=str(folder),
        )
    raise MS_CHECKPOINT.error(f"{folder} holds no *.safetensors weights", location=str(folder))


def load_state_dict(model_dir: str | os.PathLike) -> dict[str, np.ndarray]:
    state: dict[str, np.ndarray] = {}
    for file in checkpoint_files(model_dir):
        state.update(read_safetensors(file))
    return state


def save_state_dict(
    state: dict[str, np.ndarray], folder: str | os.PathLike, *, max_shard_bytes: int = 5 * 1024**3, name: str = ""
) -> list[Path]:
    """Write ``state`` as safetensors (sharded above ``max_shard_bytes``, with the HF index file)."""
    from safetensors.numpy import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    base = name or WEIGHTS_NAME
    shards: list[dict[str, np.ndarray]] = [{}]
    size = 0
    for key, value in state.items():
        value = np.ascontiguousarray(value)
        if shards[-1] and size + value.nbytes > max_shard_bytes:
            shards.append({})
            size = 0
        shards[-1][key] = value
        size += value.nbytes
    if len(shards) == 1:
        save_file(shards[0], str(folder / base), metadata=SAFETENSORS_METADATA)
        return [folder / base]
    stem = base.removesuffix(".safetensors")
    files, weight_map = [], {}
    for i, shard in enumerate(shards, 1):
        file = f"{stem}-{i:05d}-of-{len(shards):05d}.safetensors"
        save_file(shard, str(folder / file), metadata=SAFETENSORS_METADATA)
        files.append(folder / file)
        weight_map.update(dict.fromkeys(shard, file))
    total = sum(v.nbytes for v in state.values())
    (folder / f"{stem}.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2), encoding="utf-8"
    )
    return files
