"""Helpers of ``bench_data.py``: synthetic rows and the two preparation runners.

Run as a script, one preparation per process (so peak memory is that run's own)::

    python bench/data_runners.py openmind ROWS_DIR TOKENIZER_DIR OUT_DIR CACHE_DIR CUTOFF WORKERS
    .venv-lf/bin/python bench/data_runners.py llamafactory ROWS_DIR TOKENIZER_DIR OUT_DIR CACHE_DIR CUTOFF WORKERS

Each prints one JSON line: ``{"seconds", "rows", "tokens", "peak_rss_mb", ...}``. The
LLaMA-Factory side must run in its own venv (``.venv-lf``, see ENVIRONMENT.md): it is never a
dependency of openmind.
"""

from __future__ import annotations

import json
import os
import random
import resource
import sys
import time
from pathlib import Path

WORDS = (
    "the of and to in is that for it as was with be by on not he this are or his from at which but have an they "
    "you were her she there been one all we their has would when if so no will can more other what about up out "
    "into than them only some could time these two may then do first any my now such like our over man me even "
    "most made after also did many before must through back years where much your way well down should because "
    "each just those people how too little state good very make world still own see men work long get here "
    "between both life being under never day same another know while last might us great old year off come since "
    "against go came right used take three model data train learn token layer weight gradient batch sequence "
    "attention vector matrix python function value result error memory speed cache file line field reason"
).split()


def synthetic_rows(n: int, seed: int = 0) -> list[dict]:
    """``n`` sharegpt conversations, 1-4 turns, sometimes with a system prompt (deterministic)."""
    rng = random.Random(seed)

    def sentence(lo: int, hi: int) -> str:
        words = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
        return " ".join(words).capitalize() + rng.choice([".", "?", "!", "."])

    rows = []
    for i in range(n):
        conv = []
        if rng.random() < 0.3:
            conv.append({"from": "system", "value": sentence(5, 15)})
        for _ in range(rng.randint(1, 4)):
            conv.append({"from": "human", "value": f"Question {i}: " + sentence(8, 40)})
            conv.append({"from": "gpt", "value": " ".join(sentence(5, 25) for _ in range(rng.randint(1, 4)))})
        rows.append({"conversations": conv})
    return rows


def write_rows(folder: Path, rows: list[dict]) -> Path:
    """``folder/rows.jsonl`` + a LLaMA-Factory ``dataset_info.json`` naming it ``bench``."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "rows.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    info = {"bench": {"file_name": "rows.jsonl", "formatting": "sharegpt"}}
    (folder / "dataset_info.json").write_text(json.dumps(info), encoding="utf-8")
    return folder


def _cpu_seconds(own_only: bool = False) -> float:
    """User + system CPU time of this process and its finished children (worker pools are joined
    before a runner returns): on a shared machine, CPU seconds compare better than wall time.
    ``own_only``: this process alone (with workers: the part of the run that is not parallel)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + (0 if own_only else kids.ru_utime + kids.ru_stime)


class _Timed:
    """Counts the CPU seconds this process spends in one method (the tokenizer calls of a
    preparation); calls made in worker processes are not counted, so runners report it for one
    worker only."""

    def __init__(self, owner: object, name: str) -> None:
        self.seconds = 0.0
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds += time.process_time() - start

        setattr(owner, name, timed)


def _peak_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, kids) / 1024, 1)


