"""Load datasets into the standard format, checking every row.

:func:`load` reads each source (files, folders, registered names, hub ids), converts its rows
to the standard format of the stage and checks them. Bad rows are reported with file, line (or
record index), field and reason. ``on_error="fail"`` raises on the first bad row;
``on_error="skip"`` keeps going, counts them and writes them (with their problems) to a side
file. Nothing is dropped silently: :class:`Report` keeps the totals.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmind.data import catalog, readers
from openmind.data.converters import Converter, Mapping, detect
from openmind.data.errors import D_BAD_LINE, D_BAD_ROW, D_COLUMN, D_EMPTY, D_FORMAT, D_STAGE
from openmind.data.formats import MEDIA, PAIR_STAGES, Problem, check_row, features, stage_formats
from openmind.data.workers import can_fork, map_batches


@dataclass
class RowProblem:
    """A problem located in a source file."""

    source: str
    row: int
    line: int | None
    field: str
    reason: str
    #: error code to raise with when this problem stops a run (default: OM-D001/OM-D002)
    code: str = ""

    @property
    def location(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else f"{self.source} record {self.row}"
        return f"{where} field {self.field!r}" if self.field else where

    def __str__(self) -> str:
        return f"{self.location}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "line": self.line, "row": self.row, "field": self.field, "reason": self.reason}


@dataclass
class Report:
    """Totals of a load/prepare run. ``rejected`` rows are listed in :attr:`problems`."""

    read: int = 0
    kept: int = 0
    rejected: int = 0
    truncated: int = 0
    dropped: int = 0
    problems: list[RowProblem] = field(default_factory=list)
    rejects_file: str | None = None

    def summary(self) -> str:
        text = (
            f"read {self.read}, kept {self.kept}, rejected {self.rejected}, truncated {self.truncated}"
            f", dropped (too long) {self.dropped}"
        )
        if self.rejects_file:
            text += f"; rejected rows written to {self.rejects_file}"
        return text

    def merge(self, other: Report) -> None:
        self.read += other.read
        self.kept += other.kept
        self.rejected += other.rejected
        self.truncated += other.truncated
        self.dropped += other.dropped
        self.problems += other.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "read": self.read,
            "kept": self.kept,
            "rejected": self.rejected,
            "truncated": self.truncated,
            "dropped": self.dropped,
            "rejects_file": self.rejects_file,
            "problems": [p.to_dict() for p in self.problems],
        }


@dataclass
class Loaded:
    dataset: Any
    report: Report
    sources: list[readers.Source]


def data_cache_dir(data_args: Any) -> Path:
    from openmind.core.paths import cache_root

    return Path(getattr(data_args, "data_cache_dir", None) or cache_root() / "data")


@contextlib.contextmanager
def no_datasets_cache():
    """``datasets`` map results go to temporary files (openmind keeps its own cache)."""
    import datasets

    was = datasets.is_caching_enabled()
    datasets.disable_caching()
    try:
        yield
    finally:
        if was:
            datasets.enable_caching()


@contextlib.contextmanager
def _located(path: str):
    """Failures of ``datasets`` itself on a file's values (a struct key it cannot decode, ...)
    become OM-D002 naming the file; openmind's own coded errors pass through."""
    from openmind.core.errors import OpenMindError

    try:
        yield
    except OpenMindError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        raise D_BAD_LINE.error(
            f"cannot read the rows of {Path(path).name}: {type(exc).__name__}: {exc}",
            location=path,
            hint="A value of an unusual shape (odd keys, mixed types) is in the file; "
            "`openmind data validate FILE --on-error skip` lists the rows openmind can read.",
        ) from None


