"""Reading data files into Arrow through ``datasets`` (memory-mapped, never a full Python load).

JSON / JSON Lines, CSV, text (``.txt``: one ``text`` row per line, LLaMA-Factory's
``wiki_demo.txt``), Parquet, Arrow files, ``save_to_disk`` folders and folders of files.

Text-based files are checked first in one streaming pass (:func:`precheck`; memory bounded by
the longest line plus a 1 MiB read buffer, never a whole-file copy): bytes that are not UTF-8
(GBK, latin-1 files) are OM-D013 with the file and line; JSON nested deeper than
:data:`MAX_DEPTH` is OM-D002 at its line (the Arrow reader would crash the process on it); a CSV
quote that swallows the following lines is OM-D002 at the line where the quote opens.
When the fast Arrow reader refuses a JSON file (a malformed line, a value whose type changes
between rows), the file is scanned line by line so every bad line is reported with its number,
and the good records still load.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmind.data.errors import D_BAD_LINE, D_EMPTY, D_ENCODING, D_FILE_TYPE, D_HUB, D_NOT_FOUND

BUILDERS = {
    ".json": "json",
    ".jsonl": "json",
    ".csv": "csv",
    ".txt": "text",
    ".parquet": "parquet",
    ".arrow": "arrow",
}
#: deepest JSON nesting accepted (chat rows need 4-6 levels; Arrow and Python's json crash or
#: raise RecursionError around 1000)
MAX_DEPTH = 200
_CHUNK = 1 << 20


@dataclass
class BadLine:
    """A record that could not be parsed: 1-based ``line``, the raw ``text`` and the ``reason``."""

    line: int
    text: str
    reason: str
    #: record index in the file (the record is kept as an empty placeholder so indices hold)
    row: int = -1


@dataclass
class Source:
    """One file read into a ``datasets.Dataset``; ``bad`` lists records that could not be parsed."""

    path: str
    dataset: Any
    bad: list[BadLine] = field(default_factory=list)
    #: record index -> 1-based line, for files read line by line (None: compute lazily)
    lines: list[int] | None = None

    def line_of(self, row: int) -> int | None:
        """The 1-based line of record ``row`` (JSON Lines and CSV), ``None`` where lines do not apply."""
        if self.lines is None:
            self.lines = record_lines(self.path)
        if self.lines and 0 <= row < len(self.lines):
            return self.lines[row]
        return None

    def where(self, row: int) -> str:
        line = self.line_of(row)
        return f"{self.path}:{line}" if line else f"{self.path} record {row}"


def record_lines(path: str) -> list[int]:
    """Line numbers where the records of a JSON Lines or CSV file start (empty for other files)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".txt":
        out = []
        with open(path, "rb") as f:
            for number, raw in enumerate(f, 1):
                if raw.strip():
                    out.append(number)
        return out
    if suffix == ".csv":
        import csv

        out = []
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            reader = csv.reader(f)
            start = 1
            for i, _ in enumerate(reader):
                if i > 0:
                    out.append(start)
                start = reader.line_num + 1
        return out
    if suffix not in (".json", ".jsonl") or _is_json_array(path):
        return []
    out = []
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            if raw.strip():
                out.append(number)
    return out


def _is_json_array(path: str) -> bool:
    with open(path, "rb") as f:
        head = f.read(4096).lstrip()
    return head.startswith(b"[")


def expand(paths: list[str], *, where: str = "") -> list[str]:
    """Files behind ``paths`` (folders are expanded, sorted); OM-D003/OM-D004 on bad paths."""
    files: list[str] = []
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise D_NOT_FOUND.error(f"data path {str(path)!r} does not exist", location=where or None)
        if path.is_dir():
            if (path / "state.json").is_file() or (path / "dataset_dict.json").is_file():
                files.append(str(path))  # a save_to_disk folder
                continue
            found = sorted(str(f) for f in path.rglob("*") if f.is_file() and f.suffix.lower() in BUILDERS)
            if not found:
                raise D_NOT_FOUND.error(
                    f"folder {str(path)!r} holds no data files ({', '.join(sorted(BUILDERS))})",
                    location=where or None,
                )
            kinds = {BUILDERS[Path(f).suffix.lower()] for f in found}
            if len(kinds) > 1:
                raise D_FILE_TYPE.error(
                    f"folder {str(path)!r} mixes file types ({', '.join(sorted(kinds))}); keep one type per folder",
                    location=str(path),
                )
            files += found
        else:
            if path.suffix.lower() not in BUILDERS:
                raise D_FILE_TYPE.error(
                    f"{path.name}: unsupported file type {path.suffix or '(none)'!r}", location=str(path)
                )
            files.append(str(path))
    return files


