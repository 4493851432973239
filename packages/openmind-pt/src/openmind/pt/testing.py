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
        **{"tie_word_embeddings": False, **config},
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


# ---- vision / audio / diffusion ------------------------------------------------------------------


def clip_tokenizer(folder: str | os.PathLike) -> Any:
    """A real ``CLIPTokenizer`` (byte-level BPE, CLIP's pre-tokenization and special tokens) over a
    byte-level vocabulary without merges, written offline: CLIP's merges file is on no PyPI package."""
    import json

    from transformers import CLIPTokenizer
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    chars = list(bytes_to_unicode().values())
    vocab = {c: i for i, c in enumerate(chars)}
    for c in chars:
        vocab[c + "</w>"] = len(vocab)
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    tokenizer = CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"), pad_token="<|endoftext|>")
    tokenizer.model_max_length = 77
    tokenizer.save_pretrained(folder)
    return tokenizer


def _image_processor(kind: str, size: int, **extra: Any) -> Any:
    import transformers

    return getattr(transformers, kind)(size={"height": size, "width": size}, **extra)


def tiny_vit(folder: str | os.PathLike, labels: list[str] | None = None, seed: int = 0, size: int = 32) -> Path:
    """A randomly initialised tiny ViT: ``ViTForImageClassification`` with ``labels``, else ``ViTModel``."""
    import torch
    from transformers import ViTConfig, ViTForImageClassification, ViTModel

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    extra: dict[str, Any] = {}
    if labels:
        extra = {"id2label": dict(enumerate(labels)), "label2id": {label: i for i, label in enumerate(labels)}}
    config = ViTConfig(
        image_size=size,
        patch_size=8,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        **extra,
    )
    torch.manual_seed(seed)
    model = ViTForImageClassification(config) if labels else ViTModel(config)
    _scale_heads(model, ("classifier",))
    model.save_pretrained(folder, safe_serialization=True)
    _image_processor("ViTImageProcessor", size).save_pretrained(folder)
    return folder


