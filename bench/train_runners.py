"""One side of the training benchmark, run in its own process (and venv for LLaMA-Factory).

    .venv/bin/python    bench/train_runners.py openmind     DATA_DIR MODEL_DIR OUT_DIR PACKING
    .venv-lf/bin/python bench/train_runners.py llamafactory DATA_DIR MODEL_DIR OUT_DIR PACKING

Both sides run SFT + LoRA with the same model, data, template (llama2), cutoff and
hyper-parameters (:data:`HPARAMS`) and print ``RESULT {json}`` with the Trainer's own
``train_runtime`` and the number of non-padding tokens trained on.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

HPARAMS = dict(
    cutoff_len=256,
    per_device_train_batch_size=8,
    gradient_accumulation_steps=1,
    learning_rate=1e-4,
    max_steps=24,
    lora_rank=8,
    lora_alpha=16,
    lora_dropout=0.0,
    seed=42,
)


def run_openmind(data_dir: str, model_dir: str, out_dir: str, packing: bool) -> dict:
    import openmind

    h = HPARAMS
    result = openmind.train(
        None,
        stage="sft",
        model=model_dir,
        dataset=[str(Path(data_dir) / "rows.jsonl")],
        template="llama2",
        finetuning_type="lora",
        lora_target=["all"],
        lora_rank=h["lora_rank"],
        lora_alpha=h["lora_alpha"],
        lora_dropout=h["lora_dropout"],
        cutoff_len=h["cutoff_len"],
        packing=packing,
        per_device_train_batch_size=h["per_device_train_batch_size"],
        gradient_accumulation_steps=h["gradient_accumulation_steps"],
        learning_rate=h["learning_rate"],
        max_steps=h["max_steps"],
        seed=h["seed"],
        lr_scheduler_type="cosine",
        logging_steps=4,
        save_steps=10_000,
        report_to=["none"],
        plot_loss=False,
        output_dir=out_dir,
        overwrite_output_dir=True,
        data_cache_dir=str(Path(out_dir) / "cache"),
    )
    return {
        "train_runtime": result.metrics["train_runtime"],
        "tokens": result.tokens,
        "final_loss": result.final_loss,
        "steps": result.global_step,
        "shapes": _openmind_shapes(data_dir, model_dir, out_dir, packing),
    }


def _openmind_shapes(data_dir: str, model_dir: str, out_dir: str, packing: bool) -> dict:
    """Per-token means of openmind's own prepared (packed) training set, for the matmul floor:
    the share of positions whose logits are trained (a label follows), and the causal attention
    pairs per token (``s (s + 1) / 2`` per sample of ``s`` tokens, samples packed apart)."""
    from transformers import AutoTokenizer

    from openmind.nlp.templates import resolve_template
    from openmind.nlp.training.base import SFTWrapper
    from openmind.pt.training.data import build_datasets

    h = HPARAMS
    ns = SFTWrapper.resolve(
        None,
        dict(
            model=model_dir,
            dataset=[str(Path(data_dir) / "rows.jsonl")],
            template="llama2",
            packing=packing,
            cutoff_len=h["cutoff_len"],
            data_cache_dir=str(Path(out_dir) / "cache"),
        ),
    )
    tok = AutoTokenizer.from_pretrained(model_dir)
    template = resolve_template("llama2", model_dir=model_dir, tokenizer=tok)
    train = build_datasets(ns, tok, template, "sft", quiet=True).train
    tokens = trained = pairs = 0
    for row in train:
        labels, n = row["labels"], len(row["input_ids"])
        pos = row.get("position_ids") or list(range(n))
        starts = [i for i, p in enumerate(pos) if p == 0] + [n]
        first = set(starts)
        # a position is projected to the vocabulary when the next label is trained (not a sample's first)
        trained += sum(1 for i in range(1, n) if labels[i] != -100 and i not in first)
        pairs += sum((b - a) * (b - a + 1) // 2 for a, b in zip(starts, starts[1:]))
        tokens += n
    return {"trained_per_token": trained / tokens, "attention_pairs_per_token": pairs / tokens}


def run_llamafactory(data_dir: str, model_dir: str, out_dir: str, packing: bool) -> dict:
    from data_runners import _torchaudio_without_extension

    _torchaudio_without_extension()
    os.environ["HF_DATASETS_CACHE"] = str(Path(out_dir) / "cache")
    from llamafactory.train.tuner import run_exp

    h = HPARAMS
    args = dict(
        stage="sft",
        do_train=True,
        model_name_or_path=model_dir,
        dataset="bench",
        dataset_dir=data_dir,
        template="llama2",
        finetuning_type="lora",
        lora_target="all",
        lora_rank=h["lora_rank"],
        lora_alpha=h["lora_alpha"],
        lora_dropout=h["lora_dropout"],
        cutoff_len=h["cutoff_len"],
        packing=packing,
        neat_packing=packing,
        per_device_train_batch_size=h["per_device_train_batch_size"],
        gradient_accumulation_steps=h["gradient_accumulation_steps"],
        learning_rate=h["learning_rate"],
        max_steps=h["max_steps"],
        seed=h["seed"],
        lr_scheduler_type="cosine",
        logging_steps=4,
        save_strategy="no",
        report_to="none",
        output_dir=out_dir,
        overwrite_output_dir=True,
        overwrite_cache=True,
        include_num_input_tokens_seen=True,
        plot_loss=False,
        use_cpu=True,
        bf16=False,
        fp16=False,
        dataloader_num_workers=0,
    )
    run_exp(args)
    metrics = json.loads((Path(out_dir) / "train_results.json").read_text())
    rows, tokens = _llamafactory_rows(data_dir, model_dir, out_dir, packing)
    # LLaMA-Factory pads every batch and counts the padding in num_input_tokens_seen; the
    # non-padding tokens trained on are the steps x batch rows of its own tokenised dataset
    per_row = tokens / rows
    return {
        "train_runtime": metrics["train_runtime"],
        "tokens": round(h["max_steps"] * h["per_device_train_batch_size"] * per_row),
        "tokens_per_row": per_row,
        "tokens_seen_with_padding": metrics.get("num_input_tokens_seen"),
        "final_loss": metrics.get("train_loss"),
        "steps": h["max_steps"],
    }


def _llamafactory_rows(data_dir: str, model_dir: str, out_dir: str, packing: bool) -> tuple[int, int]:
    """Rows and non-padding tokens of LLaMA-Factory's own tokenised (and packed) training set."""
    from llamafactory.data import get_dataset, get_template_and_fix_tokenizer
    from llamafactory.hparams import DataArguments, ModelArguments
    from transformers import AutoTokenizer, Seq2SeqTrainingArguments

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    data_args = DataArguments(
        template="llama2",
        dataset="bench",
        dataset_dir=data_dir,
        cutoff_len=HPARAMS["cutoff_len"],
        packing=packing,
        neat_packing=packing,
        overwrite_cache=True,
    )
    training_args = Seq2SeqTrainingArguments(output_dir=str(Path(out_dir) / "rows"), report_to=[])
    template = get_template_and_fix_tokenizer(tokenizer, data_args)
    module = get_dataset(
        template,
        ModelArguments(model_name_or_path=model_dir),
        data_args,
        training_args,
        stage="sft",
        tokenizer=tokenizer,
    )
    train = module["train_dataset"]
    column = "attention_mask" if "attention_mask" in train.column_names else "input_ids"
    tokens = sum(sum(1 for m in row if m) if column == "attention_mask" else len(row) for row in train[column])
    return len(train), tokens


if __name__ == "__main__":
    side, data_dir, model_dir, out_dir, packing = sys.argv[1:6]
    runner = run_openmind if side == "openmind" else run_llamafactory
    result = runner(data_dir, model_dir, out_dir, packing == "1")
    print("RESULT " + json.dumps(result), flush=True)