def run_openmind(rows_dir: str, tok_dir: str, out_dir: str, cache_dir: str, cutoff: int, workers: int) -> dict:
    import datasets  # noqa: F401 - imported before the clock starts, as LLaMA-Factory's import does
    from transformers import AutoTokenizer

    from openmind.core.args import DataArguments
    from openmind.data import prepare
    from openmind.data.encoding import Encoder
    from openmind.nlp.templates import load_template

    tokenizer = AutoTokenizer.from_pretrained(tok_dir)
    template = load_template("llama2")
    timed = _Timed(Encoder, "tokenize")  # the tokenisation of whole conversations (batched)
    args = DataArguments(
        dataset=["bench"],
        dataset_dir=rows_dir,
        cutoff_len=cutoff,
        preprocessing_num_workers=workers,
        data_cache_dir=cache_dir,
    )
    cpu, own, start = _cpu_seconds(), _cpu_seconds(own_only=True), time.perf_counter()
    data = prepare(args, tokenizer, template, quiet=True)
    seconds, cpu, own = time.perf_counter() - start, _cpu_seconds() - cpu, _cpu_seconds(own_only=True) - own
    if out_dir:
        data.train.select_columns(["input_ids", "labels"]).save_to_disk(out_dir)
    from openmind.data.packing import lengths

    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "rows": len(data.train),
        "tokens": int(lengths(data.train).sum()),
        "from_cache": data.from_cache,
        "parent_cpu_seconds": own,
        "tokenizer_cpu_seconds": timed.seconds if workers == 1 else None,
        "tokenizer_path": "word-memoised BPE" if Encoder(tokenizer, template).words else "Rust encode_batch",
        "peak_rss_mb": _peak_mb(),
    }


def _torchaudio_without_extension() -> None:
    """PyPI's torchaudio is a CUDA build whose compiled extension cannot load here; LLaMA-Factory
    imports it for multimodal data only, so its pure-PyTorch part is enough (ENVIRONMENT.md)."""
    import types

    ext = types.ModuleType("torchaudio._extension")
    ext._IS_TORCHAUDIO_EXT_AVAILABLE = False
    ext._IS_ALIGN_AVAILABLE = False
    ext.fail_if_no_align = lambda f: f
    ext._check_cuda_version = lambda: None
    sys.modules.setdefault("torchaudio._extension", ext)


def run_llamafactory(rows_dir: str, tok_dir: str, out_dir: str, cache_dir: str, cutoff: int, workers: int) -> dict:
    os.environ["HF_DATASETS_CACHE"] = cache_dir
    _torchaudio_without_extension()
    from llamafactory.data import get_dataset, get_template_and_fix_tokenizer
    from llamafactory.hparams import DataArguments, ModelArguments
    from transformers import AutoTokenizer, Seq2SeqTrainingArguments

    tokenizer = AutoTokenizer.from_pretrained(tok_dir)
    model_args = ModelArguments(model_name_or_path=tok_dir)
    data_args = DataArguments(
        template="llama2",
        dataset="bench",
        dataset_dir=rows_dir,
        cutoff_len=cutoff,
        preprocessing_num_workers=workers if workers > 1 else None,
        overwrite_cache=True,
    )
    training_args = Seq2SeqTrainingArguments(output_dir=os.path.join(cache_dir, "out"), report_to=[])
    template = get_template_and_fix_tokenizer(tokenizer, data_args)
    timed = _Timed(tokenizer, "encode")  # one call per template slot of every turn
    cpu, start = _cpu_seconds(), time.perf_counter()
    module = get_dataset(template, model_args, data_args, training_args, stage="sft", tokenizer=tokenizer)
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    train = module["train_dataset"]
    if out_dir:
        train.select_columns(["input_ids", "labels"]).save_to_disk(out_dir)
    import numpy as np

    offsets = train.data.column("input_ids").combine_chunks().offsets.to_numpy()
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "rows": len(train),
        "tokens": int(np.diff(offsets).sum()),
        "tokenizer_cpu_seconds": timed.seconds if workers == 1 else None,
        "peak_rss_mb": _peak_mb(),
    }


if __name__ == "__main__":
    side, rows_dir, tok_dir, out_dir, cache_dir, cutoff, workers = sys.argv[1:8]
    runner = run_openmind if side == "openmind" else run_llamafactory
    result = runner(rows_dir, tok_dir, out_dir, cache_dir, int(cutoff), int(workers))
    print("RESULT " + json.dumps(result), flush=True)
