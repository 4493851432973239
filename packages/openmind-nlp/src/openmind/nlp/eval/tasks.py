"""Evaluation tasks from local files: the MMLU / C-Eval / CMMLU folder layouts, JSON/JSONL/CSV
files and task YAMLs (generation tasks with exact-match / regex / ROUGE scoring).

Layouts (``SUBJECT`` is the file name without the split suffix):

========  ==========================================  ==========================================
layout    files                                       columns
========  ==========================================  ==========================================
MMLU      ``[data/]{dev,val,test}/SUBJECT_{split}.csv``  no header: question, A, B, C, D, answer
C-Eval    ``{dev,val,test}/SUBJECT_{split}.csv``        header ``id,question,A,B,C,D,answer[,explanation]``
                                                      (the public test split has no answers: val is used)
CMMLU     ``{dev,test}/SUBJECT.csv``                    header ``,Question,A,B,C,D,Answer``
========  ==========================================  ==========================================

A JSON/JSONL file holds multiple-choice rows ``{question, choices | A..D, answer, [subject]}`` or
generation rows ``{input, target}``; a task YAML names its data and metric::

    name: arithmetic
    type: generation            # or multiple_choice
    data: arithmetic.jsonl      # relative to the YAML
    fewshot: arithmetic_dev.jsonl
    metric: regex               # exact_match | regex | rouge
    regex: "answer is (-?\\d+)"
    max_tokens: 32
    stop: ["\\n"]
"""

from __future__ import annotations

import csv
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from openmind.nlp.eval.errors import E_BAD_ITEM, E_BAD_TASK_FILE, E_NO_ITEMS, E_UNKNOWN_TASK

LETTERS = "ABCDEFGHIJ"
SPLIT_SUFFIX = re.compile(r"_(dev|val|test)$")


@dataclass
class MCItem:
    question: str
    choices: list[str]
    answer: int  # index into choices
    where: str = ""  # file:line, for messages


@dataclass
class GenItem:
    input: str
    targets: list[str]
    where: str = ""


@dataclass
class Subject:
    name: str
    items: list[Any] = field(default_factory=list)
    shots: list[Any] = field(default_factory=list)


@dataclass
class EvalTask:
    name: str
    type: Literal["multiple_choice", "generation"]
    subjects: list[Subject]
    #: mmlu | ceval | cmmlu | json | yaml
    layout: str = "json"
    language: str = "en"
    metric: str = "accuracy"
    regex: str | None = None
    max_tokens: int = 64
    stop: list[str] = field(default_factory=list)
    chat: bool = False
    source: str = ""

    @property
    def size(self) -> int:
        return sum(len(s.items) for s in self.subjects)


# ---- resolution ------------------------------------------------------------------------------


def load_task(name: str, task_dir: str | os.PathLike | None = None) -> EvalTask:
    """A task by path (folder, file, YAML), looked up under ``task_dir`` when relative."""
    candidates = [Path(name)]
    if task_dir:
        candidates.insert(0, Path(task_dir) / name)
    for path in candidates:
        for candidate in (path, path.with_suffix(".yaml"), path.with_suffix(".yml")):
            if candidate.exists():
                return _load_path(candidate)
    raise E_UNKNOWN_TASK.error(
        f"evaluation task {name!r} is not a folder or file"
        + (f" (looked in {str(task_dir)!r} too)" if task_dir else "")
    )


def _load_path(path: Path) -> EvalTask:
    if path.is_dir():
        return load_mc_folder(path)
    if path.suffix in (".yaml", ".yml"):
        return load_task_yaml(path)
    if path.suffix in (".json", ".jsonl"):
        rows = read_json_rows(path)
        kind = "generation" if rows and _is_generation_row(rows[0]) else "multiple_choice"
        return _task_from_rows(
            path.stem, kind, rows, path, metric="exact_match" if kind == "generation" else "accuracy"
        )
    if path.suffix == ".csv":
        items, layout = read_mc_csv(path)
        subject = SPLIT_SUFFIX.sub("", path.stem)
        return EvalTask(path.stem, "multiple_choice", [Subject(subject, items)], layout=layout, source=str(path))
    raise E_UNKNOWN_TASK.error(f"{str(path)!r}: use a folder, .csv, .json, .jsonl or .yaml file", location=str(path))


# ---- multiple choice in the MMLU / C-Eval / CMMLU layouts --------------------------------------


