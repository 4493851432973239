"""``openmind data validate|convert|prepare|preview``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from openmind.core import args as A
from openmind.core.cli.command import Command


def _stage_choices() -> tuple[str, ...]:
    """``--stage`` choices: every stage whose data format openmind-data checks, from the registry
    (the built-in stages and any plugin's ``DatasetSpec``), never a closed list."""
    from openmind.data.formats import stage_formats

    return tuple(stage_formats())


def _data_args(ns: argparse.Namespace, extra: dict[str, Any] | None = None, groups=("data",)):
    """Unified arguments from the optional CONFIG (a YAML/JSON file or run folder: keys of other
    groups are ignored there) and the flags given."""
    keys = {f for g in groups for f in A.GROUPS[g].__dataclass_fields__}
    given = {k: ("true" if v is None else v) for k, v in vars(ns).items() if k in keys}
    given.update(extra or {})
    base = None
    config = getattr(ns, "config", None)
    if config:
        p = Path(config)
        base = A.load_run(p) if p.is_dir() else A.load_file(p)
    return A.parse(list(groups), overrides=given, base=base)


def _stage(ns: argparse.Namespace, resolved: Any = None) -> str:
    if getattr(ns, "stage", None):
        return ns.stage
    config = getattr(ns, "config", None)
    if config:
        p = Path(config)
        saved = (A.load_run(p) if p.is_dir() else A.load_file(p)) or {}
        if saved.get("stage"):
            return str(saved["stage"])
    return "sft"


def _tokenizer_and_template(resolved: Any, stage: str):
    from openmind.core.errors import A_MISSING

    model = resolved.model.model
    if not model:
        raise A_MISSING.error("no tokenizer to prepare with", hint="Pass --model DIR (a model or tokenizer folder).")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model, trust_remote_code=bool(resolved.model.trust_remote_code))
    if stage == "pt":
        return tokenizer, None
    from openmind.data.api import resolve_template
    from openmind.nlp.training.base import check_template

    template = resolve_template(resolved.template.template, model_dir=model, tokenizer=tokenizer)
    check_template(template, tokenizer)  # the same OM-T002 check `openmind train` makes
    return tokenizer, template


def _media_parts(resolved: Any, stage: str) -> dict[str, Any]:
    """``mm-sft``: the image processor and config.json of the --model folder (a vision-language model)."""
    if stage != "mm-sft":
        return {}
    from openmind.data.multimodal import load_media_parts

    processor, config = load_media_parts(resolved.model.model, trust_remote_code=bool(resolved.model.trust_remote_code))
    return {"image_processor": processor, "model_config": config}


def _print_problems(report, limit: int, out=None) -> None:
    out = out or sys.stdout  # looked up at call time (a default bound at import misses redirections)
    for p in report.problems[:limit]:
        print(f"  {p.location}: {p.reason}", file=out)
    if len(report.problems) > limit:
        print(f"  ... and {len(report.problems) - limit} more (see --max-problems, --rejects)", file=out)


