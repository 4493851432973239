"""Plain-text and Markdown tables (no dependency, so the CLI stays fast)."""

from __future__ import annotations

from collections.abc import Sequence


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def text_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], max((len(line) for line in value.splitlines()), default=0))

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.ljust(widths[i]) for i, v in enumerate(values)).rstrip()

    out = [line(list(headers)), line(["-" * w for w in widths])]
    out += [line(row) for row in cells]
    return "\n".join(out)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def esc(value: object) -> str:
        return _cell(value).replace("|", "\\|").replace("\n", "<br>")

    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(esc(v) for v in row) + " |" for row in rows]
    return "\n".join(out)
