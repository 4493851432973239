"""Hugging Face safetensors folder <-> mindformers ``.ckpt`` (MindSpore's checkpoint format).

Uses MindSpore's own ``save_checkpoint`` / ``load_checkpoint`` (no mindformers needed), so the
translation runs and is tested on CPU; the result is what mindformers' ``load_checkpoint`` reads.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from openmind.ms.mindformers.translate import translate_state
from openmind.ms.models.weights import load_state_dict, save_state_dict


def hf_to_ckpt(model_dir: str | os.PathLike, ckpt_file: str | os.PathLike, *, dtype: str = "float32") -> Path:
    import mindspore as ms

    state = translate_state(load_state_dict(model_dir), to="mindformers")
    target = {"float16": np.float16, "float32": np.float32}.get(dtype, np.float32)
    items = [
        {"name": name, "data": ms.Tensor(value.astype(target) if value.dtype.kind == "f" else value)}
        for name, value in state.items()
    ]
    ckpt_file = Path(ckpt_file)
    ckpt_file.parent.mkdir(parents=True, exist_ok=True)
    ms.save_checkpoint(items, str(ckpt_file))
    return ckpt_file


def ckpt_to_hf(ckpt_file: str | os.PathLike, folder: str | os.PathLike) -> list[Path]:
    """A mindformers checkpoint back to Hugging Face names (optimizer state and step counters dropped)."""
    import mindspore as ms

    loaded = ms.load_checkpoint(str(ckpt_file))
    skip = ("adam_", "global_step", "learning_rate", "moment", "accu_grads", "scale_sense", "current_iterator_step")
    state = {
        name: param.asnumpy()
        for name, param in loaded.items()
        if not any(part in name for part in skip) and not name.startswith("epoch_num")
    }
    return save_state_dict(translate_state(state, to="hf"), folder)