class DataCommand(Command):
    description = (
        "Check, convert and prepare training data.\n\n"
        "Formats read: alpaca, sharegpt, openai messages, preference pairs, plain text; files .json/.jsonl/"
        ".csv/.parquet/.arrow or folders of them; names registered in DATASET_DIR/dataset_info.json "
        "(LLaMA-Factory's file, unchanged) or *.dataset.yaml."
    )
    epilog = (
        "examples:\n"
        "  openmind data validate train.jsonl                       # every bad row: file:line field reason\n"
        "  openmind data validate train.jsonl --on-error skip --rejects bad.jsonl\n"
        "  openmind data convert alpaca.json --out train.jsonl        # to the standard messages format\n"
        "  openmind data prepare --dataset train.jsonl --model ./llama --cutoff-len 2048 --packing true\n"
        "  openmind data preview --dataset train.jsonl --model ./llama -n 2   # trained spans marked\n"
        "  openmind data prepare sft.yaml                              # the same YAML as `openmind train`"
    )

    def configure(self, parser: argparse.ArgumentParser) -> None:
        subs = parser.add_subparsers(dest="data_command", metavar="ACTION", parser_class=type(parser))
        subs.required = True
        stages = _stage_choices()

        v = subs.add_parser("validate", help="check every row; report each bad row with file, line, field, reason")
        v.add_argument("files", nargs="+", metavar="FILE", help="data files, folders or registered dataset names")
        v.add_argument("--stage", choices=stages, default="sft", help="format to check against (default: sft)")
        v.add_argument("--rejects", metavar="PATH", help="--on-error skip: write rejected rows here (JSON Lines)")
        v.add_argument("--max-problems", type=int, default=50, metavar="N", help="print at most N problems")
        v.add_argument("--json", action="store_true", help="machine-readable report")
        self._data_flags(v, ("formatting", "dataset_dir", "on_error", "max_samples", "preprocessing_num_workers"))

        c = subs.add_parser("convert", help="convert rows to the standard format and write them out")
        c.add_argument("files", nargs="+", metavar="FILE", help="data files, folders or registered dataset names")
        c.add_argument(
            "--out", required=True, metavar="PATH", help="output: .jsonl, .json, .parquet, or a folder (Arrow)"
        )
        c.add_argument("--stage", choices=stages, default="sft", help="target format (default: sft)")
        c.add_argument("--rejects", metavar="PATH", help="--on-error skip: write rejected rows here")
        self._data_flags(c, ("formatting", "dataset_dir", "on_error", "max_samples", "preprocessing_num_workers"))

        for name, text in (
            ("prepare", "tokenise (and pack) into the on-disk cache that `openmind train` reuses"),
            ("preview", "show rendered samples with the trained spans marked"),
        ):
            p = subs.add_parser(name, help=text, formatter_class=argparse.RawDescriptionHelpFormatter)
            p.add_argument("config", nargs="?", help="YAML/JSON argument file (e.g. the one for `openmind train`)")
            p.add_argument("--stage", choices=stages, help="training stage (default: sft)")
            p.add_argument("--json", action="store_true", help="machine-readable output")
            if name == "preview":
                p.add_argument("-n", "--num", type=int, default=3, help="samples to show (default: 3)")
            A.add_to_parser(p, ("model", "template", "data"))

    @staticmethod
    def _data_flags(parser: argparse.ArgumentParser, names: tuple[str, ...]) -> None:
        fields = A.DataArguments.__dataclass_fields__
        group = parser.add_argument_group("data arguments")
        for name in names:
            f = fields[name]
            choices = A.choices_of(f)
            text = f.metadata.get("help", "") + (f" {{{', '.join(choices)}}}" if choices else "")
            group.add_argument(
                "--" + name.replace("_", "-"), help=text.replace("%", "%%"), default=argparse.SUPPRESS, metavar="VALUE"
            )

    def run(self, args: argparse.Namespace) -> int:
        return getattr(self, "_" + args.data_command)(args)

    # ---- validate / convert -----------------------------------------------------------
    def _load(self, args: argparse.Namespace):
        from openmind.data.loading import load

        resolved = _data_args(args, {"dataset": list(args.files)})
        return load(resolved.data, stage=args.stage, rejects=args.rejects), resolved.data

    def _validate(self, args: argparse.Namespace) -> int:
        from openmind.data.loading import load, write_rejects

        on_error = getattr(args, "on_error", "fail")
        if on_error not in ("fail", "skip"):
            raise A.A_BAD_VALUE.error(f"on_error: {on_error!r} is not one of fail, skip", location="--on-error")
        data_args = _data_args(args, {"dataset": list(args.files), "on_error": "skip"}).data
        loaded = load(data_args, stage=args.stage, keep_rejects=False, allow_empty=True)
        report = loaded.report
        if on_error == "skip" and report.rejected:
            from openmind.data.loading import data_cache_dir

            target = args.rejects or str(data_cache_dir(data_args) / "rejects" / "validate.rejected.jsonl")
            report.rejects_file = write_rejects(loaded, target)
        if args.json:
            print(json.dumps(report.to_dict(), indent=1, ensure_ascii=False))
        else:
            if report.problems:
                print(f"{report.rejected} bad row(s):")
                _print_problems(report, args.max_problems)
            print(report.summary())
        return 1 if report.rejected and on_error == "fail" else 0

    def _convert(self, args: argparse.Namespace) -> int:
        from openmind.data.loading import announce

        loaded, _ = self._load(args)
        ds = loaded.dataset.remove_columns([c for c in ("_file", "_row") if c in loaded.dataset.column_names])
        out = Path(args.out)
        write_standard(ds, out)
        announce(loaded.report, f"converted to {out}")
        print(f"wrote {len(ds)} rows to {out}")
        print(loaded.report.summary())
        return 0

    # ---- prepare / preview ------------------------------------------------------------
    def _resolved(self, args: argparse.Namespace):
        return _data_args(args, groups=("model", "template", "data"))

    def _prepare(self, args: argparse.Namespace) -> int:
        from openmind.data.preparation import prepare

        resolved = self._resolved(args)
        stage = _stage(args)
        tokenizer, template = _tokenizer_and_template(resolved, stage)
        data = prepare(resolved.data, tokenizer, template, stage=stage, quiet=True, **_media_parts(resolved, stage))
        stats = dict(data.stats, cache=data.cache_dir, from_cache=data.from_cache)
        if args.json:
            print(json.dumps(stats, indent=1))
            return 0
        if data.report is not None and data.report.problems:
            print(f"{len(data.report.problems)} problem(s):")
            _print_problems(data.report, 50)
        for key in ("read", "kept", "rejected", "truncated", "dropped"):
            print(f"{key:>10}: {stats.get(key)}")
        for key, value in stats.items():
            if key.startswith("padding_waste") or key in ("tokens", "packed_sequences", "train_rows", "eval_rows"):
                print(f"{key:>10}: {value}")
        if stats.get("rejects_file"):
            print(f"rejected rows: {stats['rejects_file']}")
        print(f"{'cache':>10}: {data.cache_dir} ({'reused' if data.from_cache else 'built'})")
        return 0

    def _preview(self, args: argparse.Namespace) -> int:
        from openmind.data.encoding import DROPPED, NO_LABELS, Encoder, encode_rows
        from openmind.data.loading import load

        resolved = self._resolved(args)
        stage = _stage(args)
        resolved.data.max_samples = max(args.num, 1)
        tokenizer, template = _tokenizer_and_template(resolved, stage)
        loaded = load(resolved.data, stage=stage)
        rows = loaded.dataset.select(range(min(args.num, len(loaded.dataset)))).to_list()
        d = resolved.data
        settings = dict(train_on=d.train_on, cutoff_len=d.cutoff_len, truncation=d.truncation)
        if stage == "mm-sft":  # visual tokens expanded as in training; media paths resolved as the checks did
            from openmind.data import media
            from openmind.data.multimodal import MediaEncoder

            parts = _media_parts(resolved, stage)
            encoder: Encoder = MediaEncoder(
                tokenizer, template, parts["image_processor"], parts["model_config"], **settings
            )
            for row in rows:
                where = media.bases(loaded.sources[row["_file"]].path, d)
                for key in media.MEDIA:
                    row[key] = [str(media.resolve(x, where)) for x in row.get(key) or []]
        else:
            encoder = Encoder(tokenizer, template, stage=stage, **settings)
        color = sys.stdout.isatty() and not args.json
        out = []
        for row, enc in zip(rows, encode_rows(encoder, rows)):
            if enc.get("_problems"):
                out.append({"problems": json.loads(enc["_problems"]), "row": row["_row"]})
                continue
            if enc.get("_status") in (DROPPED, NO_LABELS):
                source = loaded.sources[row["_file"]].where(row["_row"])
                why = (
                    f"longer than cutoff_len={d.cutoff_len} with truncation=drop"
                    if enc["_status"] == DROPPED
                    else "no trained token left after truncation"
                )
                out.append({"source": source, "dropped": why, "tokens": enc.get("_length")})
                continue
            pairs = (
                [
                    ("chosen", enc["chosen_input_ids"], enc["chosen_labels"]),
                    ("rejected", enc["rejected_input_ids"], enc["rejected_labels"]),
                ]
                if "chosen_input_ids" in enc
                else [("", enc["input_ids"], enc["labels"])]
            )
            for label, ids, labels in pairs:
                out.append(
                    {
                        "source": loaded.sources[row["_file"]].where(row["_row"]),
                        "part": label,
                        "tokens": len(ids),
                        "trained": sum(1 for x in labels if x != -100),
                        "text": mark(tokenizer, ids, labels, color=color),
                    }
                )
        if args.json:
            print(json.dumps(out, indent=1, ensure_ascii=False))
            return 0
        legend = "\x1b[32mgreen\x1b[0m" if color else "«...»"
        print(f"trained spans are shown {legend}; everything else is masked (label -100)\n")
        for item in out:
            if "problems" in item:
                print(f"row {item['row']}: {item['problems']}\n")
                continue
            if "dropped" in item:
                print(f"== {item['source']}: dropped ({item['dropped']}; {item['tokens']} tokens)\n")
                continue
            head = f"== {item['source']}" + (f" [{item['part']}]" if item["part"] else "")
            print(f"{head}: {item['tokens']} tokens, {item['trained']} trained")
            print(item["text"])
            print()
        return 0


