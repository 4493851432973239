"""``prepare()``: standard rows -> tokenised (and optionally packed) Arrow datasets, cached on disk."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from openmind.data import cache as C
from openmind.data import catalog, readers
from openmind.data.encoding import DROPPED, NO_LABELS, OK, TOO_LONG, TRUNCATED, Encoder
from openmind.data.errors import D_EMPTY, D_TOO_LONG
from openmind.data.loading import Report, RowProblem, announce, data_cache_dir, load

HELPER_COLUMNS = ("_status", "_length", "_problems", "_file", "_row")


@dataclass
class PreparedData:
    """What :func:`prepare` returns.

    ``train`` / ``eval`` are ``datasets.Dataset`` s (memory-mapped Arrow):

    * ``pt`` / ``sft``: ``input_ids``, ``labels`` (``-100`` where not trained); with packing
      also ``position_ids`` (restarting at 0 for every packed sample; rows are not padded);
    * ``dpo`` / ``rm``: ``chosen_input_ids``, ``chosen_labels``, ``rejected_input_ids``,
      ``rejected_labels`` (the prompt is masked in the labels);
      :func:`openmind.pt.training.adapters.trl_preference` turns them into trl's columns.

    ``stats``: ``read``, ``kept``, ``rejected``, ``truncated``, ``dropped``, token counts and
    padding waste before/after packing. ``from_cache`` tells whether the result was reused.
    """

    train: Any
    eval: Any = None
    stats: dict[str, Any] = field(default_factory=dict)
    cache_dir: str | None = None
    from_cache: bool = False
    report: Report | None = None


def _source_ids(data_args: Any, names: list[str]) -> list[str]:
    """Content digests of every file behind ``names`` (hub ids as they are)."""
    out = []
    for name in names:
        entry = catalog.resolve(name, getattr(data_args, "dataset_dir", None), getattr(data_args, "formatting", "auto"))
        if entry.load_from != "file":
            out.append(f"{entry.load_from}::{entry.hub_id}:{entry.subset}:{entry.split}")
            continue
        meta = {k: getattr(entry, k) for k in ("formatting", "ranking", "columns", "tags", "num_samples")}
        out.append(json.dumps(meta, sort_keys=True))
        for path in readers.expand(entry.paths, where=entry.defined_in):
            out.append(C.file_digest(path))
    return out


def _media_key(data_args: Any, names: list[str], image_processor: Any, model_config: Any) -> dict[str, Any]:
    """``mm-sft``: what else the prepared result depends on: the image processor and the content of
    every media file (the rows are read and checked here, before any model is loaded)."""
    from openmind.data import media
    from openmind.data.errors import D_MEDIA_MODEL, D_STAGE
    from openmind.data.multimodal import image_processor_digest

    if image_processor is None:
        raise D_MEDIA_MODEL.error(
            "stage 'mm-sft' needs the model's image processor to prepare multimodal rows",
            hint="Pass --model DIR of a vision-language model (with preprocessor_config.json).",
        )
    if getattr(data_args, "packing", False):
        raise D_STAGE.error(
            "packing is not supported for multimodal rows (visual tokens would be attended across samples)",
            location="packing",
            hint="Pass --packing false for mm-sft.",
        )
    digests: dict[str, str] = {}
    for name in names:
        loaded = load(data_args, stage="mm-sft", names=[name], keep_rejects=False, allow_empty=True)
        if loaded.dataset is None:
            continue
        cols = loaded.dataset.select_columns(["images", "videos", "audios", "_file"]).to_dict()
        for i, f in enumerate(cols["_file"]):
            where = media.bases(loaded.sources[f].path, data_args)
            for key in ("images", "videos", "audios"):
                for item in cols[key][i] or []:
                    path = media.resolve(item, where)
                    if path is not None and item not in digests:  # by name and content, like data files
                        digests[item] = C.file_digest(str(path))
    joined = json.dumps(sorted(digests.items())).encode()
    import hashlib

    return {
        "image_processor": image_processor_digest(image_processor),
        "model_type": (model_config or {}).get("model_type"),
        "media": hashlib.sha256(joined).hexdigest(),
    }


def _workers(data_args: Any, n: int) -> int | None:
    workers = max(1, int(getattr(data_args, "preprocessing_num_workers", 1) or 1))
    return workers if workers > 1 and n >= 2 * workers else None


def _finalize(ds: Any, sources: list, encoder: Encoder, report: Report):
    """Count and act on the encoder's status column: truncated, dropped, too long (raises)."""
    import numpy as np

    status = ds.data.column("_status").to_numpy()
    too_long = np.flatnonzero(status == TOO_LONG)
    if len(too_long):
        row = ds[int(too_long[0])]
        src = sources[row["_file"]]
        where = RowProblem(src.path, row["_row"], src.line_of(row["_row"]), "", "")
        raise D_TOO_LONG.error(
            f"sample of {row['_length']} tokens is longer than cutoff_len={encoder.cutoff_len} "
            f"({len(too_long)} sample(s) in all)",
            location=where.location,
        )
    report.truncated += int((status == TRUNCATED).sum())
    dropped = int(((status == DROPPED) | (status == NO_LABELS)).sum())
    report.dropped += dropped
    report.kept -= dropped
    keep = (status == OK) | (status == TRUNCATED)
    lengths = ds.data.column("_length").to_numpy()[keep]
    if not keep.all():
        ds = ds.select(np.flatnonzero(keep))
    ds = ds.remove_columns([c for c in HELPER_COLUMNS if c in ds.column_names])
    return ds, lengths


