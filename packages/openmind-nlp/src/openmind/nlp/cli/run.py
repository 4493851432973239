"""``openmind run TASK|MODEL --model PATH --input TEXT|FILE [--json]``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from openmind.core.cli.command import Command
from openmind.core.errors import A_BAD_VALUE, A_MISSING, A_UNKNOWN_KEY
from openmind.nlp.errors import I_BAD_INPUT_FILE

FILE_SUFFIXES = (".jsonl", ".txt", ".json")
#: files taken from an --input folder (media tasks: one input per file)
MEDIA_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff", ".wav")


def parse_options(pairs: list[str] | None) -> dict[str, Any]:
    """``--set KEY=VALUE`` pairs -> task options (values read as JSON when they parse, e.g.
    ``steps=2`` -> 2, ``labels=["a","b"]`` -> a list; else kept as text)."""
    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise A_UNKNOWN_KEY.error(
                f"--set {pair!r}: write KEY=VALUE", hint="Example: --set size=512x512 --set seed=0"
            )
        try:
            out[key.strip().replace("-", "_")] = json.loads(value)
        except ValueError:
            out[key.strip().replace("-", "_")] = value
    return out


def json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "size") and hasattr(value, "save"):
        return f"<image {value.size[0]}x{value.size[1]}>"
    return repr(value)


def read_input_file(path: Path, wrapper: Any) -> list[Any]:
    """Inputs of a .txt (one per line) or .jsonl (one JSON value per line) file; .json: a list."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise I_BAD_INPUT_FILE.error(f"cannot read {str(path)!r}: {exc}", location=str(path)) from None
    if path.suffix == ".txt":
        return [line for line in text.splitlines() if line.strip()]
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise I_BAD_INPUT_FILE.error(f"{str(path)!r} is not valid JSON: {exc}", location=str(path)) from None
        rows = data if isinstance(data, list) else [data]
        return [wrapper.from_record(row, f"{path}[{i}]") for i, row in enumerate(rows)]
    inputs = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise I_BAD_INPUT_FILE.error(
                f"line {number} of {str(path)!r} is not JSON: {exc.args[0] if exc.args else exc}",
                location=f"{path}:{number}",
            ) from None
        inputs.append(wrapper.from_record(row, f"{path}:{number}"))
    return inputs