def mark(tokenizer: Any, ids: list[int], labels: list[int], *, color: bool = False) -> str:
    """Decode ``ids`` with the trained runs wrapped in « » (or green when ``color``)."""
    opening, closing = ("\x1b[32m", "\x1b[0m") if color else ("«", "»")
    parts = []
    start = 0
    for i in range(1, len(ids) + 1):
        if i == len(ids) or (labels[i] != -100) != (labels[start] != -100):
            text = tokenizer.decode(ids[start:i], skip_special_tokens=False)
            parts.append(opening + text + closing if labels[start] != -100 else text)
            start = i
    return "".join(parts)


def write_standard(ds: Any, out: Path) -> None:
    """Write standard rows; null message keys (no tool calls, no name) are left out of JSON."""
    out.parent.mkdir(parents=True, exist_ok=True)
    suffix = out.suffix.lower()
    if suffix in (".jsonl", ".json"):
        rows = (_clean(r) for r in ds)
        with open(out, "w", encoding="utf-8") as f:
            if suffix == ".jsonl":
                for r in rows:
                    f.write(json.dumps(r, ensure_ascii=False) + "\n")
            else:
                json.dump(list(rows), f, ensure_ascii=False, indent=1)
    elif suffix == ".parquet":
        ds.to_parquet(str(out))
    else:
        ds.save_to_disk(str(out))


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in row.items():
        if value is None:
            continue
        if key == "messages":
            value = [{k: v for k, v in m.items() if v is not None} for m in value]
        out[key] = value
    return out
