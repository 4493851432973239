"""Templates: native renderers vs the official Jinja chat_template (what apply_chat_template runs), same run.

For every family/revision whose official template is stored (``tests/data/chat_templates``,
``SOURCES.json``): render of a 17-message conversation, and label masks (``segments()``, the
cuts ``encode()`` labels from) where the Jinja template has to re-render every prefix. Both
produce identical strings and masks (tests/test_template_revisions.py). Target: native >= 10x
faster, one row per family and measure.

The Jinja side is :class:`~openmind.nlp.templates.JinjaTemplate`'s render: the compiled template
in transformers' sandboxed environment, what openmind runs for a template no renderer covers.
For the families whose text depends on the roles alone (the layout path), the native render is
openmind-speedups' C ``fill_layout`` where it is installed (``nox -s bench`` installs it), and the
row also gives the same template's pure-Python render (``OPENMIND_NO_SPEEDUPS=1``) and the floor
of any Python renderer: the same conversation rendered by one plain function with no checks and
no fallbacks (two C-level passes over the messages, one join).
"""

from __future__ import annotations

import json
import time
from functools import partial
from itertools import repeat
from operator import itemgetter
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "packages" / "openmind-nlp" / "tests" / "data" / "chat_templates"
#: the families whose official templates refuse a system message get a conversation without one
NO_SYSTEM = {"gemma2", "mistral"}


def _interleaved_best(*fns, rounds: int = 25, number: int = 40) -> list[float]:
    """Best time per call of each of ``fns``, measured in alternation: on a shared machine every
    side gets the same chances of a quiet moment (the ratio of two separate runs mostly measures
    the load)."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for which, fn in enumerate(fns):
            start = time.perf_counter()
            for _ in repeat(None, number):
                fn()
            best[which] = min(best[which], (time.perf_counter() - start) / number)
    return best


def _floor(native, messages):
    """The least any Python renderer of a role-only family can do for ``messages``: read every
    role and content once with C-level maps and join the contents into the texts ``native`` has
    cached for the role sequence (no checks, no fallbacks); ``None`` for families
    without a layout."""
    if native.layout is None:
        return None
    get_role, get_content = itemgetter("role"), itemgetter("content")
    native.render(messages)
    cache = native._layouts[1]

    def floor(messages=messages):
        out = cache[tuple(map(get_role, messages))][:]
        out[1::2] = map(get_content, messages)
        return "".join(out)

    return floor


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
            # partial: the call itself, with no Python frame of the bench's around it (on both sides)
            sides = [partial(a, messages), partial(b, messages)]
            floor = _floor(native, messages) if what == "render" else None
            extra = ""
            if floor is not None:
                assert floor() == native.render(messages), stem
                sides.append(floor)
                if native._fill is not None:  # the C render: measure the Python one beside it
                    pure = load_template(name)
                    pure._fill, pure.options = None, native.options
                    assert pure.render(messages) == native.render(messages), stem
                    sides.append(partial(pure.render, messages))
            # renders take microseconds: many more rounds, more chances of a quiet moment on a shared machine
            t_native, t_jinja, *t_more = _interleaved_best(*sides, rounds=600 if what == "render" else 25)
            if len(t_more) == 2:
                extra = (
                    f" (C speedups; Python {t_more[1] * 1e6:.1f} us = {t_jinja / t_more[1]:.1f}x, Python floor "
                    f"{t_more[0] * 1e6:.1f} us = {t_jinja / t_more[0]:.1f}x)"
                )
            elif t_more:
                extra = f"; Python floor {t_more[0] * 1e6:.1f} us = {t_jinja / t_more[0]:.1f}x"
            ratio = t_jinja / t_native
            rows.append(
                {
                    "benchmark": "templates",
                    "metric": f"{label} {what} ({len(messages)} messages): native {t_native * 1e6:.1f} us{extra} "
                    f"vs Jinja {t_jinja * 1e6:.1f} us",
                    "value": f"{ratio:.1f}x faster",
                    "target": ">= 10x",
                    "ok": ratio >= 10,
                }
            )
    return rows
