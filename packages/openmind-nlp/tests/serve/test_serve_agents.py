"""The server's agent-facing promises over the scripted engine (framework-free):

* tool calls parsed from what the model writes (the scripted engine answers the last user text
  reversed, so a test makes it "write" an official Hermes call) — non-streaming, streaming deltas
  in OpenAI's shape through the ``openai`` client, parallel calls, malformed calls as text;
* schema tolerance: vLLM's sampling extras and ``do_sample`` accepted, unknown fields ignored and
  named in a response header, ``--strict-schema`` restores the 400;
* abuse: an abandoned non-streaming request is cancelled and does not delay the next client; big
  bodies do not freeze ``/health``; ``max_tokens`` beyond the model's context is a clear 400.
"""

from __future__ import annotations

import json
import threading
import time

import httpx
import openai
import pytest
from scripted_engine import ScriptedEngine

from openmind.nlp.serve.app import ServeSettings, create_app
from openmind.nlp.serve.server import ServerThread

KEY = "sk-test-agents"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "weather of a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}},
]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
CALL2 = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'


class ToolEngine(ScriptedEngine):
    """The scripted engine behind a Hermes-format template, with a 256-token context."""

    context_length = 256

    def tool_parser(self):
        from openmind.nlp.templates.toolcalls import get_tool_parser

        return get_tool_parser("hermes")


def serve(engine=None, **kw):
    settings = ServeSettings(served_model_name="scripted", api_key=KEY, **kw)
    return ServerThread(create_app(engine or ToolEngine(), settings))


@pytest.fixture(scope="module")
def server():
    with serve() as s:
        yield s


def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0, timeout=30)


def says(text: str) -> list[dict]:
    """A conversation the scripted engine answers with ``text``."""
    return [{"role": "user", "content": text[::-1]}]


def test_non_streaming_tool_calls_with_ids_and_json_string_arguments(server):
    r = client(server).chat.completions.create(
        model="scripted", messages=says("Checking.\n" + CALL + "\n" + CALL2), tools=TOOLS, max_tokens=200
    )
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Checking."
    calls = choice.message.tool_calls
    assert [c.function.name for c in calls] == ["get_weather", "get_time"]
    assert json.loads(calls[0].function.arguments) == {"city": "Paris"} and calls[0].type == "function"
    assert calls[0].id.startswith("call_") and calls[0].id != calls[1].id
    # parallel_tool_calls: false keeps the first call only
    r = client(server).chat.completions.create(
        model="scripted", messages=says(CALL + CALL2), tools=TOOLS, max_tokens=200, parallel_tool_calls=False
    )
    assert [c.function.name for c in r.choices[0].message.tool_calls] == ["get_weather"]


def test_without_tools_or_with_tool_choice_none_the_text_is_content(server):
    for extra in ({}, {"tools": TOOLS, "tool_choice": "none"}):
        r = client(server).chat.completions.create(model="scripted", messages=says(CALL), max_tokens=200, **extra)
        assert r.choices[0].message.content == CALL and not r.choices[0].message.tool_calls


def test_streamed_tool_call_deltas_in_openais_shape(server):
    stream = client(server).chat.completions.create(
        model="scripted", messages=says("Hi.\n" + CALL), tools=TOOLS, max_tokens=200, stream=True
    )
    content, calls, finish = "", {}, None
    for chunk in stream:
        delta = chunk.choices[0].delta
        content += delta.content or ""
        for tc in delta.tool_calls or []:
            entry = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
            entry["id"] = tc.id or entry["id"]
            entry["name"] += (tc.function.name or "") if tc.function else ""
            entry["arguments"] += (tc.function.arguments or "") if tc.function else ""
        finish = chunk.choices[0].finish_reason or finish
    assert "<tool_call>" not in content and content.strip() == "Hi."
    assert finish == "tool_calls"
    assert calls[0]["name"] == "get_weather" and json.loads(calls[0]["arguments"]) == {"city": "Paris"}
    assert calls[0]["id"].startswith("call_")