def _quiet():
    import datasets

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()


class _MissingToThisThread:
    """A ``sys.meta_path`` finder that reports ``names`` as missing to imports made by the thread
    that created it; other threads import them as usual."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names, self.thread = names, threading.get_ident()

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name in self.names and threading.get_ident() == self.thread:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


#: packaged ``datasets`` builders whose module :func:`_patch_for_streaming` has prepared
_PATCHED: set[str] = set()
#: what datasets' streaming patcher imports only to look for it among a builder module's globals
#: (``scipy.io.loadmat``), which none of the builders in :data:`BUILDERS` holds
_UNUSED_BY_BUILDERS = frozenset({"scipy.io"})


def _patch_for_streaming(builder: str, path: str, cache_dir: str | None) -> None:
    """Let ``datasets`` patch the ``builder`` module for streaming without importing scipy.io.

    The first builder a process creates for a packaged module patches that module's globals for
    streaming (``datasets.streaming.extend_module_for_streaming``: ``open``, ``os.path``, reader
    functions). To find them it imports every module it could patch, ``scipy.io`` included, and
    looks for it among the module's globals: json, csv, text, parquet and arrow never hold it, and
    when scipy is installed but not yet imported that import costs 0.2-0.4 s (scipy.sparse, and
    numpy.f2py through scipy's array-API layer), in every process that reads a data file before
    anything else imports scipy (``openmind data prepare``, each preparation). The first builder of
    each kind is created here with scipy.io reported missing to this thread, so the patcher skips
    it; everything else it patches is patched as before, and scipy.io imports normally afterwards.
    """
    if builder in _PATCHED or not _UNUSED_BY_BUILDERS - sys.modules.keys():
        return
    import datasets

    finder = _MissingToThisThread(_UNUSED_BY_BUILDERS)
    sys.meta_path.insert(0, finder)
    try:
        datasets.load_dataset_builder(builder, data_files=path, cache_dir=cache_dir)
    except Exception:  # noqa: BLE001 - load_dataset below reports the problem (or reads the file)
        return
    finally:
        sys.meta_path.remove(finder)
    _PATCHED.add(builder)


def read_file(path: str, *, cache_dir: str | None = None) -> Source:
    """Read one file (or ``save_to_disk`` folder) into a :class:`Source`."""
    import datasets

    _quiet()
    if os.path.isdir(path):
        loaded = datasets.load_from_disk(path)
        if isinstance(loaded, datasets.DatasetDict):
            loaded = loaded["train"] if "train" in loaded else next(iter(loaded.values()))
        return Source(path, loaded, lines=[])
    builder = BUILDERS[Path(path).suffix.lower()]
    if builder in ("json", "csv", "text") and not precheck(path, builder):
        # lines that are not JSON objects: Arrow's JSON reader can crash the process on them
        # (a line holding just `null`), the line-by-line reader reports each one
        return _read_json_slowly(path, None)
    level = datasets.logging.get_verbosity()
    datasets.logging.set_verbosity(datasets.logging.CRITICAL)  # failures are located and reported below
    try:
        _patch_for_streaming(builder, path, cache_dir)
        ds = datasets.load_dataset(builder, data_files=path, split="train", cache_dir=cache_dir)
        if builder == "text":  # blank lines are not rows (as for .jsonl)
            ds = ds.filter(lambda r: bool(r["text"].strip()))
        empty = builder == "text" and len(ds) == 0
        if not empty:
            return Source(path, ds)
    except Exception as exc:  # noqa: BLE001 - the fallback below locates the problem
        if builder != "json":
            raise D_BAD_LINE.error(f"cannot read {path}: {_cause(exc)}", location=path) from None
        return _read_json_slowly(path, exc)
    finally:
        datasets.logging.set_verbosity(level)
    raise D_EMPTY.error(f"{Path(path).name} holds no text (only blank lines)", location=path)


def precheck(path: str, builder: str) -> bool:
    """One streaming pass over a text-based data file: UTF-8, JSON Lines depth, CSV quotes.

    :returns: False for a JSON Lines file with a line that is not a JSON object (read it line by line).
    """
    if builder == "csv":
        _check_csv(path)
        return True
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as err:
                # the decoder may hold up to 3 bytes of the previous chunk: count lines in this one
                _encoding_error(path, line + chunk.count(b"\n", 0, max(err.start, 0)), err)
            line += chunk.count(b"\n")
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as err:
            _encoding_error(path, line, err)
    if builder == "json" and not _is_json_array(path):
        return _check_json_lines(path)
    return True


def _check_json_lines(path: str) -> bool:
    """OM-D002 at the first line nested deeper than MAX_DEPTH (Arrow's JSON reader crashes on it);
    False when some line is not a JSON object.

    Lines with fewer than MAX_DEPTH brackets cannot be that deep (counted at C speed); only the
    others are scanned character by character. Memory: one line at a time.
    """
    objects = True
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            head = raw.lstrip()
            if head and not head.startswith(b"{"):
                objects = False
            if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
                continue
            depth, in_string, escaped = 0, False, False
            for ch in raw:
                if in_string:
                    if escaped:
                        escaped = False
                    elif ch == 0x5C:  # backslash
                        escaped = True
                    elif ch == 0x22:
                        in_string = False
                elif ch == 0x22:
                    in_string = True
                elif ch in (0x5B, 0x7B):
                    depth += 1
                    if depth > MAX_DEPTH:
                        raise _too_deep(path, number)
                elif ch in (0x5D, 0x7D):
                    depth -= 1
    return objects


def _too_deep(path: str, line: int | None):
    return D_BAD_LINE.error(
        f"{Path(path).name}: JSON nested deeper than {MAX_DEPTH} levels",
        location=f"{path}:{line}" if line else path,
        hint="Rows hold flat records or chat messages; nesting this deep is not data openmind can use.",
    )


def _encoding_error(path: str, line: int, err: UnicodeDecodeError):
    pair = err.object[err.start : err.start + 2]
    # a GBK character is a lead byte 0x81-0xFE and a trail byte 0x40-0xFE; latin-1 accents stand alone
    guess = "GBK/GB18030" if len(pair) == 2 and 0x81 <= pair[0] <= 0xFE and 0x40 <= pair[1] <= 0xFE else "latin-1"
    raise D_ENCODING.error(
        f"{Path(path).name} is not UTF-8: byte 0x{err.object[err.start]:02x} on line {line} "
        f"(the file may be {guess} or another legacy encoding)",
        location=f"{path}:{line}",
        hint=f"Convert the file to UTF-8, e.g. `iconv -f GB18030 -t UTF-8 {Path(path).name} > fixed{Path(path).suffix}` "
        "(use -f LATIN1 for Western European files).",
    ) from None


def _check_csv(path: str) -> None:
    """Every CSV record has the header's field count; a quote that runs past its line is located."""
    import csv

    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f, strict=True)
            width = None
            start = 1
            try:
                for row in reader:
                    end = reader.line_num
                    if width is None:
                        width = len(row)
                    elif row and len(row) != width:
                        spans = (
                            f"; a quote opened on line {start} runs to line {end}, merging those lines"
                            if end > start
                            else ""
                        )
                        raise D_BAD_LINE.error(
                            f"{Path(path).name}: the record on line {start} has {len(row)} fields, the header has {width}{spans}",
                            location=f"{path}:{start}",
                            hint='Close the quote (a literal quote inside a quoted field is written twice: "").',
                        )
                    start = end + 1
            except csv.Error as err:
                raise D_BAD_LINE.error(
                    f"{Path(path).name}: {err} in the record that starts on line {start} (an unclosed quote?)",
                    location=f"{path}:{start}",
                    hint='Close the quote (a literal quote inside a quoted field is written twice: "").',
                ) from None
    except UnicodeDecodeError:
        precheck(path, "text")  # locates the bad byte
        raise


def _cause(exc: BaseException) -> str:
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return f"{type(exc).__name__}: {exc}"


def _read_json_slowly(path: str, exc: BaseException | None) -> Source:
    """Line-by-line JSON reading that records each bad line instead of failing the file."""
    if _is_json_array(path):
        try:
            with open(path, encoding="utf-8") as f:
                records = json.load(f)
        except RecursionError:
            raise _too_deep(path, None) from None
        except json.JSONDecodeError as err:
            raise D_BAD_LINE.error(
                f"{Path(path).name} is not valid JSON: {err.msg} (column {err.colno})",
                location=f"{path}:{err.lineno}",
                hint="A .json file holds one JSON array of objects (or one object per line); fix the syntax.",
            ) from None
        if not isinstance(records, list):
            raise D_BAD_LINE.error(f"{Path(path).name} must hold a JSON array of objects", location=path)
        bad = [
            BadLine(0, json.dumps(r)[:200], f"record {i} is not a JSON object", i)
            for i, r in enumerate(records)
            if not isinstance(r, dict)
        ]
        good = [r if isinstance(r, dict) else {} for r in records]
        return Source(path, _from_records(good), bad=bad, lines=[])
    good: list[dict] = []
    lines: list[int] = []
    bad: list[BadLine] = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                record = json.loads(text.rstrip())
            except RecursionError:
                raise _too_deep(path, number) from None
            except json.JSONDecodeError as err:
                reason = f"invalid JSON: {err.msg} (column {err.colno})"
                bad.append(BadLine(number, text.rstrip("\n"), reason, len(good)))
                good.append({})
                lines.append(number)
                continue
            if not isinstance(record, dict):
                reason = f"a line must hold a JSON object, not {type(record).__name__}"
                bad.append(BadLine(number, text.rstrip("\n"), reason, len(good)))
                record = {}
            good.append(record)
            lines.append(number)
    return Source(path, _from_records(good), bad=bad, lines=lines)


def _from_records(records: list[dict]):
    """Records of mixed shapes -> a Dataset of one column ``_json`` (parsed again by the converter)."""
    import datasets

    return datasets.Dataset.from_dict({"_json": [json.dumps(r, ensure_ascii=False) for r in records]})


def read_hub(kind: str, hub_id: str, *, subset: str | None, split: str, folder: str | None, cache_dir: str | None):
    """A hub dataset through its own client (``datasets`` for Hugging Face); Modelers (``om_hub``,
    openMind 1.0's hub) through openmind's hub layer."""
    from openmind.core.hub.api import offline

    if kind == "om_hub":  # the hub layer honours OPENMIND_OFFLINE itself: a cached copy, else OM-H011 at once
        return read_om_hub(hub_id, subset=subset, split=split, folder=folder, cache_dir=cache_dir)
    if offline():
        raise D_HUB.error(
            f"{hub_id}: OPENMIND_OFFLINE=1 is set, so hub datasets are not fetched",
            hint="Download the files while online and register them with file_name, or unset OPENMIND_OFFLINE.",
        )
    _quiet()
    if kind == "hf_hub":
        import datasets

        try:
            return datasets.load_dataset(hub_id, name=subset, split=split, data_dir=folder, cache_dir=cache_dir)
        except Exception as exc:  # noqa: BLE001
            raise D_HUB.error(f"cannot load hf::{hub_id}: {_cause(exc)}") from None
    if kind == "ms_hub":
        try:
            from modelscope import MsDataset
        except ImportError:
            raise D_HUB.error(f"ms::{hub_id} needs the ModelScope client", hint="pip install modelscope") from None
        try:
            return MsDataset.load(hub_id, subset_name=subset, split=split, data_dir=folder).to_hf_dataset()
        except Exception as exc:  # noqa: BLE001
            raise D_HUB.error(f"cannot load ms::{hub_id}: {_cause(exc)}") from None
    raise D_HUB.error(
        f"{kind} datasets ({hub_id}) are not read directly yet",
        hint="Download the files (`openmind pull`) and register them with file_name.",
    )


def read_om_hub(hub_id: str, *, subset: str | None, split: str, folder: str | None, cache_dir: str | None):
    """A Modelers dataset repository as openMind 1.0 read it (``OmDataset.load_dataset``): the
    repository is pulled through openmind's hub layer (shared cache, offline mode, retries), then
    its data files are read with ``datasets.load_dataset(folder, name=subset, split=split,
    data_dir=folder)`` (no loading script is run)."""
    import datasets

    from openmind.core.hub import pull

    local = pull(f"om::{hub_id}")
    try:
        return datasets.load_dataset(str(local), name=subset, split=split, data_dir=folder, cache_dir=cache_dir)
    except Exception as exc:  # noqa: BLE001
        raise D_HUB.error(f"cannot read om::{hub_id} (pulled to {local}): {_cause(exc)}", location=str(local)) from None
