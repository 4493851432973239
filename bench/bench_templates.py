"""Templates: native renderers vs the official Jinja chat_template (what apply_chat_template runs), same run.

For every family/revision whose official template is stored (``tests/data/chat_templates``,
``SOURCES.json``): render of a 17-message conversation, and label masks (``segments()``, the
cuts ``encode()`` labels from) where the Jinja template has to re-render every prefix. Both
produce identical strings and masks (tests/test_template_revisions.py). Target: native >= 10x
faster, one row per family and measure.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "packages" / "openmind-nlp" / "tests" / "data" / "chat_templates"
#: the families whose official templates refuse a system message get a conversation without one
NO_SYSTEM = {"gemma2", "mistral"}


def _paired_best(a, b, repeat: int = 25, number: int = 40) -> tuple[float, float]:
    """Best time per call of ``a`` and of ``b``, measured in alternation: on a shared machine both
    sides get the same chances of a quiet moment (the ratio of two separate runs mostly measures
    the load)."""
    a(), b()
    best_a = best_b = float("inf")
    for _ in range(repeat):
        for fn, which in ((a, 0), (b, 1)):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            elapsed = (time.perf_counter() - start) / number
            if which:
                best_b = min(best_b, elapsed)
            else:
                best_a = min(best_a, elapsed)
    return best_a, best_b


def _conversation(system: bool) -> list[dict]:
    messages = [{"role": "system", "content": "Be helpful."}] if system else []
    for i in range(8):
        messages += [
            {"role": "user", "content": f"Question {i}: what is {i} + {i}?"},
            {"role": "assistant", "content": f"It is {2 * i}."},
        ]
    return messages


def run() -> list[dict]:
    from openmind.nlp.templates import JinjaTemplate, load_template

    sources = json.loads((DATA / "SOURCES.json").read_text(encoding="utf-8"))
    rows = []
    for file, meta in sorted(sources.items()):
        name = meta["renderer"]
        if not name:
            continue
        stem = file.removesuffix(".jinja")
        label = stem if stem == name else f"{stem} ({name})"  # the stored revision, and its renderer
        native = load_template(name)
        jinja = JinjaTemplate((DATA / file).read_text(encoding="utf-8"), special_tokens=meta["special_tokens"])
        messages = _conversation(system=name not in NO_SYSTEM)
        if name.startswith("llama3."):
            native.options = jinja.options = {"date_string": "26 Jul 2024"}
        assert native.render(messages) == jinja.render(messages), stem
        assert native.segments(messages) == jinja.segments(messages), stem
        for what in ("render", "segments"):
            a, b = getattr(native, what), getattr(jinja, what)
            # renders take microseconds: more rounds, more chances of a quiet moment on a shared machine
            rounds = 80 if what == "render" else 25
            t_native, t_jinja = _paired_best(lambda f=a, m=messages: f(m), lambda f=b, m=messages: f(m), rounds)
            ratio = t_jinja / t_native
            rows.append(
                {
                    "benchmark": "templates",
                    "metric": f"{label} {what} ({len(messages)} messages): native {t_native * 1e6:.1f} us vs Jinja "
                    f"{t_jinja * 1e6:.1f} us",
                    "value": f"{ratio:.1f}x faster",
                    "target": ">= 10x",
                    "ok": ratio >= 10,
                }
            )
    return rows