def test_malformed_call_comes_back_as_text_with_a_finish_reason_that_says_so(server):
    bad = '<tool_call>\n{"name": "get_weather", "arguments": {"city": </tool_call>'
    r = httpx.post(
        server.url + "/v1/chat/completions",
        json={"messages": says(bad), "tools": TOOLS, "max_tokens": 200},
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    choice = r.json()["choices"][0]
    assert choice["finish_reason"] == "malformed_tool_call" and choice["message"]["content"] == bad


def test_tool_results_go_back_through_the_template(server):
    """An assistant turn with OpenAI tool_calls (arguments as a JSON string) and a tool result are
    accepted and handed to the engine with the arguments as an object (what templates render)."""
    seen = {}
    engine = ToolEngine()
    prepare = engine.prepare

    def spy(job):
        seen["prompt"] = job.prompt
        return prepare(job)

    engine.prepare = spy
    with serve(engine) as s:
        messages = [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ]
        r = client(s).chat.completions.create(model="scripted", messages=messages, tools=TOOLS, max_tokens=20)
    assert r.choices[0].message.content == "ynnus"
    assert seen["prompt"][1]["tool_calls"][0]["function"]["arguments"] == {"city": "Paris"}
    assert seen["prompt"][2] == {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}


def test_vllm_extras_accepted_unknown_fields_ignored_and_named(server):
    c = client(server)
    r = c.chat.completions.with_raw_response.create(
        model="scripted",
        messages=says("ok"),
        max_tokens=5,
        extra_body={"top_k": 20, "min_p": 0.1, "repetition_penalty": 1.1, "do_sample": False, "best_of_n": 3, "zz": 1},
    )
    assert r.http_response.status_code == 200
    assert r.headers["x-openmind-ignored-fields"] == "best_of_n, zz"
    assert r.parse().choices[0].message.content == "ok"
    r = c.chat.completions.with_raw_response.create(model="scripted", messages=says("ok"), max_tokens=5)
    assert "x-openmind-ignored-fields" not in r.headers


def test_strict_schema_restores_the_400():
    with serve(strict_schema=True) as s:
        r = httpx.post(
            s.url + "/v1/chat/completions",
            json={"messages": says("ok"), "frobnicate": 1},
            headers={"Authorization": f"Bearer {KEY}"},
            timeout=30,
        )
    assert r.status_code == 400 and "frobnicate: unknown field" in r.json()["error"]["message"]


def test_max_tokens_beyond_the_context_is_a_clear_400_and_a_default_is_cut(server):
    r = httpx.post(
        server.url + "/v1/chat/completions",
        json={"messages": says("abc"), "max_tokens": 254},
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=30,
    )
    error = r.json()["error"]
    assert r.status_code == 400 and error["param"] == "max_tokens" and error["code"] == "context_length_exceeded"
    assert "context of 256" in error["message"] and "at most 252" in error["message"]
    r = client(server).chat.completions.create(model="scripted", messages=says("abc"))  # default: cut to 252
    assert r.choices[0].message.content == "abc"


def test_suffix_is_refused_clearly(server):
    r = httpx.post(
        server.url + "/v1/completions",
        json={"prompt": "def f(", "suffix": "return x"},
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=30,
    )
    assert r.status_code == 400 and "suffix" in r.json()["error"]["message"]
    assert "not supported" in r.json()["error"]["message"]


def test_abandoned_non_streaming_request_is_cancelled_and_does_not_delay_the_next():
    engine = ToolEngine(step_s=0.02)
    engine.context_length = None
    with serve(engine) as s:
        headers = {"Authorization": f"Bearer {KEY}"}
        # 1500 steps x 20 ms = 30 s if it ran to the end; the client gives up after 0.5 s
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(
                s.url + "/v1/chat/completions",
                json={"messages": [{"role": "user", "content": "q" * 1500}], "max_tokens": 1500},
                headers=headers,
                timeout=0.5,
            )
        deadline = time.time() + 10
        while engine.cancelled_rows == 0 and time.time() < deadline:
            time.sleep(0.05)
        assert engine.cancelled_rows == 1
        started = time.perf_counter()
        r = httpx.post(
            s.url + "/v1/chat/completions",
            json={"messages": says("fast"), "max_tokens": 10},
            headers=headers,
            timeout=30,
        )
        waited = time.perf_counter() - started
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "fast"
    assert waited < 5.0, f"the next client waited {waited:.1f} s behind an abandoned request"


def test_big_bodies_do_not_freeze_health():
    """Three ~5 MB bodies (parsed and validated off the event loop) while /health is polled."""
    with serve(ToolEngine()) as s:
        big = json.dumps({"messages": [{"role": "user", "content": "x " * 2_500_000}], "max_tokens": 5})
        results = []

        def send():
            r = httpx.post(
                s.url + "/v1/chat/completions",
                content=big,
                headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
                timeout=120,
            )
            results.append(r.status_code)

        threads = [threading.Thread(target=send) for _ in range(3)]
        for t in threads:
            t.start()
        worst = 0.0
        while any(t.is_alive() for t in threads):
            started = time.perf_counter()
            assert httpx.get(s.url + "/health", timeout=30).status_code == 200
            worst = max(worst, time.perf_counter() - started)
            time.sleep(0.02)
        for t in threads:
            t.join()
    assert results == [400, 400, 400]  # over the 8192-token prompt limit: refused, with a reason
    assert worst < 2.0, f"/health took {worst:.2f} s while big bodies arrived"


def test_fuzzed_bodies_never_get_a_500(server):
    """Random JSON bodies over the chat schema's fields: every answer is a 200 or a 4xx with OpenAI's body."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**90), max_value=2**90),
        st.floats(allow_nan=True),
        st.text(max_size=8),
    )
    values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=6,
    )
    fields = [
        "max_tokens",
        "seed",
        "temperature",
        "top_p",
        "n",
        "stop",
        "logit_bias",
        "tools",
        "tool_choice",
        "response_format",
        "top_k",
        "min_p",
        "repetition_penalty",
        "stream_options",
        "logprobs",
    ]
    bodies = st.fixed_dictionaries({"messages": st.just(says("ok"))}, optional={f: values for f in fields})

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(bodies)
    def check(body):
        # NaN / Infinity as Python's json writes them: a server must answer them, not only valid JSON
        r = httpx.post(
            server.url + "/v1/chat/completions",
            content=json.dumps(body, allow_nan=True),
            headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
            timeout=30,
        )
        assert r.status_code < 500, (body, r.text)
        if r.status_code >= 400:
            assert set(r.json()["error"]) == {"message", "type", "param", "code"}

    check()