class RunCommand(Command):
    groups = ("model", "template", "generation")
    description = (
        "Run a task pipeline on one input or on every input of a file.\n\n"
        "TASK is a task name or alias (`openmind list tasks`); give a model folder instead and the\n"
        "task is inferred from it. --input is text, or a .txt (one input per line) / .jsonl file\n"
        '(one JSON value per line: a string, a list of messages, or {"input": ...}); without\n'
        "--input, lines are read from stdin."
    )
    epilog = """examples:
  openmind run chat --model ./tiny-llama --input "Hello" --max-new-tokens 32
  openmind run ./tiny-llama --input prompts.jsonl --json --batch-size 8
  openmind run text2emb --model ./all-MiniLM-L6-v2 --input "A sentence" --json
  openmind run chat --config infer.yaml --input questions.txt --output answers.jsonl --json
  openmind run text2image --model ./sd --input "a cat" --output-dir out/ --set size=512x512 --set seed=0
  openmind run image-classification --model ./vit --input photos/ --json
  openmind run question-answering --model ./qa --input questions.jsonl --json"""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("target", nargs="?", metavar="TASK|MODEL", help="a task name, or a model folder")
        parser.add_argument("--config", help="YAML/JSON argument file, or a run folder to start from")
        parser.add_argument("--input", "-i", dest="input_", metavar="TEXT|FILE", help="input text or file")
        parser.add_argument("--json", action="store_true", help="print JSON lines {input, output}")
        parser.add_argument("--output", "-o", metavar="FILE", help="write the outputs to FILE instead of stdout")
        parser.add_argument(
            "--output-dir",
            metavar="DIR",
            help="write images / video frames / audio of the outputs into DIR (their paths are printed)",
        )
        parser.add_argument(
            "--set",
            dest="options",
            action="append",
            metavar="KEY=VALUE",
            help='a task option, repeatable (e.g. --set size=512x512 --set seed=0 --set candidate_labels=\'["a","b"]\')',
        )

    def run(self, ns: argparse.Namespace) -> int:
        from openmind.core.api import pipeline
        from openmind.core.logs import setup_console
        from openmind.core.plugins import get_registry
        from openmind.nlp.cli.options import pipeline_kwargs

        setup_console()
        if ns.input_ is not None and not str(ns.input_).strip():  # before any model loads
            raise A_BAD_VALUE.error("--input is empty", hint="Pass --input TEXT or --input FILE.", location="input")
        args = self.resolve(ns)
        target = ns.target
        task = None
        model = args.model.model
        if target is not None:
            if os.path.isdir(os.path.expanduser(target)):
                if model is not None and model != target:
                    raise A_UNKNOWN_KEY.error(
                        f"both a model folder ({target!r}) and --model {model!r} given",
                        hint="Pass TASK --model PATH, or just the model folder.",
                    )
                model = target
            else:
                task = get_registry().task(target).name  # OM-I001 with suggestions when unknown
        if model is None and task is None:
            raise A_MISSING.error("no model given", hint="Pass --model PATH (or a model folder as TASK|MODEL).")
        if task is None:
            from openmind.core.api import infer_task, resolve_model

            model = resolve_model(model, revision=args.model.revision, hub=args.model.hub)
            task = infer_task(model)
        pipe = pipeline(task, model, **pipeline_kwargs(args, task), **parse_options(ns.options))
        if getattr(pipe, "writes_media", False) and not ns.output_dir:
            raise A_MISSING.error(
                f"task {pipe.task!r} produces images/audio: pass --output-dir DIR to write them",
                location="--output-dir",
            )
        inputs, single = self.inputs(ns.input_, pipe)
        out = open(ns.output, "w", encoding="utf-8") if ns.output else sys.stdout  # noqa: SIM115
        try:
            self.process(pipe, inputs, single, ns.json, out, args.generation.batch_size, ns.output_dir)
        finally:
            if out is not sys.stdout:
                out.close()
        return 0

    def inputs(self, value: str | None, pipe: Any) -> tuple[list[Any], bool]:
        inputs, single = self._inputs(value, pipe)
        if single and not str(value).strip():
            raise A_BAD_VALUE.error("--input is empty", hint="Pass --input TEXT or --input FILE.", location="input")
        if not inputs:
            where = value if value is not None else "stdin"
            raise I_BAD_INPUT_FILE.error(
                f"no inputs in {where} (empty, or only blank lines)", location=where if value is not None else "input"
            )
        return inputs, single

    def _inputs(self, value: str | None, pipe: Any) -> tuple[list[Any], bool]:
        if value is None:
            if sys.stdin is None or sys.stdin.isatty():
                raise A_MISSING.error("no input given", hint="Pass --input TEXT or --input FILE (.txt, .jsonl).")
            return [line.rstrip("\n") for line in sys.stdin if line.strip()], False
        path = Path(os.path.expanduser(value))
        if path.is_dir():
            files = sorted(str(p) for p in path.iterdir() if p.suffix.lower() in MEDIA_SUFFIXES)
            if not files:
                raise I_BAD_INPUT_FILE.error(f"input folder {value!r} has no image or .wav files", location=value)
            return files, False
        if path.suffix in FILE_SUFFIXES:
            if path.is_file():
                return read_input_file(path, pipe), False
            if not any(c.isspace() for c in value):
                raise I_BAD_INPUT_FILE.error(f"input file {value!r} does not exist", location=value)
        return [value], True

    def process(
        self,
        pipe: Any,
        inputs: list[Any],
        single: bool,
        as_json: bool,
        out: Any,
        batch_size: int,
        output_dir: str | None = None,
    ) -> None:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(inputs), desc=pipe.task, unit="input", disable=single or len(inputs) < 2, file=sys.stderr)
        step = max(1, batch_size)
        try:
            for start in range(0, len(inputs), step):
                chunk = inputs[start : start + step]
                outputs = pipe(chunk)
                for index, (item, output) in enumerate(zip(chunk, outputs, strict=True), start=start):
                    if output_dir and hasattr(pipe, "save"):
                        stem = Path(item).stem if isinstance(item, str) and os.path.isfile(item) else f"{index:05d}"
                        output = pipe.save(output, Path(output_dir), stem)
                    if as_json:
                        record = {"input": item, "output": output}
                        out.write(json.dumps(record, ensure_ascii=False, default=json_default) + "\n")
                    else:
                        out.write(pipe.to_text(output) + "\n")
                out.flush()
                bar.update(len(chunk))
        finally:
            bar.close()