@contextlib.contextmanager
def _gc_paused():
    """The cyclic garbage collector off while one batch is converted (and tokenised): a batch
    allocates ~100k short-lived containers (messages, token ids, labels) that reference counting
    frees; the collections their allocation triggers would scan them, and every long-lived object
    of the process, for nothing (~7% of the preparation time)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _convert_batch(batch: dict[str, list], indices: list[int], **kwargs: Any) -> Any:
    """Convert, check (and with an ``encoder``, tokenise) one batch of source rows."""
    with _gc_paused():
        return _convert_rows(batch, indices, **kwargs)


def _convert_rows(
    batch: dict[str, list],
    indices: list[int],
    *,
    converter: Converter,
    target: str,
    file_index: int,
    bad_rows: dict[int, str],
    encoder: Any = None,
    media_where: tuple[str, ...] = (),
    media_limits: Any = None,
) -> Any:
    keys = list(batch)
    if keys == ["_json"]:
        rows = [json.loads(s) for s in batch["_json"]]
    else:
        rows = [dict(zip(keys, values)) for values in zip(*(batch[k] for k in keys))]
    cols = [c for c in features(target) if c not in ("_file", "_row")]
    out: dict[str, list] = {c: [] for c in cols}
    out["_file"], out["_row"], out["_problems"] = [], [], []
    for row, index in zip(rows, indices):
        if index in bad_rows:
            std, problems = {}, [Problem("", bad_rows[index])]
        else:
            std, problems = converter(row)
            if not problems:
                problems = check_row(target, std)
            if not problems and target == "multimodal-sft":
                from openmind.data.media import MediaLimits, check_files

                problems, resolved = check_files(std, media_where, media_limits or MediaLimits())
                if encoder is not None:
                    std.update(resolved)  # the encoder opens the files where the check found them
        for c in cols:
            value = std.get(c) if not problems else None
            if value is None and c in ("messages", *MEDIA):
                value = []
            out[c].append(value)
        out["_file"].append(file_index)
        out["_row"].append(index)
        out["_problems"].append(json.dumps([p.to_dict() for p in problems]) if problems else None)
    if encoder is not None:
        return _encode_converted(out, encoder)
    return out


def _encode_converted(out: dict[str, list], encoder: Any):
    """Tokenise the rows that passed the checks, in the same pass (``prepare``): no standard-format
    copy of the data is written and read back."""
    from openmind.data.encoding import OK, to_table

    good = [i for i, p in enumerate(out["_problems"]) if p is None]
    batch = {k: [v[i] for i in good] for k, v in out.items() if k != "_problems"}
    encoded = encoder(batch) if good else None
    token_cols = [k for k in encoded if not k.startswith("_")] if encoded else encoder.output_columns()
    n = len(out["_problems"])
    # rows that failed the checks get empty values (dropped later): [] for token lists, None for
    # the scalar columns of some stages (kto's label, grpo's answer)
    result: dict[str, list] = {c: [None if c in ("label", "answer") else [] for _ in range(n)] for c in token_cols}
    result["_status"] = [OK] * n
    result["_length"] = [0] * n
    result["_problems"] = list(out["_problems"])
    for k, i in enumerate(good):
        for c in token_cols:
            result[c][i] = encoded[c][k]
        result["_status"][i] = encoded["_status"][k]
        result["_length"][i] = encoded["_length"][k]
        if encoded["_problems"][k] is not None:
            result["_problems"][i] = encoded["_problems"][k]
    result["_file"] = out["_file"]
    result["_row"] = out["_row"]
    return to_table(result)


def _formatting(entry: catalog.DatasetEntry, source: readers.Source, data_args: Any, stage: str) -> Mapping:
    fmt = entry.formatting
    if fmt in ("auto", None):
        fmt = getattr(data_args, "formatting", "auto")
    columns = source.dataset.column_names
    if columns == ["_json"]:
        sample = next((json.loads(s) for s in source.dataset["_json"][:50] if s != "{}"), {})
        columns = list(sample)
    ranking = entry.ranking or stage in PAIR_STAGES
    if fmt in ("auto", None):
        fmt, detected_ranking = detect(columns)
        ranking = ranking or detected_ranking
        if not fmt:
            raise D_FORMAT.error(
                f"cannot tell the format of {source.path} from its columns ({', '.join(columns) or 'none'})",
                location=source.path,
            )
    columns_map = dict(entry.columns)
    if not columns_map:  # no mapping given: use the optional columns the file has
        optional = {"alpaca": ("system", "history", "tools"), "sharegpt": ("system", "tools")}.get(fmt, ("tools",))
        columns_map = {c: c for c in optional if c in columns}
    return Mapping(fmt, columns_map, dict(entry.tags), ranking)


def _target(stage: str, mapping: Mapping, source: readers.Source) -> str:
    formats = stage_formats()
    if stage not in formats:
        raise D_STAGE.error(f"unknown stage {stage!r}; expected one of {', '.join(formats)}")
    target = formats[stage]
    if target in ("preference", "pairwise") and mapping.formatting == "pretrain":
        raise D_STAGE.error(
            f"{source.path} holds plain text; stage {stage!r} needs chosen/rejected pairs", location=source.path
        )
    if target in ("unpaired", "prompts") and mapping.formatting == "pretrain":
        what = "conversations with a kto_tag (label)" if target == "unpaired" else "prompts (conversations)"
        raise D_STAGE.error(f"{source.path} holds plain text; stage {stage!r} needs {what}", location=source.path)
    if target == "unpaired" and mapping.ranking:
        raise D_STAGE.error(
            f"{source.path} holds chosen/rejected pairs; stage 'kto' needs single answers marked desirable or not",
            location=source.path,
            hint="Write one row per answer with a boolean kto_tag column (LLaMA-Factory's layout: "
            '"columns": {"messages": "messages", "kto_tag": "label"}), or train the pairs with dpo/orpo/simpo.',
        )
    if target == "sft" and mapping.formatting == "pretrain":
        raise D_STAGE.error(
            f"{source.path} holds plain text; stage 'sft' needs conversations (use --stage pt)", location=source.path
        )
    if target == "sft":
        cols = source.dataset.column_names
        media = [m for m in MEDIA if (mapping.column(m) or m) in cols or (m not in mapping.columns and m[:-1] in cols)]
        if media:
            raise D_STAGE.error(
                f"{source.path} has media columns ({', '.join(media)}): it is multimodal data",
                location=source.path,
                hint="Train it with the mm-sft task (openmind-mm), or drop the media columns.",
            )
    return target


def _check_columns(converter: Converter, source: readers.Source) -> None:
    columns = source.dataset.column_names
    if columns == ["_json"]:
        return  # mixed records: checked row by row
    for key, col in converter.required_columns():
        if col not in columns:
            mapped = key in converter.mapping.columns
            raise D_COLUMN.error(
                f"{Path(source.path).name} has no column {col!r} ({'mapped' if mapped else 'needed'} for {key!r} "
                f"by the {converter.mapping.formatting} format); its columns are {', '.join(columns)}",
                location=source.path,
            )


def load_entry(
    entry: catalog.DatasetEntry, data_args: Any, stage: str, file_offset: int = 0, encoder: Any = None
) -> Loaded:
    """Read, convert and check one dataset entry (all its files); with an ``encoder`` the rows are
    tokenised in the same pass (the result has the encoder's columns instead of the standard ones)."""
    import datasets

    cache = str(data_cache_dir(data_args) / "raw")
    workers = max(1, int(getattr(data_args, "preprocessing_num_workers", 1) or 1))
    max_samples = getattr(data_args, "max_samples", None) or entry.num_samples
    sources: list[readers.Source] = []
    if entry.load_from == "file":
        for path in readers.expand(entry.paths, where=entry.defined_in):
            sources.append(readers.read_file(path, cache_dir=cache))
    else:
        ds = readers.read_hub(
            entry.load_from, entry.hub_id, subset=entry.subset, split=entry.split, folder=entry.folder, cache_dir=cache
        )
        sources.append(readers.Source(f"{entry.load_from}::{entry.hub_id}", ds, lines=[]))
    parts = []
    report = Report()
    for i, source in enumerate(sources):
        raw = source.dataset
        if max_samples is not None:
            remaining = max_samples - report.read
            if remaining <= 0:
                break
            if len(raw) > remaining:
                raw = raw.select(range(remaining))
        mapping = _formatting(entry, source, data_args, stage)
        target = _target(stage, mapping, source)
        converter = Converter(mapping, target)
        _check_columns(converter, source)
        bad_rows = {b.row: b.reason for b in source.bad}
        fn_kwargs = {
            "converter": converter,
            "target": target,
            "file_index": file_offset + i,
            "bad_rows": bad_rows,
            "encoder": encoder,
        }
        if target == "multimodal-sft":
            from openmind.data import media

            fn_kwargs["media_where"] = media.bases(source.path, data_args)
            fn_kwargs["media_limits"] = media.MediaLimits.of(data_args)
        out_features = (
            None
            if encoder is not None
            else datasets.Features({**features(target), "_problems": datasets.Value("string")})
        )
        parallel = workers > 1 and len(raw) >= 2 * workers
        with _located(source.path):
            if parallel and can_fork():
                # forked workers over fixed chunks: no tokenizer pickled, no table copied, same output for any N
                converted = map_batches(
                    raw, _convert_batch, fn_kwargs=fn_kwargs, workers=workers, features=out_features
                )
            else:
                with no_datasets_cache():
                    converted = raw.map(
                        _convert_batch,
                        batched=True,
                        with_indices=True,
                        remove_columns=raw.column_names,
                        features=out_features,
                        fn_kwargs=fn_kwargs,
                        new_fingerprint=uuid.uuid4().hex,
                        num_proc=workers if parallel else None,
                        desc=f"Checking {Path(source.path).name}",
                    )
        report.read += len(converted)
        parts.append((source, converted))
    return _collect(parts, report, sources, data_args)


def _collect(parts, report: Report, sources, data_args) -> Loaded:
    import datasets
    import numpy as np
    import pyarrow.compute as pc

    kept_parts = []
    for source, ds in parts:
        valid = pc.is_valid(ds.data.column("_problems")).to_numpy(zero_copy_only=False)
        bad_idx = np.flatnonzero(valid)
        if len(bad_idx):
            bad = ds.select(bad_idx).select_columns(["_row", "_problems"]).to_dict()
            for row, problems in zip(bad["_row"], bad["_problems"]):
                line = source.line_of(row)
                for p in json.loads(problems):
                    report.problems.append(
                        RowProblem(source.path, row, line, p["field"], p["reason"], p.get("code", ""))
                    )
            report.rejected += len(bad_idx)
            ds = ds.select(np.flatnonzero(~valid))
        kept_parts.append(ds.remove_columns("_problems"))
    report.kept = report.read - report.rejected
    dataset = (
        kept_parts[0] if len(kept_parts) == 1 else datasets.concatenate_datasets(kept_parts) if kept_parts else None
    )
    return Loaded(dataset, report, sources)


def write_rejects(loaded: Loaded, path: str | os.PathLike) -> str:
    """Write each rejected row (its source, line, problems and original record) to a JSON Lines file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    by_row: dict[tuple[str, int], list[RowProblem]] = {}
    for p in loaded.report.problems:
        by_row.setdefault((p.source, p.row), []).append(p)
    sources = {s.path: s for s in loaded.sources}
    with open(path, "w", encoding="utf-8") as f:
        for (src, row), problems in by_row.items():
            source = sources.get(src)
            record: Any = None
            if source is not None:
                bad = next((b for b in source.bad if b.row == row), None)
                if bad is not None:
                    record = bad.text
                else:
                    record = source.dataset[row]
                    if list(record) == ["_json"]:
                        record = json.loads(record["_json"])
            item = {
                "source": src,
                "line": problems[0].line,
                "row": row,
                "problems": [{"field": p.field, "reason": p.reason} for p in problems],
                "record": record,
            }
            f.write(json.dumps(item, ensure_ascii=False, default=str) + "\n")
    return str(path)


def raise_first(report: Report) -> None:
    """``on_error=fail``: raise the first problem, saying how many more there are."""
    if not report.problems:
        return
    first = report.problems[0]
    more = report.rejected - 1
    tail = f" ({more} more bad row{'s' if more != 1 else ''}; `openmind data validate` lists them all)" if more else ""
    from openmind.core.errors import CODES

    code = CODES.get(first.code) or (D_BAD_LINE if not first.field else D_BAD_ROW)
    raise code.error(f"{first.reason}{tail}", location=first.location)


def load(
    data_args: Any,
    *,
    stage: str = "sft",
    names: list[str] | None = None,
    rejects: str | None = None,
    keep_rejects: bool = True,
    allow_empty: bool = False,
    encoder: Any = None,
) -> Loaded:
    """Load ``names`` (default ``data_args.dataset``) for ``stage``, honouring ``on_error``.

    With ``on_error="skip"`` rejected rows go to ``rejects`` (default: under the data cache)
    unless ``keep_rejects`` is false; ``allow_empty`` returns ``dataset=None`` instead of raising
    OM-D008 when no row is usable (``openmind data validate`` still reports then).
    """
    names = list(names if names is not None else getattr(data_args, "dataset", []) or [])
    if not names:
        from openmind.core.errors import A_MISSING

        raise A_MISSING.error("no dataset given", hint="Pass --dataset FILE|NAME (several: --dataset a,b).")
    dataset_dir = getattr(data_args, "dataset_dir", None)
    formatting = getattr(data_args, "formatting", "auto")
    total = Report()
    parts = []
    sources: list[readers.Source] = []
    for name in names:
        entry = catalog.resolve(name, dataset_dir, formatting)
        loaded = load_entry(entry, data_args, stage, file_offset=len(sources), encoder=encoder)
        total.merge(loaded.report)
        sources += loaded.sources
        if loaded.dataset is not None:
            parts.append(loaded.dataset)
    result = Loaded(None, total, sources)
    if getattr(data_args, "on_error", "fail") == "fail":
        raise_first(total)
    elif total.rejected and keep_rejects:
        stem = "-".join(Path(n).stem for n in names)[:80] or "data"
        target = rejects or str(data_cache_dir(data_args) / "rejects" / f"{stem}.rejected.jsonl")
        total.rejects_file = write_rejects(result, target)
    import datasets

    parts = [p for p in parts if len(p)]
    if not parts:
        if allow_empty:
            return result
        raise D_EMPTY.error(f"no usable rows in {', '.join(names)}: {total.summary()}", location=", ".join(names))
    result.dataset = parts[0] if len(parts) == 1 else datasets.concatenate_datasets(parts)
    return result


def announce(report: Report, what: str = "data") -> None:
    """Print the totals (always: nothing is dropped silently)."""
    if os.environ.get("OPENMIND_QUIET") not in (None, "", "0"):
        return
    print(f"[openmind.data] {what}: {report.summary()}", file=sys.stderr)
