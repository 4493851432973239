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


def _scale_heads(model: Any, prefixes: tuple[str, ...], factor: float = 50.0) -> None:
    """Scale up a random head so that its classes are well separated (random heads are nearly uniform)."""
    import torch

    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.startswith(prefixes) and param.dim() == 2:
                param.mul_(factor)


def tiny_bert(
    folder: str | os.PathLike, head: str = "BertModel", labels: list[str] | None = None, seed: int = 0
) -> Path:
    """A randomly initialised tiny BERT with ``head`` (a transformers class name) and the real
    MiniLM (BERT uncased) WordPiece tokenizer."""
    import torch
    import transformers
    from transformers import AutoTokenizer, BertConfig

    from openmind.nlp.testing.assets import minilm_path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    AutoTokenizer.from_pretrained(minilm_path()).save_pretrained(folder)
    extra: dict[str, Any] = {}
    if labels:
        extra = {"id2label": dict(enumerate(labels)), "label2id": {label: i for i, label in enumerate(labels)}}
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, **extra
    )
    torch.manual_seed(seed)
    model = getattr(transformers, head)(config)
    _scale_heads(model, ("classifier", "qa_outputs", "cls.predictions.decoder"))
    model.save_pretrained(folder, safe_serialization=True)
    return folder


def t5_tokenizer(folder: str | os.PathLike) -> Any:
    """A T5 tokenizer built from a real SentencePiece model (Mistral's v1, package ``mistral_common``):
    no PyPI package ships T5's own ``spiece.model``."""
    import shutil
    import tempfile

    from transformers import T5Tokenizer

    from openmind.nlp.testing.assets import mistral_tokenizer_model

    with tempfile.TemporaryDirectory() as source:
        shutil.copy(mistral_tokenizer_model(), Path(source) / "spiece.model")
        tokenizer = T5Tokenizer.from_pretrained(source, extra_ids=0)
    tokenizer.save_pretrained(folder)
    return tokenizer


def tiny_t5(folder: str | os.PathLike, seed: int = 0) -> Path:
    """A randomly initialised tiny ``T5ForConditionalGeneration`` with T5's task prefixes."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = t5_tokenizer(folder)
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_ff=64,
        d_kv=16,
        num_layers=2,
        num_heads=2,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
        task_specific_params={
            "summarization": {"prefix": "summarize: "},
            "translation_en_to_de": {"prefix": "translate English to German: "},
        },
    )
    torch.manual_seed(seed)
    T5ForConditionalGeneration(config).save_pretrained(folder, safe_serialization=True)
    return folder


def tiny_bart(folder: str | os.PathLike, seed: int = 0) -> Path:
    """A randomly initialised tiny ``BartForConditionalGeneration`` with the real MiniLM WordPiece
    tokenizer (BART's own byte-level BPE files are on no PyPI package)."""
    import torch
    from transformers import AutoTokenizer, BartConfig, BartForConditionalGeneration

    from openmind.nlp.testing.assets import minilm_path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    tokenizer.save_pretrained(folder)
    config = BartConfig(
        vocab_size=len(tokenizer),
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
        decoder_start_token_id=tokenizer.sep_token_id,
        forced_bos_token_id=None,
        forced_eos_token_id=None,
    )
    torch.manual_seed(seed)
    BartForConditionalGeneration(config).save_pretrained(folder, safe_serialization=True)
    return folder


def tiny_tapas(folder: str | os.PathLike, seed: int = 0) -> Path:
    """A randomly initialised tiny ``TapasForQuestionAnswering`` (with aggregation, WTQ-style) and a
    TAPAS tokenizer on the real MiniLM (BERT uncased) vocabulary."""
    import shutil

    import torch
    from transformers import TapasConfig, TapasForQuestionAnswering, TapasTokenizer

    from openmind.nlp.testing.assets import minilm_path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(minilm_path() / "vocab.txt", folder / "vocab.txt")
    TapasTokenizer(vocab_file=str(folder / "vocab.txt")).save_pretrained(folder)
    config = TapasConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_aggregation_labels=4,
        use_answer_as_supervision=True,
        select_one_column=True,
    )
    torch.manual_seed(seed)
    TapasForQuestionAnswering(config).save_pretrained(folder, safe_serialization=True)
    return folder
