"""LoRA on the native models, in PEFT's file format.

Training wraps target ``Linear`` layers in :class:`LoRALinear` (frozen base weight, trainable
``lora_A``/``lora_B``); saving writes ``adapter_model.safetensors`` + ``adapter_config.json`` with
PEFT's tensor names (``base_model.model.<module>.lora_A.weight``), so an adapter trained on
MindSpore loads with ``peft.PeftModel.from_pretrained`` on PyTorch and the other way round.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
from mindspore import Parameter, Tensor, nn

from openmind.ms.errors import MS_ADAPTER
from openmind.ms.models.layers import Linear, dropout, linear
from openmind.ms.models.weights import read_safetensors, save_state_dict

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
PEFT_PREFIX = "base_model.model."
#: heads never wrapped by "all"
_NOT_TARGETS = ("lm_head", "score", "classifier")


class LoRALinear(nn.Cell):
    """``x W^T + b + scaling * dropout(x) A^T B^T``; ``weight``/``bias`` keep the base names."""

    def __init__(self, base: Linear, r: int, alpha: float, p_dropout: float, rng: np.random.Generator, rslora=False):
        super().__init__()
        self.in_features, self.out_features = base.in_features, base.out_features
        self.weight = base.weight
        self.bias = base.bias
        self.weight.requires_grad = False
        if self.bias is not None:
            self.bias.requires_grad = False
        self.lora_A = Linear(self.in_features, r, False, rng)
        # PEFT's init: A ~ kaiming_uniform(a=sqrt(5)) == U(-1/sqrt(in), 1/sqrt(in)), B = 0
        self.lora_B = Linear(r, self.out_features, False, rng)
        self.lora_B.weight.set_data(Tensor(np.zeros((self.out_features, r), np.float32)))
        self.scaling = alpha / math.sqrt(r) if rslora else alpha / r
        self.p_dropout = p_dropout

    def construct(self, x):
        out = linear(x, self.weight, self.bias)
        return out + self.lora_B(self.lora_A(dropout(x, self.p_dropout, self.training))) * self.scaling


def linear_modules(model: nn.Cell) -> dict[str, Linear]:
    return {name: cell for name, cell in model.cells_and_names() if isinstance(cell, Linear) and name}


def resolve_targets(model: nn.Cell, targets: str | list[str] | tuple[str, ...]) -> list[str]:
    """Module paths to wrap: ``"all"`` (every linear layer but the heads) or names like ``q_proj``."""
    modules = linear_modules(model)
    if isinstance(targets, str):
        targets = [t.strip() for t in targets.split(",") if t.strip()]
    targets = list(targets)
    if targets in (["all"], ["all-linear"]):
        return [n for n in modules if n.split(".")[-1] not in _NOT_TARGETS]
    chosen = [n for n in modules if n.split(".")[-1] in targets]
    found = {n.split(".")[-1] for n in chosen}
    absent = [t for t in targets if t not in found]
    if absent or not chosen:
        available = sorted({n.split(".")[-1] for n in modules})
        from openmind.core.training.errors import T_LORA_TARGET

        raise T_LORA_TARGET.error(
            f"LoRA target(s) {', '.join(absent or targets)} not found; the model's linear layers are "
            f"{', '.join(available)}",
            location="lora_target",
        )
    return chosen


def _parent(model: nn.Cell, path: str) -> tuple[nn.Cell, str]:
    *parents, leaf = path.split(".")
    cell = model
    for part in parents:
        cell = cell[int(part)] if part.isdigit() else getattr(cell, part)
    return cell, leaf


def apply_lora(
    model: nn.Cell,
    targets: str | list[str],
    *,
    r: int = 8,
    alpha: float = 16,
    p_dropout: float = 0.0,
    seed: int = 0,
    rslora: bool = False,
) -> list[str]:
    """Wrap the target layers in place, freeze everything else; returns the wrapped module paths."""
    rng = np.random.default_rng(seed)
    paths = resolve_targets(model, targets)
    for param in model.get_parameters():
        param.requires_grad = False
    modules = linear_modules(model)
    for path in paths:
        parent, leaf = _parent(model, path)
        setattr(parent, leaf, LoRALinear(modules[path], r, alpha, p_dropout, rng, rslora))
    for name, param in model.parameters_and_names():
        param.name = name  # unique names (the optimizer requires them)
    return paths


def lora_layers(model: nn.Cell) -> dict[str, LoRALinear]:
    return {name: cell for name, cell in model.cells_and_names() if isinstance(cell, LoRALinear)}


def save_adapter(
    model: nn.Cell, folder: str | os.PathLike, *, r: int, alpha: float, p_dropout: float, base: str, rslora=False
) -> Path:
    """Write the LoRA weights in PEFT's layout."""
    layers = lora_layers(model)
    state: dict[str, np.ndarray] = {}
    for path, cell in layers.items():
        state[f"{PEFT_PREFIX}{path}.lora_A.weight"] = cell.lora_A.weight.asnumpy()
        state[f"{PEFT_PREFIX}{path}.lora_B.weight"] = cell.lora_B.weight.asnumpy()
    folder = Path(folder)
    save_state_dict(state, folder, name=ADAPTER_WEIGHTS)
    config = {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": str(base),
        "r": r,
        "lora_alpha": alpha,
        "lora_dropout": p_dropout,
        "target_modules": sorted({p.split(".")[-1] for p in layers}),
        "bias": "none",
        "fan_in_fan_out": False,
        "inference_mode": True,
        "init_lora_weights": True,
        "use_rslora": rslora,
        "use_dora": False,
        "modules_to_save": None,
        "layers_to_transform": None,
        "layers_pattern": None,
        "rank_pattern": {},
        "alpha_pattern": {},
        "revision": None,
    }
    (folder / ADAPTER_CONFIG).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return folder


