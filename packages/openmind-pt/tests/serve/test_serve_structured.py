"""Grammar-constrained decoding (xgrammar) and per-row sampling controls on a real tiny, UNTRAINED
Llama with the real Llama-2 tokenizer, served with the Qwen2.5 template (Hermes tool calls):

* ``tool_choice`` required / named always give a valid call (grammar-enforced, not hoped for);
* ``response_format`` json_schema strict: 100 random small schemas all validate (jsonschema), in
  batches that mix constrained and free rows; free rows equal their unconstrained generation;
* ``logit_bias`` / presence / frequency penalties per row (checked against their formulas);
* out-of-vocabulary ids and 64-bit seeds are 400s / work, never 500s.
"""

from __future__ import annotations

import concurrent.futures
import json
import random

import httpx
import jsonschema
import openai
import pytest
from conftest import build

from openmind.nlp.serve.app import ServeSettings, create_app
from openmind.nlp.serve.server import ServerThread

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "maxLength": 12},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city", "unit"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "add",
            "parameters": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer", "minimum": 0, "maximum": 999},
                    "b": {"type": "integer", "minimum": 0, "maximum": 999},
                },
                "required": ["a", "b"],
                "additionalProperties": False,
            },
        },
    },
]
PARAMS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}


@pytest.fixture(scope="module")
def engine(tiny_model):
    return build(tiny_model, template="qwen2.5", served_model_name="tiny")


@pytest.fixture(scope="module")
def server(engine):
    with ServerThread(
        create_app(engine, ServeSettings(served_model_name="tiny", max_batch_size=8, batch_wait_ms=20))
    ) as s:
        yield s


def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0, timeout=300)


def random_schema(rng: random.Random) -> dict:
    """A small object schema: bounded strings, integers, numbers, booleans, enums, arrays, nesting."""

    def leaf(depth: int) -> dict:
        kind = rng.choice(["string", "integer", "boolean", "enum", "number"] + (["array", "object"] if depth else []))
        if kind == "string":
            return {"type": "string", "maxLength": rng.randint(1, 8)}
        if kind == "integer":
            lo = rng.randint(-50, 50)
            return {"type": "integer", "minimum": lo, "maximum": lo + rng.randint(0, 100)}
        if kind == "number":
            return {"type": "number", "minimum": 0, "maximum": 10}
        if kind == "enum":
            return {"enum": rng.sample(["red", "green", "blue", "x", "y"], rng.randint(1, 3))}
        if kind == "array":
            return {"type": "array", "items": leaf(0), "minItems": 1, "maxItems": 3}
        if kind == "boolean":
            return {"type": "boolean"}
        return obj(depth - 1)

    def obj(depth: int) -> dict:
        names = rng.sample(["a", "b", "c", "name", "count", "ok", "tags"], rng.randint(1, 3))
        return {
            "type": "object",
            "properties": {n: leaf(depth) for n in names},
            "required": names,
            "additionalProperties": False,
        }

    return obj(1)


def test_tool_choice_required_and_named_always_give_a_valid_call(server):
    c = client(server)
    prompt = [{"role": "user", "content": "What is the weather in Paris?"}]
    for k in range(3):
        for choice in ("required", {"type": "function", "function": {"name": "add"}}):
            r = c.chat.completions.create(
                model="tiny", messages=prompt, tools=TOOLS, tool_choice=choice, max_tokens=120, seed=k, temperature=1.0
            )
            out = r.choices[0]
            assert out.finish_reason == "tool_calls", out
            (call,) = out.message.tool_calls
            if choice != "required":
                assert call.function.name == "add"
            jsonschema.validate(json.loads(call.function.arguments), PARAMS[call.function.name])
    # streaming: the same call arrives as tool-call deltas
    stream = c.chat.completions.create(
        model="tiny", messages=prompt, tools=TOOLS, tool_choice="required", max_tokens=120, stream=True
    )
    name, arguments, finish = "", "", None
    for chunk in stream:
        for tc in chunk.choices[0].delta.tool_calls or []:
            name += tc.function.name or ""
            arguments += tc.function.arguments or ""
        finish = chunk.choices[0].finish_reason or finish
    assert finish == "tool_calls" and name in PARAMS
    jsonschema.validate(json.loads(arguments), PARAMS[name])


