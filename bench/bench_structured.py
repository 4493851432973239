"""Throughput cost of grammar-constrained decoding (xgrammar) and per-row controls.

One tiny random Llama (real Llama-2 tokenizer, 32k vocabulary: the mask has 32k bits per row),
one batch of 8 rows x 48 new tokens, ``min_new_tokens`` forcing the same length in every variant
(and ``model.generate`` in every variant: the fast path does not take it), so tokens/s compare like
with like: free rows, all rows under a JSON schema, half and half (one batch), ``tool_choice``
required (a union of the tools' call grammars), logit_bias + penalties; sampled rows with one
shared seed vs a different seed per row (one generator per row, same batch).

Measured quietly: torch on one thread and the process's CPU time (``time.process_time``), not wall
time, so other work on the machine does not count; variants interleaved, best of 5. Grammar compile
time (first use of a schema; cached afterwards) is reported separately.
"""

from __future__ import annotations

import dataclasses
import json
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
TOOLS = {
    "get_weather": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "add": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}


def run() -> list[dict]:
    import torch

    from openmind import pipeline
    from openmind.nlp.pipelines.base import GenerationParams
    from openmind.nlp.pipelines.controls import Alternative, Constraint, RowControls, json_schema_constraint
    from openmind.nlp.templates.toolcalls import get_tool_parser
    from openmind.pt.pipelines.constrained import compile_constraint
    from openmind.pt.testing import tiny_llama

    torch.set_num_threads(1)
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
    hermes = get_tool_parser("hermes")  # what the server builds for tool_choice=required (qwen2.5)
    required = Constraint(
        tuple(
            Alternative(json.dumps(schema), prefix=hermes.call_prefix(name), suffix=hermes.call_suffix())
            for name, schema in TOOLS.items()
        ),
        "tool_choice",
    )
    tool_call = dataclasses.replace(free, controls=RowControls(constraint=required))
    sampling = dataclasses.replace(
        free, controls=RowControls(logit_bias=((5, 2.0),), presence_penalty=0.5, frequency_penalty=0.5)
    )
    sample = dataclasses.replace(free, do_sample=True, temperature=1.0)
    variants = {
        "free": [free] * ROWS,
        "json_schema": [grammar] * ROWS,
        "mixed": [grammar, free] * (ROWS // 2),
        "tool_choice=required": [tool_call] * ROWS,
        "logit_bias+penalties": [sampling] * ROWS,
        "sampled, one seed": [dataclasses.replace(sample, seed=1)] * ROWS,
        "sampled, a seed per row": [dataclasses.replace(sample, seed=s) for s in range(ROWS)],
    }
    best = {name: float("inf") for name in variants}
    for _ in range(5):
        for name, params in variants.items():
            start = time.process_time()
            backend.generate([ids] * ROWS, params, batch_size=ROWS)
            best[name] = min(best[name], time.process_time() - start)
    tps = {name: ROWS * TOKENS / seconds for name, seconds in best.items()}
    rows = [
        {
            "benchmark": "structured",
            "metric": f"tokens per CPU second (1 thread), batch of {ROWS}, {name}",
            "value": f"{tps[name]:.0f}",
            "target": "",
            "ok": None,
        }
        for name in variants
    ]
    for name, base in [
        ("json_schema", "free"),
        ("mixed", "free"),
        ("tool_choice=required", "free"),
        ("logit_bias+penalties", "free"),
        ("sampled, a seed per row", "sampled, one seed"),
    ]:
        ratio = tps[name] / tps[base]
        rows.append(
            {
                "benchmark": "structured",
                "metric": f"{name} throughput / {base}",
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