def read_adapter(folder: str | os.PathLike) -> tuple[dict[str, Any], dict[str, tuple[np.ndarray, np.ndarray]]]:
    """A PEFT LoRA adapter: its config and ``{module path: (A, B)}``."""
    folder = Path(os.path.expanduser(str(folder)))
    if not (folder / ADAPTER_CONFIG).is_file():
        from openmind.nlp.errors import M_ADAPTER

        raise M_ADAPTER.error(f"{str(folder)!r} has no adapter_config.json", location=str(folder))
    config = json.loads((folder / ADAPTER_CONFIG).read_text(encoding="utf-8"))
    if config.get("peft_type", "LORA") != "LORA" or config.get("use_dora"):
        raise MS_ADAPTER.error(f"adapter {str(folder)!r} is not a plain LoRA adapter", location=str(folder))
    weights = folder / ADAPTER_WEIGHTS
    if not weights.is_file():
        from openmind.nlp.errors import M_ADAPTER, M_PICKLE

        if (folder / "adapter_model.bin").is_file():
            raise M_PICKLE.error(f"adapter {str(folder)!r} has only pickle weights (adapter_model.bin)")
        raise M_ADAPTER.error(f"{str(folder)!r} has no {ADAPTER_WEIGHTS}", location=str(folder))
    pairs: dict[str, dict[str, np.ndarray]] = {}
    for key, value in read_safetensors(weights).items():
        name = key[len(PEFT_PREFIX) :] if key.startswith(PEFT_PREFIX) else key
        for part in ("lora_A", "lora_B"):
            marker = f".{part}."
            if marker in name:
                path = name.split(marker)[0]
                pairs.setdefault(path, {})[part] = value
    return config, {path: (ab["lora_A"], ab["lora_B"]) for path, ab in pairs.items() if len(ab) == 2}


def adapter_deltas(model: nn.Cell, folder: str | os.PathLike) -> dict[str, np.ndarray]:
    """``{weight parameter name: scaling * B @ A}`` of a PEFT adapter on ``model`` (checked to fit)."""
    config, pairs = read_adapter(folder)
    r = int(config.get("r", 8))
    alpha = float(config.get("lora_alpha", r))
    scaling = alpha / math.sqrt(r) if config.get("use_rslora") else alpha / r
    modules = linear_modules(model)
    deltas = {}
    for path, (a, b) in pairs.items():
        module = modules.get(path)
        if module is None:
            raise MS_ADAPTER.error(f"adapter module {path!r} is not in the model", location=str(folder))
        if a.shape[1] != module.in_features or b.shape[0] != module.out_features:
            raise MS_ADAPTER.error(
                f"adapter module {path!r} has shapes {a.shape}/{b.shape}, the model's layer is "
                f"{module.out_features}x{module.in_features}",
                location=str(folder),
            )
        deltas[f"{path}.weight"] = (scaling * (b.astype(np.float32) @ a.astype(np.float32))).astype(np.float32)
    return deltas


def merge(model: nn.Cell) -> None:
    """Fold every :class:`LoRALinear` into its base weight and put plain ``Linear`` layers back."""
    for path, cell in lora_layers(model).items():
        delta = cell.lora_B.weight.asnumpy() @ cell.lora_A.weight.asnumpy() * cell.scaling
        base = Linear.__new__(Linear)
        nn.Cell.__init__(base)
        base.in_features, base.out_features = cell.in_features, cell.out_features
        base.weight = Parameter(Tensor(cell.weight.asnumpy() + delta), name="weight")
        base.bias = cell.bias
        parent, leaf = _parent(model, path)
        setattr(parent, leaf, base)
    for name, param in model.parameters_and_names():
        param.name = name
        param.requires_grad = True


def add_parameters(model: nn.Cell, deltas: dict[str, np.ndarray], sign: float = 1.0) -> None:
    params = dict(model.parameters_and_names())
    for name, delta in deltas.items():
        param = params[name]
        param.set_data(Tensor(param.asnumpy() + sign * delta, dtype=param.dtype))
