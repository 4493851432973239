"""Templates: native renderers vs the official Jinja chat_template (what apply_chat_template runs), same run.

Render of a 16-turn conversation, and segments() (label-mask cuts) where the Jinja template has
to re-render every prefix. Both produce identical strings (tests/test_templates_fidelity.py).
"""

from __future__ import annotations

import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "packages" / "openmind-nlp" / "tests" / "data" / "chat_templates"
SPECIAL = {"llama2": {"bos_token": "<s>", "eos_token": "</s>"}, "qwen2.5": {}, "qwen3": {}}


def _best(fn, repeat: int = 5, number: int = 50) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def run() -> list[dict]:
    from openmind.nlp.templates import JinjaTemplate, load_template

    messages = [{"role": "system", "content": "Be helpful."}]
    for i in range(8):
        messages += [
            {"role": "user", "content": f"Question {i}: what is {i} + {i}?"},
            {"role": "assistant", "content": f"It is {2 * i}."},
        ]
    rows = []
    for name, special in SPECIAL.items():
        native = load_template(name)
        jinja = JinjaTemplate((DATA / f"{name}.jinja").read_text(encoding="utf-8"), special_tokens=special)
        assert native.render(messages) == jinja.render(messages)
        for what, target in (("render", 0.5), ("segments", 0.2)):
            a, b = getattr(native, what), getattr(jinja, what)
            if name == "qwen3" and what == "segments":
                continue  # Qwen3 rewrites earlier turns: prefix re-rendering cannot cut it (native can)
            t_native, t_jinja = _best(lambda f=a: f(messages)), _best(lambda f=b: f(messages))
            ratio = t_native / t_jinja
            rows.append(
                {
                    "benchmark": "templates",
                    "metric": f"{name} {what} (17 messages): native {t_native * 1e6:.0f} us vs Jinja {t_jinja * 1e6:.0f} us",
                    "value": f"{ratio:.2f}x",
                    "target": f"< {target}x",
                    "ok": ratio < target,
                }
            )
    return rows