def test_json_schema_strict_100_random_schemas_validate_in_mixed_batches(engine):
    """100 schemas through the pipeline backend in batches of 20 rows, every 4th row free."""
    from openmind.nlp.pipelines.controls import RowControls, json_schema_constraint
    from openmind.nlp.serve.engine import Sampling
    from openmind.nlp.serve.pipeline_engine import _params

    rng = random.Random(0)
    schemas = [random_schema(rng) for _ in range(100)]
    wrapper = engine.generator
    ids = wrapper.prompt(wrapper.check_item("Describe the item as JSON.", None), {})
    base = wrapper.with_stops(_params(wrapper.defaults, Sampling(max_tokens=96, temperature=0.0), 0))
    import dataclasses

    rows, kinds = [], []
    for schema in schemas:
        rows.append(dataclasses.replace(base, controls=RowControls(constraint=json_schema_constraint(schema))))
        kinds.append(schema)
        if len(rows) % 4 == 3:
            rows.append(base)
            kinds.append(None)
    out = wrapper.backend.generate([ids] * len(rows), rows, batch_size=20)
    free = wrapper.backend.generate([ids], base)[0]
    valid = 0
    for schema, generation in zip(kinds, out):
        if schema is None:
            assert generation.text == free.text  # a free row is unchanged by its constrained neighbours
            continue
        assert generation.finish_reason == "stop", (schema, generation.text)
        jsonschema.validate(json.loads(generation.text), schema)
        valid += 1
    assert valid == 100


def test_response_format_over_http_mixed_with_free_requests(server):
    c = client(server)
    rng = random.Random(1)
    schemas = [random_schema(rng) for _ in range(6)]

    def ask(i):
        if i % 3 == 2:
            return None, c.chat.completions.create(
                model="tiny", messages=[{"role": "user", "content": "hi"}], max_tokens=8
            )
        schema = schemas[i]
        fmt = {"type": "json_schema", "json_schema": {"name": f"s{i}", "schema": schema, "strict": True}}
        return schema, c.chat.completions.create(
            model="tiny", messages=[{"role": "user", "content": "JSON please"}], response_format=fmt, max_tokens=96
        )

    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(ask, range(6)))
    for schema, r in answers:
        if schema is not None:
            jsonschema.validate(json.loads(r.choices[0].message.content), schema)
    r = c.chat.completions.create(
        model="tiny",
        messages=[{"role": "user", "content": "x"}],
        response_format={"type": "json_object"},
        max_tokens=200,
    )
    assert r.choices[0].message.content.startswith("{")


def test_bad_schema_and_out_of_vocabulary_ids_are_400s_and_big_seeds_work(server):
    h = {"Content-Type": "application/json"}
    bad = {
        "type": "json_schema",
        "json_schema": {"name": "x", "schema": {"type": "object", "properties": {"a": {"type": "nonsense"}}}},
    }
    r = httpx.post(
        server.url + "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "x"}], "response_format": bad},
        headers=h,
        timeout=60,
    )
    assert r.status_code == 400 and r.json()["error"]["param"] == "response_format", r.text
    r = httpx.post(
        server.url + "/v1/completions", json={"prompt": [1, 2, 10**9], "max_tokens": 2}, headers=h, timeout=60
    )
    assert r.status_code == 400 and "outside the vocabulary" in r.json()["error"]["message"]
    assert r.json()["error"]["param"] == "prompt"
    r = httpx.post(
        server.url + "/v1/completions",
        json={"prompt": "a", "max_tokens": 2, "logit_bias": {"99999999": 5}},
        headers=h,
        timeout=60,
    )
    assert r.status_code == 400 and r.json()["error"]["param"] == "logit_bias"
    r = httpx.post(
        server.url + "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "x"}], "seed": 2**63 - 1, "n": 2, "max_tokens": 3},
        headers=h,
        timeout=60,
    )
    assert r.status_code == 200, r.text


