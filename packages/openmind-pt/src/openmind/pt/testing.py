"""Tiny models for tests and benchmarks: real tokenizers, randomly initialised weights."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def tiny_llama(
    folder: str | os.PathLike,
    *,
    tokenizer: str = "llama2",
    hidden_size: int = 64,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int | None = None,
    intermediate_size: int | None = None,
    max_position_embeddings: int = 2048,
    seed: int = 0,
    dtype: str = "float32",
    **config: Any,
) -> Path:
    """Write a randomly initialised ``LlamaForCausalLM`` with a real 32k tokenizer to ``folder``.

    ``tokenizer``: ``"llama2"`` (wordllama, with the official Llama-2 chat template) or
    ``"mistral"`` (mistral_common's SentencePiece v1). Weights are safetensors.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from openmind.nlp.testing import assets

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if tokenizer == "llama2":
        assets.save_llama2_tokenizer(folder)
    elif tokenizer == "mistral":
        assets.save_mistral_tokenizer(folder)
    else:
        raise ValueError(f"unknown tokenizer {tokenizer!r}")
    cfg = LlamaConfig(
        vocab_size=32000,
        hidden_size=hidden_size,
        intermediate_size=intermediate_size or hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads or heads,
        max_position_embeddings=max_position_embeddings,
        bos_token_id=1,
        eos_token_id=2,
        tie_word_embeddings=False,
        **config,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg).to(getattr(torch, dtype))
    model.generation_config.pad_token_id = 2
    model.save_pretrained(folder, safe_serialization=True)
    return folder
