"""Run every benchmark module ``bench/bench_*.py`` and write ``bench/results.md``.

Each module exposes ``run() -> list[dict]``; a row has ``benchmark``, ``metric``, ``value``,
``target`` (text) and ``ok`` (bool or None). Speed targets are ratios measured side by side in
one run, because these machines are noisy.

usage: python bench/run.py [NAME ...]     (names filter modules, e.g. `cli`)

Rows of benchmarks that were not run this time are kept from the existing results.md, each with
the date it was measured, so `nox -s bench -- ms` refreshes the MindSpore rows only.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))


def main(argv: list[str]) -> int:
    from openmind.core.tables import markdown_table

    modules = sorted(HERE.glob("bench_*.py"))
    if argv:
        modules = [m for m in modules if any(name in m.stem for name in argv)]
    now = time.strftime("%Y-%m-%d %H:%M")
    rows: list[dict] = []
    failed = 0
    for path in modules:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        start = time.perf_counter()
        print(f"== {path.stem}", flush=True)
        try:
            spec.loader.exec_module(module)
            got = module.run()
        except Exception:  # noqa: BLE001 - one failing benchmark must not hide the others
            traceback.print_exc()
            got = [
                {
                    "benchmark": path.stem.removeprefix("bench_"),
                    "metric": "error",
                    "value": "failed (see log)",
                    "target": "",
                    "ok": False,
                }
            ]
            failed += 1
        for row in got:
            row.setdefault("when", now)
            print(f"   {row['metric']}: {row['value']} (target {row.get('target', '')})", flush=True)
        rows += got
        print(f"   ({time.perf_counter() - start:.1f}s)")
    out = HERE / "results.md"
    ran = {r["benchmark"] for r in rows} | {m.stem.removeprefix("bench_") for m in modules}
    kept = [r for r in previous_rows(out) if r[0] not in ran]
    met = {True: "yes", False: "NO", None: ""}
    new = [[r["benchmark"], r["metric"], r["value"], r.get("target", ""), met[r.get("ok")], r["when"]] for r in rows]
    stems = [m.stem.removeprefix("bench_") for m in sorted(HERE.glob("bench_*.py"))]

    def position(row: list[str]) -> int:  # module order; rows keep their order within a module
        return next((i for i, stem in enumerate(stems) if row[0].startswith(stem)), len(stems))

    merged = sorted(kept + new, key=position)
    table = markdown_table(["benchmark", "metric", "value", "target", "met", "measured"], merged)
    out.write_text(
        f"# Benchmark results\n\nWritten by `nox -s bench` ({sys.platform}); each row says when it was measured.\n\n{table}\n",
        encoding="utf-8",
    )
    print(table)
    print(f"wrote {out}")
    return 1 if failed else 0


def previous_rows(path: Path) -> list[list[str]]:
    """The rows of an existing results.md (six columns; older five-column tables get no date)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    rows = []
    # tables written before rows carried their date say it once, in the header line
    stamp = next((m.group(1) for line in lines if (m := re.search(r" on (\d{4}-\d\d-\d\d \d\d:\d\d)", line))), "")
    for line in lines:
        if not line.startswith("|") or line.startswith("|---") or line.startswith("| benchmark "):
            continue
        inner = line.strip()[1:-1]  # markdown_table escapes "|" in cells as "\\|" and newlines as <br>
        cells = [c.strip().replace("\\|", "|").replace("<br>", "\n") for c in re.split(r"(?<!\\) \| ", inner)]
        if len(cells) in (5, 6):
            rows.append(cells if len(cells) == 6 else [*cells, stamp])
    return rows


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