def load_mc_folder(folder: Path) -> EvalTask:
    root = folder / "data" if (folder / "data").is_dir() and not (folder / "dev").is_dir() else folder
    splits = {s: root / s for s in ("dev", "val", "test") if (root / s).is_dir()}
    eval_splits = [s for s in ("test", "val") if s in splits]
    if not eval_splits:
        raise E_UNKNOWN_TASK.error(
            f"{str(folder)!r} has no test/ or val/ folder of CSV files (MMLU / C-Eval / CMMLU layout)",
            location=str(folder),
        )

    def by_subject(split: str) -> dict[str, tuple[list[MCItem], str]]:
        out = {}
        for f in sorted(splits[split].glob("*.csv")):
            out[SPLIT_SUFFIX.sub("", f.stem)] = read_mc_csv(f)
        return out

    dev = by_subject("dev") if "dev" in splits else {}
    chosen = None
    for split in eval_splits:
        data = by_subject(split)
        # C-Eval's public test split has no answers: fall back to val
        if data and all(items for items, _ in data.values()):
            chosen = data
            break
    if not chosen:
        raise E_NO_ITEMS.error(
            f"{str(folder)!r}: no split with answered questions (looked at {', '.join(eval_splits)})"
        )
    layouts = {layout for _, layout in chosen.values()}
    layout = layouts.pop() if len(layouts) == 1 else "mixed"
    subjects = [Subject(name, items, dev.get(name, ([], ""))[0]) for name, (items, _) in chosen.items()]
    return EvalTask(
        folder.name,
        "multiple_choice",
        subjects,
        layout=layout,
        language="zh" if layout in ("ceval", "cmmlu") else "en",
        source=str(folder),
    )


