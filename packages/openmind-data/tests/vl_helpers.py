"""A vision-language model folder without weights (data preparation needs none) and transformers'
own Qwen2-VL processor as the reference for prepared rows. No torch needed."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

QWEN2_VL_TOKENS = ("<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>")


def qwen2_vl_folder(folder: Path, image_pixels: int = 56 * 56) -> Path:
    """config.json (Qwen2-VL architecture), the real Llama-2 tokenizer + Qwen2-VL's special tokens and
    official chat template (fixtures/chat_templates, see SOURCE.md there), Qwen2-VL's image processor."""
    from transformers import Qwen2VLConfig
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    from openmind.nlp.testing.assets import llama2_tokenizer

    template = (Path(__file__).parent / "fixtures" / "chat_templates" / "qwen2_5_vl.jinja").read_text(encoding="utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    tok = llama2_tokenizer(chat_template=template)
    tok.add_special_tokens({"additional_special_tokens": list(QWEN2_VL_TOKENS)})
    tok.eos_token = tok.pad_token = "<|im_end|>"
    ids = {t: tok.convert_tokens_to_ids(t) for t in QWEN2_VL_TOKENS}
    Qwen2VLConfig(
        text_config={"vocab_size": len(tok), "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4},
        vision_config={"depth": 1, "embed_dim": 32, "hidden_size": 64, "num_heads": 2},
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    ).save_pretrained(folder)
    tok.save_pretrained(folder)
    Qwen2VLImageProcessorPil(min_pixels=image_pixels, max_pixels=image_pixels).save_pretrained(folder)
    return folder


@contextmanager
def _no_video_processor_check():
    # Qwen2VLProcessor insists on a video processor whose class needs torchvision (not installable
    # beside the CPU torch here); images never reach it, so only that None argument skips the check.
    from transformers.processing_utils import ProcessorMixin

    original = ProcessorMixin.check_argument_for_proper_class

    def check(self, name, argument):
        if argument is None and name == "video_processor":
            return None
        return original(self, name, argument)

    ProcessorMixin.check_argument_for_proper_class = check
    try:
        yield
    finally:
        ProcessorMixin.check_argument_for_proper_class = original


def qwen2_vl_processor(folder: Path):
    from transformers import AutoImageProcessor, AutoTokenizer, Qwen2VLProcessor

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    with _no_video_processor_check():
        return Qwen2VLProcessor(
            image_processor=AutoImageProcessor.from_pretrained(str(folder)),
            tokenizer=tokenizer,
            video_processor=None,
            chat_template=tokenizer.chat_template,
        )


def as_parts(messages: list[dict]) -> list[dict]:
    """Standard messages with ``<image>`` placeholders -> OpenAI-style content parts."""
    out = []
    for m in messages:
        pieces = m["content"].split("<image>")
        content = [{"type": "text", "text": pieces[0]}] if pieces[0] else []
        for piece in pieces[1:]:
            content.append({"type": "image"})
            if piece:
                content.append({"type": "text", "text": piece})
        out.append({"role": m["role"], "content": content})
    return out