def test_logit_bias_and_penalties_per_row_in_one_batch(engine):
    """Rows with different controls share one batch; each row's logits follow OpenAI's formulas."""
    import torch

    from openmind.nlp.pipelines.controls import RowControls
    from openmind.pt.pipelines.constrained import RowControlsProcessor

    backend = engine.generator.backend
    controls = (
        RowControls(logit_bias=((7, 5.0), (9, -3.0))),
        RowControls(presence_penalty=0.5, frequency_penalty=0.25),
        None,
    )
    proc = RowControlsProcessor(backend, controls, start=2, stop_ids=backend.eos_ids, warpers=[])
    scores = torch.randn(3, 40)
    ids = torch.tensor([[1, 1, 4, 4, 5], [1, 1, 4, 4, 5], [1, 1, 4, 4, 5]])
    out = proc(ids, scores.clone())
    expect = scores.clone()
    expect[0, 7] += 5.0
    expect[0, 9] -= 3.0
    expect[1, 4] -= 0.5 + 2 * 0.25
    expect[1, 5] -= 0.5 + 1 * 0.25
    assert torch.allclose(out, expect)
    # end to end: a +100 bias makes the greedy answer that token, in a batch with a free row
    from openmind.nlp.pipelines.base import GenerationParams

    wrapper = engine.generator
    ids = wrapper.prompt(wrapper.check_item("hi", None), {})
    token = backend.tokenizer.convert_tokens_to_ids("▁yes")
    rows = [
        GenerationParams(max_new_tokens=4, do_sample=False, controls=RowControls(logit_bias=((token, 100.0),))),
        GenerationParams(max_new_tokens=4, do_sample=False),
    ]
    biased, free = backend.generate([ids, ids], rows, batch_size=2)
    assert biased.token_ids == [token] * 4
    assert free.text == backend.generate([ids], rows[1])[0].text


def test_the_chat_pipeline_takes_response_format_and_equals_the_server(server, tiny_model):
    from openmind import pipeline

    chat = pipeline("chat", model=tiny_model, framework="pt", device="cpu", template="qwen2.5")
    schema = random_schema(random.Random(7))
    fmt = {"type": "json_schema", "json_schema": {"name": "s", "schema": schema, "strict": True}}
    messages = [{"role": "user", "content": "JSON please"}]
    direct = chat(messages, response_format=fmt, max_new_tokens=96, temperature=0)["content"]
    jsonschema.validate(json.loads(direct), schema)
    served = client(server).chat.completions.create(
        model="tiny", messages=messages, response_format=fmt, max_tokens=96, temperature=0
    )
    assert served.choices[0].message.content == direct
    from openmind.core.errors import OpenMindError

    with pytest.raises(OpenMindError) as info:
        chat(messages, response_format={"type": "yaml"})
    assert info.value.code == "OM-I102" and info.value.location == "response_format"


def test_rows_with_different_seeds_share_one_batch_and_each_draws_what_it_draws_alone(engine, server):
    """Per-row ``seed``: rows that differ only by seed run in ONE ``generate_batch`` call, each
    row's sample equal to that prompt generated alone with its seed (the unbatched path seeds the
    global generator; the batch gives each row its own)."""
    from openmind.nlp.pipelines.base import GenerationParams

    wrapper = engine.generator
    backend = wrapper.backend
    prompts = [wrapper.prompt(wrapper.check_item(text, None), {}) for text in ("hi", "tell me a story", "hi", "x")]
    seeds = [11, 12, 13, None]
    rows = [GenerationParams(max_new_tokens=12, do_sample=True, temperature=1.0, seed=s) for s in seeds]
    alone = [backend.generate([p], r)[0].token_ids for p, r in zip(prompts, rows)]
    assert alone[0] != alone[2]  # the same prompt, other seed: another sample (not one stream cut in rows)
    calls = []
    real = backend.generate_batch

    def counting(batch_prompts, params, *args, **kwargs):
        calls.append((len(batch_prompts), params.seed))
        return real(batch_prompts, params, *args, **kwargs)

    backend.generate_batch = counting
    try:
        batched = backend.generate(prompts, rows, batch_size=4)
    finally:
        del backend.generate_batch
    assert calls == [(4, None)]
    assert [g.token_ids for g in batched[:3]] == alone[:3]
    # with grammar rows in the same batch too, and over HTTP: n=3 with a seed is one batch whose
    # choices equal three requests seeded seed, seed+1, seed+2 (the server's per-choice seeds)
    c = client(server)
    kw = dict(model="tiny", messages=[{"role": "user", "content": "hi"}], max_tokens=8, temperature=1.0)
    several = c.chat.completions.create(n=3, seed=40, **kw)
    one_by_one = [c.chat.completions.create(seed=40 + k, **kw).choices[0].message.content for k in range(3)]
    assert [choice.message.content for choice in several.choices] == one_by_one
    assert len(set(one_by_one)) == 3
