"""``config.json`` -> typed configs of the native models (transformers 4 and 5 layouts)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmind.ms.errors import MS_CONFIG, MS_UNSUPPORTED_MODEL

#: model_type -> attention layout of the Llama family
LLAMA_FAMILY = {
    "llama": {"qkv_bias": False, "qk_norm": False},
    "mistral": {"qkv_bias": False, "qk_norm": False},
    "qwen2": {"qkv_bias": True, "qk_norm": False},
    "qwen3": {"qkv_bias": False, "qk_norm": True},
    "yi": {"qkv_bias": False, "qk_norm": False},
}
BERT_FAMILY = ("bert",)
ROPE_TYPES = ("default", "linear", "llama3")


def read_config(model_dir: str | os.PathLike) -> dict[str, Any]:
    path = Path(model_dir) / "config.json"
    if not path.is_file():
        from openmind.core.api import M_NOT_A_MODEL

        raise M_NOT_A_MODEL.error(f"{model_dir} has no config.json", location=str(path))
    return json.loads(path.read_text(encoding="utf-8"))


def _eos_ids(value: Any) -> tuple[int, ...]:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, list) else (int(value),)


@dataclass
class LlamaConfig:
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    rope_scaling: dict[str, Any] = field(default_factory=dict)
    max_position_embeddings: int = 2048
    tie_word_embeddings: bool = False
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False
    hidden_act: str = "silu"
    model_type: str = "llama"
    num_labels: int = 0
    bos_token_id: int | None = None
    eos_token_ids: tuple[int, ...] = ()
    pad_token_id: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, cfg: dict[str, Any], location: str = "config.json") -> LlamaConfig:
        model_type = cfg.get("model_type", "llama")
        if model_type not in LLAMA_FAMILY:
            raise MS_UNSUPPORTED_MODEL.error(
                f"model_type {model_type!r} is not in the native Llama family ({', '.join(LLAMA_FAMILY)})",
                location=location,
            )
        layout = LLAMA_FAMILY[model_type]
        rope = dict(cfg.get("rope_parameters") or cfg.get("rope_scaling") or {})
        theta = rope.get("rope_theta", cfg.get("rope_theta", 10000.0))
        rope_type = rope.get("rope_type", rope.get("type", "default"))
        if rope_type not in ROPE_TYPES:
            raise MS_CONFIG.error(
                f"rope type {rope_type!r} is not implemented (supported: {', '.join(ROPE_TYPES)})",
                location=f"{location} field 'rope_parameters'",
            )
        rope["rope_type"] = rope_type
        heads = cfg["num_attention_heads"]
        hidden = cfg["hidden_size"]
        window = cfg.get("sliding_window") if cfg.get("use_sliding_window", model_type == "mistral") else None
        if window and window < cfg.get("max_position_embeddings", 0):
            # Sequences shorter than the window are computed exactly; longer ones are refused at run time.
            rope["sliding_window"] = int(window)
        attention_bias = bool(cfg.get("attention_bias", False))
        return cls(
            vocab_size=cfg["vocab_size"],
            hidden_size=hidden,
            intermediate_size=cfg["intermediate_size"],
            num_hidden_layers=cfg["num_hidden_layers"],
            num_attention_heads=heads,
            num_key_value_heads=cfg.get("num_key_value_heads") or heads,
            head_dim=cfg.get("head_dim") or hidden // heads,
            rms_norm_eps=cfg.get("rms_norm_eps", 1e-6),
            rope_theta=float(theta),
            rope_scaling=rope,
            max_position_embeddings=cfg.get("max_position_embeddings", 2048),
            tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
            qkv_bias=layout["qkv_bias"] or attention_bias,
            o_bias=attention_bias,
            mlp_bias=bool(cfg.get("mlp_bias", False)),
            qk_norm=layout["qk_norm"],
            hidden_act=cfg.get("hidden_act", "silu"),
            model_type=model_type,
            num_labels=len(cfg.get("id2label") or {}) or cfg.get("num_labels", 0),
            bos_token_id=cfg.get("bos_token_id"),
            eos_token_ids=_eos_ids(cfg.get("eos_token_id")),
            pad_token_id=cfg.get("pad_token_id"),
            raw=cfg,
        )


@dataclass
class BertConfig:
    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    num_labels: int = 0
    pad_token_id: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, cfg: dict[str, Any], location: str = "config.json") -> BertConfig:
        if cfg.get("model_type") not in BERT_FAMILY:
            raise MS_UNSUPPORTED_MODEL.error(
                f"model_type {cfg.get('model_type')!r} is not a BERT encoder", location=location
            )
        if cfg.get("position_embedding_type", "absolute") != "absolute":
            raise MS_CONFIG.error(
                f"position_embedding_type {cfg['position_embedding_type']!r} is not implemented",
                location=f"{location} field 'position_embedding_type'",
            )
        return cls(
            vocab_size=cfg["vocab_size"],
            hidden_size=cfg["hidden_size"],
            num_hidden_layers=cfg["num_hidden_layers"],
            num_attention_heads=cfg["num_attention_heads"],
            intermediate_size=cfg["intermediate_size"],
            max_position_embeddings=cfg.get("max_position_embeddings", 512),
            type_vocab_size=cfg.get("type_vocab_size", 2),
            layer_norm_eps=cfg.get("layer_norm_eps", 1e-12),
            hidden_act=cfg.get("hidden_act", "gelu"),
            hidden_dropout_prob=cfg.get("hidden_dropout_prob", 0.1),
            num_labels=len(cfg.get("id2label") or {}) or cfg.get("num_labels", 0),
            pad_token_id=cfg.get("pad_token_id") or 0,
            raw=cfg,
        )
