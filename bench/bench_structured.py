"""Throughput cost of grammar-constrained decoding (xgrammar) and per-row controls.

One tiny random Llama (real Llama-2 tokenizer, 32k vocabulary: the mask has 32k bits per row),
one batch of 8 rows x 48 new tokens, greedy, ``min_new_tokens`` forcing the same length in every
variant, so tokens/s compare like with like: free rows, all rows under a JSON schema, half and
half (one batch), all rows with logit_bias + penalties. Ratios are measured side by side, best of 3.
Grammar compile time (first use of a schema; cached afterwards) is reported separately.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time

ROWS, TOKENS = 8, 48
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 200},
        "tags": {"type": "array", "items": {"type": "string"}},
        "n": {"type": "integer"},
    },
    "required": ["name", "tags", "n"],
}


def run() -> list[dict]:
    from openmind import pipeline
    from openmind.nlp.pipelines.base import GenerationParams
    from openmind.nlp.pipelines.controls import RowControls, json_schema_constraint
    from openmind.pt.pipelines.constrained import compile_constraint
    from openmind.pt.testing import tiny_llama

    folder = tiny_llama(tempfile.mkdtemp() + "/tiny", seed=1)
    chat = pipeline("chat", model=str(folder), framework="pt", device="cpu", template="qwen2.5")
    backend = chat.backend
    ids = chat.prompt(chat.check_item("Describe a fruit as JSON.", None), {})
    # the same length everywhere: a grammar that ends early would otherwise look faster
    backend.model.generation_config.min_new_tokens = TOKENS
    free = GenerationParams(max_new_tokens=TOKENS, do_sample=False)
    constraint = json_schema_constraint(SCHEMA)
    start = time.perf_counter()
    compile_constraint(backend, constraint, backend.eos_ids)
    compile_s = time.perf_counter() - start
    grammar = dataclasses.replace(free, controls=RowControls(constraint=constraint))
    sampling = dataclasses.replace(
        free, controls=RowControls(logit_bias=((5, 2.0),), presence_penalty=0.5, frequency_penalty=0.5)
    )
    variants = {
        "free": [free] * ROWS,
        "json_schema": [grammar] * ROWS,
        "mixed": [grammar, free] * (ROWS // 2),
        "logit_bias+penalties": [sampling] * ROWS,
    }
    best = {name: float("inf") for name in variants}
    for _ in range(3):
        for name, params in variants.items():
            start = time.perf_counter()
            backend.generate([ids] * ROWS, params, batch_size=ROWS)
            best[name] = min(best[name], time.perf_counter() - start)
    tps = {name: ROWS * TOKENS / seconds for name, seconds in best.items()}
    rows = [
        {
            "benchmark": "structured",
            "metric": f"tokens/s, batch of {ROWS}, {name}",
            "value": f"{tps[name]:.0f}",
            "target": "",
            "ok": None,
        }
        for name in variants
    ]
    for name in ("json_schema", "mixed", "logit_bias+penalties"):
        ratio = tps[name] / tps["free"]
        rows.append(
            {
                "benchmark": "structured",
                "metric": f"{name} throughput / free",
                "value": f"{ratio:.2f}",
                "target": ">= 0.5",
                "ok": ratio >= 0.5,
            }
        )
    rows.append(
        {
            "benchmark": "structured",
            "metric": "grammar compile (32k vocab, first use)",
            "value": f"{compile_s * 1000:.0f} ms",
            "target": "",
            "ok": None,
        }
    )
    return rows