def read_mc_csv(path: Path) -> tuple[list[MCItem], str]:
    """Rows of one subject file, and the layout recognised from its header."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise E_BAD_TASK_FILE.error(f"cannot read {str(path)!r}: {exc}", location=str(path)) from None
    if not rows:
        return [], "mmlu"
    header = [h.strip() for h in rows[0]]
    lower = [h.lower() for h in header]
    if "question" in lower and "answer" in lower:
        layout = "cmmlu" if "Question" in header else "ceval"
        q = lower.index("question")
        a = lower.index("answer")
        options = [i for i, h in enumerate(header) if len(h) == 1 and h.upper() in LETTERS]
        body = rows[1:]
        first_line = 2
    else:
        layout = "mmlu"
        q, a = 0, len(rows[0]) - 1
        options = list(range(1, a))
        body = rows
        first_line = 1
    items = []
    unanswered = 0
    for n, row in enumerate(body):
        where = f"{path}:{n + first_line}"
        if not any(cell.strip() for cell in row):
            continue
        if len(row) <= max(q, a, *options):
            raise E_BAD_ITEM.error(
                f"row has {len(row)} columns, the {layout} layout needs {max(q, a, *options) + 1}", location=where
            )
        answer = row[a].strip().upper()
        if not answer:
            unanswered += 1
            continue
        choices = [row[i] for i in options]
        if answer not in LETTERS[: len(choices)]:
            raise E_BAD_ITEM.error(
                f"answer {row[a]!r} is not one of {', '.join(LETTERS[: len(choices)])}",
                location=f"{where} column answer",
            )
        items.append(MCItem(row[q], choices, LETTERS.index(answer), where))
    if unanswered and items:
        raise E_BAD_ITEM.error(f"{unanswered} rows have no answer while others do", location=str(path))
    return items, layout


# ---- JSON rows and YAML tasks ----------------------------------------------------------------


def read_json_rows(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise E_BAD_TASK_FILE.error(f"cannot read {str(path)!r}: {exc}", location=str(path)) from None
    rows: list[Any]
    try:
        if path.suffix == ".jsonl":
            rows = []
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except ValueError as exc:
                        raise E_BAD_ITEM.error(f"invalid JSON: {exc}", location=f"{path}:{n}") from None
        else:
            rows = json.loads(text)
    except ValueError as exc:
        raise E_BAD_TASK_FILE.error(f"invalid JSON in {str(path)!r}: {exc}", location=str(path)) from None
    if isinstance(rows, dict):
        rows = rows.get("data") or rows.get("items") or [rows]
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise E_BAD_TASK_FILE.error(f"{str(path)!r} must hold a list of objects (one per item)", location=str(path))
    for n, row in enumerate(rows, 1):
        row.setdefault("__where__", f"{path}:{n}")
    return rows


def _is_generation_row(row: dict) -> bool:
    return any(k in row for k in ("target", "targets", "output", "reference")) and not any(
        k in row for k in ("choices", "A")
    )


def mc_item(row: dict[str, Any]) -> MCItem:
    where = row.get("__where__", "")
    question = row.get("question", row.get("input"))
    if not isinstance(question, str):
        raise E_BAD_ITEM.error("field 'question' (a string) is missing", location=f"{where} field question")
    if isinstance(row.get("choices"), list):
        choices = [str(c) for c in row["choices"]]
    else:
        choices = [str(row[k]) for k in LETTERS if k in row]
    if len(choices) < 2:
        raise E_BAD_ITEM.error("needs 'choices' (a list) or options A, B, ...", location=f"{where} field choices")
    answer = row.get("answer", row.get("label"))
    if isinstance(answer, str) and answer.strip().upper() in LETTERS[: len(choices)] and len(answer.strip()) == 1:
        index = LETTERS.index(answer.strip().upper())
    elif isinstance(answer, int) and not isinstance(answer, bool) and 0 <= answer < len(choices):
        index = answer
    elif isinstance(answer, str) and answer in choices:
        index = choices.index(answer)
    else:
        raise E_BAD_ITEM.error(
            f"answer {answer!r} is not a letter A-{LETTERS[len(choices) - 1]}, an index or one of the choices",
            location=f"{where} field answer",
        )
    return MCItem(question, choices, index, where)


def gen_item(row: dict[str, Any]) -> GenItem:
    where = row.get("__where__", "")
    text = next((row[k] for k in ("input", "prompt", "question") if isinstance(row.get(k), str)), None)
    if text is None:
        raise E_BAD_ITEM.error("field 'input' (a string) is missing", location=f"{where} field input")
    target = next((row[k] for k in ("target", "targets", "output", "reference", "answer") if k in row), None)
    targets = [target] if isinstance(target, (str, int, float)) else target
    if not isinstance(targets, list) or not targets or not all(isinstance(t, (str, int, float)) for t in targets):
        raise E_BAD_ITEM.error(
            "field 'target' (a string or list of strings) is missing", location=f"{where} field target"
        )
    return GenItem(text, [str(t) for t in targets], where)


def _task_from_rows(
    name: str, kind: str, rows: list[dict], path: Path, shots: list[dict] | None = None, **kw: Any
) -> EvalTask:
    make = mc_item if kind == "multiple_choice" else gen_item
    groups: dict[str, Subject] = {}
    for row in rows:
        subject = str(row.get("subject", name))
        groups.setdefault(subject, Subject(subject)).items.append(make(row))
    for row in shots or []:
        subject = str(row.get("subject", name))
        shot = make(row)
        if subject in groups:
            groups[subject].shots.append(shot)
        else:  # shots without a subject serve every subject
            for s in groups.values():
                s.shots.append(shot)
    if not groups:
        raise E_NO_ITEMS.error(f"{str(path)!r} has no items", location=str(path))
    return EvalTask(name, kind, list(groups.values()), source=str(path), **kw)  # type: ignore[arg-type]


METRICS = ("exact_match", "regex", "rouge")


def load_task_yaml(path: Path) -> EvalTask:
    import yaml

    try:
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise E_BAD_TASK_FILE.error(f"cannot read {str(path)!r}: {exc}", location=str(path)) from None
    if not isinstance(spec, dict):
        raise E_BAD_TASK_FILE.error(f"{str(path)!r} must be a mapping", location=str(path))
    known = {"name", "type", "data", "fewshot", "metric", "regex", "max_tokens", "stop", "chat", "language"}
    unknown = sorted(set(spec) - known)
    if unknown:
        raise E_BAD_TASK_FILE.error(
            f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})", location=f"{path} {unknown[0]}"
        )
    kind = spec.get("type", "multiple_choice")
    kinds = eval_kinds()
    if kind not in kinds:
        raise E_BAD_TASK_FILE.error(f"type {kind!r} is not {' or '.join(kinds)}", location=f"{path} type")
    if "data" not in spec:
        raise E_BAD_TASK_FILE.error("key 'data' (file or folder) is missing", location=f"{path} data")
    data = (path.parent / str(spec["data"])).resolve()
    name = str(spec.get("name", path.stem))
    if kind == "multiple_choice" and data.is_dir():
        task = load_mc_folder(data)
        task.name, task.source = name, str(path)
        return task
    if not data.is_file():
        raise E_BAD_TASK_FILE.error(f"data file {str(data)!r} does not exist", location=f"{path} data")
    metric = spec.get("metric", "exact_match" if kind == "generation" else "accuracy")
    if kind == "generation" and metric not in METRICS:
        raise E_BAD_TASK_FILE.error(f"metric {metric!r} is not one of {', '.join(METRICS)}", location=f"{path} metric")
    regex = spec.get("regex")
    if metric == "regex":
        if not regex:
            raise E_BAD_TASK_FILE.error("metric regex needs a 'regex' with one group", location=f"{path} regex")
        try:
            re.compile(regex)
        except re.error as exc:
            raise E_BAD_TASK_FILE.error(f"regex {regex!r} does not compile: {exc}", location=f"{path} regex") from None
    rows = read_json_rows(data) if data.suffix in (".json", ".jsonl") else _csv_rows(data)
    shots = None
    if spec.get("fewshot"):
        shot_path = (path.parent / str(spec["fewshot"])).resolve()
        shots = read_json_rows(shot_path) if shot_path.suffix in (".json", ".jsonl") else _csv_rows(shot_path)
    stop = spec.get("stop", [])
    return _task_from_rows(
        name,
        kind,
        rows,
        path,
        shots,
        layout="yaml",
        metric=metric,
        regex=regex,
        max_tokens=int(spec.get("max_tokens", 64)),
        stop=[stop] if isinstance(stop, str) else list(stop),
        chat=bool(spec.get("chat", False)),
        language=str(spec.get("language", "en")),
    )


def _csv_rows(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for n, row in enumerate(rows, 2):
        row["__where__"] = f"{path}:{n}"
    return rows


def eval_kinds() -> tuple[str, ...]:
    """Registered evaluation task kinds (``multiple_choice``, ``generation``, and any a plugin adds;
    a plugin's kind reads its items like ``generation`` rows)."""
    from openmind.core.plugins import get_registry

    return tuple(k.name for k in get_registry().eval_kinds())