def tiny_detr(folder: str | os.PathLike, labels: list[str], seed: int = 0) -> Path:
    """A randomly initialised tiny ``DetrForObjectDetection`` (transformers' own ResNet backbone)."""
    import torch
    from transformers import DetrConfig, DetrForObjectDetection, DetrImageProcessor, ResNetConfig

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    backbone = ResNetConfig(
        embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], layer_type="basic", out_features=["stage2"]
    )
    config = DetrConfig(
        use_timm_backbone=False,
        backbone_config=backbone,
        use_pretrained_backbone=False,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        num_queries=10,
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    torch.manual_seed(seed)
    model = DetrForObjectDetection(config)
    _scale_heads(model, ("class_labels_classifier",), 10.0)
    model.save_pretrained(folder, safe_serialization=True)
    DetrImageProcessor(size={"shortest_edge": 32, "longest_edge": 64}).save_pretrained(folder)
    return folder


def tiny_owlvit(folder: str | os.PathLike, seed: int = 0) -> Path:
    """A randomly initialised tiny ``OwlViTForObjectDetection`` with an OWL-ViT processor."""
    import torch
    from transformers import OwlViTConfig, OwlViTForObjectDetection, OwlViTImageProcessor, OwlViTProcessor

    folder = Path(folder)
    tokenizer = clip_tokenizer(folder)
    config = OwlViTConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "max_position_embeddings": 16,
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        },
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "image_size": 32,
            "patch_size": 8,
        },
        projection_dim=32,
    )
    torch.manual_seed(seed)
    OwlViTForObjectDetection(config).save_pretrained(folder, safe_serialization=True)
    tokenizer.model_max_length = 16
    image_processor = OwlViTImageProcessor(size={"height": 32, "width": 32}, crop_size={"height": 32, "width": 32})
    OwlViTProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def tiny_clip(folder: str | os.PathLike, seed: int = 0) -> Path:
    """A randomly initialised tiny ``CLIPModel`` with a CLIP processor (zero-shot image classification)."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    folder = Path(folder)
    tokenizer = clip_tokenizer(folder)
    config = CLIPConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "max_position_embeddings": 77,
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        },
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "image_size": 32,
            "patch_size": 8,
        },
        projection_dim=32,
    )
    torch.manual_seed(seed)
    CLIPModel(config).save_pretrained(folder, safe_serialization=True)
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def tiny_dpt(folder: str | os.PathLike, seed: int = 0) -> Path:
    """A randomly initialised tiny ``DPTForDepthEstimation``."""
    import torch
    from transformers import DPTConfig, DPTForDepthEstimation, DPTImageProcessor

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = DPTConfig(
        image_size=32,
        patch_size=8,
        hidden_size=32,
        num_hidden_layers=4,
        num_attention_heads=2,
        intermediate_size=64,
        backbone_out_indices=[0, 1, 2, 3],
        neck_hidden_sizes=[8, 16, 16, 16],
        fusion_hidden_size=16,
        head_in_index=-1,
    )
    torch.manual_seed(seed)
    DPTForDepthEstimation(config).save_pretrained(folder, safe_serialization=True)
    DPTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


def tiny_blip(folder: str | os.PathLike, vqa: bool = False, seed: int = 0) -> Path:
    """A randomly initialised tiny BLIP (captioning, or ``vqa``) with a BLIP processor over the real
    MiniLM (BERT uncased) WordPiece tokenizer, as BLIP uses a BERT tokenizer."""
    import torch
    from transformers import (
        AutoTokenizer,
        BlipConfig,
        BlipForConditionalGeneration,
        BlipForQuestionAnswering,
        BlipImageProcessor,
        BlipProcessor,
    )

    from openmind.nlp.testing.assets import minilm_path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    tokenizer.add_special_tokens({"bos_token": "[DEC]"})
    config = BlipConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "max_position_embeddings": 64,
            "bos_token_id": tokenizer.bos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
            "sep_token_id": tokenizer.sep_token_id,
            "encoder_hidden_size": 32,
        },
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "image_size": 32,
            "patch_size": 8,
        },
        projection_dim=32,
    )
    torch.manual_seed(seed)
    model = (BlipForQuestionAnswering if vqa else BlipForConditionalGeneration)(config)
    model.save_pretrained(folder, safe_serialization=True)
    image_processor = BlipImageProcessor(size={"height": 32, "width": 32})
    BlipProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def tiny_wav2vec2(folder: str | os.PathLike, labels: list[str] | None = None, seed: int = 0) -> Path:
    """A randomly initialised tiny wav2vec2: ``Wav2Vec2ForCTC`` over a character vocabulary, or
    ``Wav2Vec2ForSequenceClassification`` with ``labels`` (audio classification)."""
    import json

    import torch
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2CTCTokenizer,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForCTC,
        Wav2Vec2ForSequenceClassification,
        Wav2Vec2Processor,
    )

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    chars = ["<pad>", "<s>", "</s>", "<unk>", "|", *"abcdefghijklmnopqrstuvwxyz'"]
    (folder / "vocab.json").write_text(json.dumps({c: i for i, c in enumerate(chars)}), encoding="utf-8")
    extra: dict[str, Any] = {}
    if labels:
        extra = {"id2label": dict(enumerate(labels)), "label2id": {label: i for i, label in enumerate(labels)}}
    config = Wav2Vec2Config(
        vocab_size=len(chars),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        conv_dim=(16, 16),
        conv_stride=(5, 4),
        conv_kernel=(10, 8),
        num_feat_extract_layers=2,
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        pad_token_id=0,
        **extra,
    )
    torch.manual_seed(seed)
    feature_extractor = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, return_attention_mask=True)
    if labels:
        model = Wav2Vec2ForSequenceClassification(config)
        _scale_heads(model, ("classifier",))
        feature_extractor.save_pretrained(folder)
        (folder / "vocab.json").unlink()
    else:
        model = Wav2Vec2ForCTC(config)
        tokenizer = Wav2Vec2CTCTokenizer(str(folder / "vocab.json"), word_delimiter_token="|")
        Wav2Vec2Processor(feature_extractor=feature_extractor, tokenizer=tokenizer).save_pretrained(folder)
    model.save_pretrained(folder, safe_serialization=True)
    return folder


def tiny_stable_diffusion(folder: str | os.PathLike, seed: int = 0) -> Path:
    """A randomly initialised tiny Stable Diffusion folder (UNet2DCondition + AutoencoderKL + CLIP text
    encoder + PNDM scheduler) that diffusers' ``StableDiffusionPipeline`` loads."""
    import torch
    from diffusers import AutoencoderKL, PNDMScheduler, StableDiffusionPipeline, UNet2DConditionModel

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = clip_tokenizer(folder / "tokenizer")
    torch.manual_seed(seed)
    unet = UNet2DConditionModel(
        block_out_channels=(32, 64),
        layers_per_block=1,
        sample_size=16,
        in_channels=4,
        out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=32,
        attention_head_dim=8,
        norm_num_groups=8,
    )
    vae = AutoencoderKL(
        block_out_channels=(16, 32),
        in_channels=3,
        out_channels=3,
        latent_channels=4,
        norm_num_groups=8,
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
        sample_size=32,
    )
    text_encoder = _tiny_text_encoder(tokenizer)
    scheduler = PNDMScheduler(skip_prk_steps=True, steps_offset=1)
    pipe = StableDiffusionPipeline(
        unet=unet,
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        scheduler=scheduler,
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    pipe.save_pretrained(folder, safe_serialization=True)
    return folder


def _tiny_text_encoder(tokenizer: Any) -> Any:
    from transformers import CLIPTextConfig, CLIPTextModel

    return CLIPTextModel(
        CLIPTextConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            max_position_embeddings=77,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
    )


def tiny_text_to_video(folder: str | os.PathLike, seed: int = 0) -> Path:
    """A randomly initialised tiny ``TextToVideoSDPipeline`` folder (UNet3DCondition + AutoencoderKL +
    CLIP text encoder + DDIM)."""
    import torch
    from diffusers import AutoencoderKL, DDIMScheduler, TextToVideoSDPipeline, UNet3DConditionModel

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = clip_tokenizer(folder / "tokenizer")
    torch.manual_seed(seed)
    unet = UNet3DConditionModel(
        block_out_channels=(32, 64),
        layers_per_block=1,
        sample_size=16,
        in_channels=4,
        out_channels=4,
        down_block_types=("CrossAttnDownBlock3D", "DownBlock3D"),
        up_block_types=("UpBlock3D", "CrossAttnUpBlock3D"),
        cross_attention_dim=32,
        attention_head_dim=4,
        norm_num_groups=8,
    )
    vae = AutoencoderKL(
        block_out_channels=(16, 32),
        in_channels=3,
        out_channels=3,
        latent_channels=4,
        norm_num_groups=8,
        down_block_types=("DownEncoderBlock2D",) * 2,
        up_block_types=("UpDecoderBlock2D",) * 2,
        sample_size=32,
    )
    pipe = TextToVideoSDPipeline(
        unet=unet, vae=vae, text_encoder=_tiny_text_encoder(tokenizer), tokenizer=tokenizer, scheduler=DDIMScheduler()
    )
    pipe.save_pretrained(folder, safe_serialization=True)
    return folder


def tiny_sam(folder: str | os.PathLike, seed: int = 0) -> Path:
    """A randomly initialised tiny ``SamModel`` with a SAM processor (mask generation)."""
    import torch
    from transformers import SamConfig, SamImageProcessor, SamModel, SamProcessor

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = SamConfig(
        vision_config=dict(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=64,
            patch_size=16,
            output_channels=16,
            global_attn_indexes=[1],
            num_pos_feats=8,
            mlp_dim=32,
            window_size=2,
        ),
        prompt_encoder_config=dict(
            hidden_size=16, image_size=64, patch_size=16, mask_input_channels=4, num_point_embeddings=4
        ),
        mask_decoder_config=dict(
            hidden_size=16,
            mlp_dim=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            iou_head_hidden_dim=16,
            num_multimask_outputs=3,
        ),
    )
    torch.manual_seed(seed)
    SamModel(config).save_pretrained(folder, safe_serialization=True)
    processor = SamImageProcessor(
        size={"longest_edge": 64},
        pad_size={"height": 64, "width": 64},
        mask_size={"longest_edge": 16},
        mask_pad_size={"height": 16, "width": 16},
    )
    SamProcessor(image_processor=processor).save_pretrained(folder)
    return folder


def tiny_mt5(folder: str | os.PathLike, seed: int = 0) -> Path:
    """A randomly initialised tiny ``MT5ForConditionalGeneration`` (no task prefixes, as mT5 ships)
    with a T5 tokenizer on a real SentencePiece model (see :func:`t5_tokenizer`)."""
    import torch
    from transformers import MT5Config, MT5ForConditionalGeneration

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = t5_tokenizer(folder)
    config = MT5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_ff=64,
        d_kv=16,
        num_layers=2,
        num_heads=2,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    MT5ForConditionalGeneration(config).save_pretrained(folder, safe_serialization=True)
    return folder


def marian_tokenizer(folder: str | os.PathLike) -> Any:
    """A ``MarianTokenizer`` whose source and target SentencePiece models are a real one (Mistral's
    v1, package ``mistral_common``; no PyPI package ships an OPUS-MT ``source.spm``), with the
    ``vocab.json`` of its pieces plus Marian's ``<pad>``."""
    import json
    import shutil
    import tempfile

    from transformers import MarianTokenizer

    from openmind.nlp.testing.assets import mistral_tokenizer_model

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model = str(mistral_tokenizer_model())
    for name in ("source.spm", "target.spm"):
        shutil.copy(model, folder / name)
    with tempfile.TemporaryDirectory() as pieces:  # the model's pieces, read by transformers' converter
        vocab = dict(sorted(t5_tokenizer(pieces).get_vocab().items(), key=lambda kv: kv[1]))
    vocab.setdefault("<pad>", len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tokenizer = MarianTokenizer(str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json"))
    tokenizer.save_pretrained(folder)
    return tokenizer


def tiny_marian(folder: str | os.PathLike, seed: int = 0) -> Path:
    """A randomly initialised tiny ``MarianMTModel`` (OPUS-MT's architecture) with
    :func:`marian_tokenizer`."""
    import torch
    from transformers import MarianConfig, MarianMTModel

    folder = Path(folder)
    tokenizer = marian_tokenizer(folder)
    config = MarianConfig(
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
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
        forced_eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(seed)
    MarianMTModel(config).save_pretrained(folder, safe_serialization=True)
    return folder


def tiny_vits(folder: str | os.PathLike, seed: int = 0) -> Path:
    """A randomly initialised tiny ``VitsModel`` (MMS-TTS's architecture) with a character-level
    ``VitsTokenizer`` built here (no PyPI package ships an MMS-TTS vocabulary)."""
    import json

    import torch
    from transformers import VitsConfig, VitsModel, VitsTokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    chars = list(" abcdefghijklmnopqrstuvwxyz'.,!?-")
    vocab = {"<pad>": 0, **{c: i + 1 for i, c in enumerate(chars)}}
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    tokenizer = VitsTokenizer(str(folder / "vocab.json"), add_blank=True, normalize=True, phonemize=False)
    tokenizer.save_pretrained(folder)
    config = VitsConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        ffn_dim=32,
        flow_size=16,
        spectrogram_bins=17,
        upsample_initial_channel=16,
        upsample_rates=[4, 4],
        upsample_kernel_sizes=[8, 8],
        resblock_kernel_sizes=[3],
        resblock_dilation_sizes=[[1, 3]],
        prior_encoder_num_flows=2,
        prior_encoder_num_wavenet_layers=2,
        posterior_encoder_num_wavenet_layers=2,
        duration_predictor_num_flows=2,
        duration_predictor_filter_channels=16,
        depth_separable_num_layers=2,
        sampling_rate=16000,
    )
    torch.manual_seed(seed)
    VitsModel(config).save_pretrained(folder, safe_serialization=True)
    return folder


def _fix_processor_class(folder: Path, name: str) -> None:
    import json

    path = folder / "processor_config.json"
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data["processor_class"] = name
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def tiny_qwen2_vl(
    folder: str | os.PathLike, chat_template: str, *, seed: int = 0, hidden_size: int = 64, variant: str = "qwen2-vl"
) -> Path:
    """A randomly initialised ``Qwen2VLForConditionalGeneration`` (``variant="qwen2.5-vl"``:
    ``Qwen2_5_VLForConditionalGeneration``, windowed vision attention) with its processor, for tests.

    Tokenizer: the real Llama-2 BPE (wordllama) plus Qwen2-VL's special tokens (``<|im_start|>``,
    ``<|im_end|>``, ``<|vision_start|>``, ``<|vision_end|>``, ``<|image_pad|>``, ``<|video_pad|>``):
    no PyPI package ships Qwen's own vocabulary. Image processor: Qwen2-VL's, with small pixel
    bounds (a 56x56 image is 4x4 patches = 4 image tokens). ``chat_template``: the official text.
    """
    import torch
    import transformers
    from transformers import Qwen2VLImageProcessorPil

    from openmind.nlp.testing import assets
    from openmind.pt.pipelines.vl_chat import _images_only

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tok = assets.llama2_tokenizer(None)
    specials = ["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
    tok.add_special_tokens({"additional_special_tokens": specials})
    tok.pad_token = "<|im_end|>"
    tok.eos_token = "<|im_end|>"
    ids = {t: tok.convert_tokens_to_ids(t) for t in specials}
    image_processor = Qwen2VLImageProcessorPil(min_pixels=28 * 28 * 4, max_pixels=28 * 28 * 16)
    prefix = {"qwen2-vl": "Qwen2VL", "qwen2.5-vl": "Qwen2_5_VL"}[variant]
    processor_cls = getattr(transformers, f"{prefix}Processor")
    processor = _images_only(processor_cls)(image_processor=image_processor, tokenizer=tok, chat_template=chat_template)
    vision = {
        "depth": 2,
        "embed_dim": 32,
        "hidden_size": hidden_size,
        "num_heads": 2,
        "mlp_ratio": 2,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "in_channels": 3,
    }
    if variant == "qwen2.5-vl":  # hidden_size is the tower's own width there, out_hidden_size the LM's
        vision = {
            "depth": 2,
            "hidden_size": 32,
            "intermediate_size": 64,
            "out_hidden_size": hidden_size,
            "num_heads": 2,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "in_channels": 3,
            "window_size": 56,
            "fullatt_block_indexes": [1],
        }
    cfg = getattr(transformers, f"{prefix}Config")(
        text_config={
            "vocab_size": len(tok),
            "hidden_size": hidden_size,
            "intermediate_size": hidden_size * 2,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 4096,
            "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]},
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|im_end|>"],
            "bos_token_id": 1,
        },
        vision_config=vision,
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(seed)
    model = getattr(transformers, f"{prefix}ForConditionalGeneration")(cfg).eval()
    _scale_heads(model, ("lm_head",))
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|im_end|>"]
    model.save_pretrained(folder, safe_serialization=True)
    processor.save_pretrained(folder)
    _fix_processor_class(folder, f"{prefix}Processor")
    return folder


def tiny_llava(folder: str | os.PathLike, chat_template: str, *, seed: int = 0, hidden_size: int = 64) -> Path:
    """A randomly initialised ``LlavaForConditionalGeneration`` (LLaVA 1.5 layout) with its processor.

    Tokenizer: the real Llama-2 BPE (LLaVA-1.5's language model is Vicuna, a Llama-2 tokenizer) plus
    ``<image>`` and ``<pad>`` as LLaVA-1.5 adds them. Vision tower: a tiny CLIP ViT at 28x28 with
    14-pixel patches (4 image tokens per image after dropping CLS, as the ``default`` strategy does).
    """
    import torch
    from transformers import (
        CLIPImageProcessorPil,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    from openmind.nlp.testing import assets

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tok = assets.llama2_tokenizer(None)
    tok.add_special_tokens({"additional_special_tokens": ["<image>"], "pad_token": "<pad>"})
    image_processor = CLIPImageProcessorPil(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28})
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tok,
        patch_size=14,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=chat_template,
    )
    cfg = LlavaConfig(
        vision_config=CLIPVisionConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=28,
            patch_size=14,
        ).to_dict(),
        text_config=LlamaConfig(
            vocab_size=len(tok),
            hidden_size=hidden_size,
            intermediate_size=hidden_size * 2,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=4096,
            bos_token_id=1,
            eos_token_id=2,
            pad_token_id=tok.pad_token_id,
        ).to_dict(),
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(cfg).eval()
    _scale_heads(model, ("lm_head",))
    model.generation_config.eos_token_id = 2
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(folder, safe_serialization=True)
    processor.save_pretrained(folder)
    return folder