def _split(dataset: Any, val_size: float, seed: int):
    if not val_size:
        return dataset, None
    n = len(dataset)
    test = int(val_size) if val_size >= 1 else max(1, int(round(n * val_size)))
    if test >= n:
        raise D_EMPTY.error(f"val_size={val_size} leaves no training rows out of {n}")
    parts = dataset.train_test_split(test_size=test, seed=seed, shuffle=True)
    return parts["train"], parts["test"]


def prepare(
    data_args: Any,
    tokenizer: Any,
    template: Any = None,
    *,
    stage: str = "sft",
    seed: int = 42,
    quiet: bool = False,
    image_processor: Any = None,
    model_config: dict[str, Any] | None = None,
) -> PreparedData:
    """Load, check, tokenise (and pack) ``data_args.dataset`` for ``stage``; cached on disk.

    :param data_args: :class:`openmind.core.args.DataArguments` (or any object with its fields).
    :param tokenizer: a Hugging Face tokenizer (fast ones are batched through Rust).
    :param template: a :class:`openmind.nlp.templates.Template` (required except for ``pt``).
    :param stage: ``pt``, ``sft``, ``dpo``, ``rm``, ... or ``mm-sft`` (multimodal rows: needs
        ``image_processor`` and ``model_config``, see :mod:`openmind.data.multimodal`).
    :param seed: seed of the ``val_size`` split.
    :param image_processor: ``mm-sft``: the model's image processor.
    :param model_config: ``mm-sft``: the model's config.json (a dict).
    :returns: :class:`PreparedData`. A second call with the same files (same content), tokenizer,
        template, arguments and openmind-data version reuses the cache (``from_cache=True``)
        unless ``data_args.overwrite_cache``.
    """
    import datasets

    start = time.perf_counter()
    if stage != "pt" and template is None:
        from openmind.core.errors import A_MISSING

        raise A_MISSING.error(
            f"stage {stage!r} needs a template", hint="Pass --template NAME or a model with a chat template."
        )
    from openmind.core.training.wrapper import check_val_size

    check_val_size(getattr(data_args, "val_size", 0))  # before anything is read or cached
    names = list(getattr(data_args, "dataset", []) or [])
    eval_names = list(getattr(data_args, "eval_dataset", []) or [])
    root = data_cache_dir(data_args) / "prepared"
    extra: dict[str, Any] = {"seed": seed}
    if stage == "mm-sft":
        extra.update(_media_key(data_args, names + eval_names, image_processor, model_config))
    digest = C.key(
        sources=_source_ids(data_args, names) + ["--eval--"] + _source_ids(data_args, eval_names),
        data_args=data_args,
        tokenizer=tokenizer,
        template=template,
        stage=stage,
        extra=extra,
    )
    hit = None if getattr(data_args, "overwrite_cache", False) else C.lookup(root, digest)
    if hit is not None:
        meta = json.loads((hit / C.META).read_text(encoding="utf-8"))
        train = datasets.load_from_disk(str(hit / "train"))
        evald = datasets.load_from_disk(str(hit / "eval")) if (hit / "eval").is_dir() else None
        stats = dict(meta["stats"], seconds=round(time.perf_counter() - start, 3))
        result = PreparedData(train, evald, stats, str(hit), True)
        if not quiet:
            announce(
                Report(**{k: stats[k] for k in ("read", "kept", "rejected", "truncated", "dropped")}),
                f"prepared data (cached, {hit})",
            )
        return result

    settings = dict(
        train_on=getattr(data_args, "train_on", "assistant"),
        cutoff_len=getattr(data_args, "cutoff_len", 1024),
        truncation=getattr(data_args, "truncation", "right"),
    )
    if stage == "mm-sft":
        from openmind.data.multimodal import MediaEncoder

        encoder: Encoder = MediaEncoder(tokenizer, template, image_processor, model_config or {}, **settings)
    else:
        encoder = Encoder(tokenizer, template, stage=stage, **settings)
    if stage == "pt" and getattr(data_args, "packing", False):
        encoder.cutoff_len = 1 << 62  # long documents are split into chunks below, nothing is cut away
    encoder.warm()  # once here, not once per worker process
    loaded = load(data_args, stage=stage, encoder=encoder)
    report = loaded.report
    if eval_names:
        eval_loaded = load(data_args, stage=stage, names=eval_names, encoder=encoder)
        report.merge(eval_loaded.report)
        train_rows, eval_rows, eval_sources = loaded.dataset, eval_loaded.dataset, eval_loaded.sources
    else:
        train_rows, eval_rows = _split(loaded.dataset, float(getattr(data_args, "val_size", 0) or 0), seed)
        eval_sources = loaded.sources
    train, lengths = _finalize(train_rows, loaded.sources, encoder, report)
    evald = None
    if eval_rows is not None:
        evald, _ = _finalize(eval_rows, eval_sources, encoder, report)
    if report.kept <= 0 or len(train) == 0:
        raise D_EMPTY.error(f"no samples left to train on: {report.summary()}")

    from openmind.data import packing as P

    cutoff = int(getattr(data_args, "cutoff_len", 1024))
    stats: dict[str, Any] = {k: v for k, v in report.to_dict().items() if k != "problems"}
    stats["stage"] = stage
    if stage in ("sft", "pt", "mm-sft"):
        if getattr(data_args, "packing", False):
            if stage == "pt":
                train = P.split_long(train, cutoff)
                lengths = P.lengths(train)
            train = P.pack(train, cutoff)
            packed_lengths = P.lengths(train)
            stats.update(P.padding_stats(lengths, cutoff, packed_lengths))
        else:
            stats.update(P.padding_stats(lengths, cutoff))
    stats["train_rows"] = len(train)
    stats["eval_rows"] = len(evald) if evald is not None else 0
    stats["build_seconds"] = round(time.perf_counter() - start, 3)
    meta = {"stats": stats, "stage": stage, "datasets": names, "eval_datasets": eval_names, "version": C.__version__}
    folder = C.store(root, digest, {"train": train, "eval": evald}, meta)
    result = PreparedData(
        datasets.load_from_disk(str(folder / "train")),
        datasets.load_from_disk(str(folder / "eval")) if evald is not None else None,
        stats,
        str(folder),
        False,
        report,
    )
    if not quiet:
        announce(report, "prepared data")
    return result
