"""The OpenAI-compatible app over a scripted engine: routes, auth, validation, streaming, limits,
batching, cancellation, timeouts, 429 (framework-free; real models in openmind-pt/tests/serve)."""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import threading
import time

import httpx
import openai
import pytest
from scripted_engine import ScriptedEngine

from openmind.nlp.serve.app import ServeSettings, create_app
from openmind.nlp.serve.schemas import Limits
from openmind.nlp.serve.server import ServerThread

KEY = "sk-test-123"


def serve(engine=None, **kw):
    settings = ServeSettings(served_model_name="scripted", api_key=kw.pop("api_key", KEY), **kw)
    return ServerThread(create_app(engine or ScriptedEngine(), settings))


@pytest.fixture(scope="module")
def server():
    with serve(limits=Limits(max_prompt_tokens=50, max_tokens_cap=100, max_n=3)) as s:
        yield s


def post(server, path, body, key=KEY, **kw):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    if isinstance(body, (dict, list)):
        return httpx.post(server.url + path, json=body, headers=headers, timeout=30, **kw)
    return httpx.post(
        server.url + path, content=body, headers={**headers, "Content-Type": "application/json"}, timeout=30
    )


def client(server, key=KEY):
    return openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0, timeout=30)


def test_health_is_open_everything_else_needs_the_key(server):
    assert httpx.get(server.url + "/health").json()["status"] == "ok"
    assert httpx.get(server.url + "/v1/models").status_code == 401
    r = httpx.get(server.url + "/v1/models", headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
    with pytest.raises(openai.AuthenticationError):
        client(server, "wrong").chat.completions.create(model="scripted", messages=[{"role": "user", "content": "x"}])
    ids = [m.id for m in client(server).models.list().data]
    assert ids == ["scripted", "shout"]


def test_chat_non_streaming_and_usage(server):
    r = client(server).chat.completions.create(
        model="scripted", messages=[{"role": "user", "content": "hello world"}], max_tokens=50, temperature=0
    )
    assert r.choices[0].message.content == "dlrow olleh"
    assert r.choices[0].finish_reason == "stop"
    assert r.usage.prompt_tokens == 5 and r.usage.completion_tokens == 11 and r.usage.total_tokens == 16
    assert r.id.startswith("chatcmpl-") and r.object == "chat.completion"


def test_chat_max_tokens_n_logprobs_and_adapter(server):
    c = client(server)
    r = c.chat.completions.create(
        model="scripted",
        messages=[{"role": "user", "content": "abcdef"}],
        max_tokens=3,
        n=2,
        logprobs=True,
        top_logprobs=1,
    )
    assert [ch.message.content for ch in r.choices] == ["fed", "fed"]
    assert [ch.finish_reason for ch in r.choices] == ["length", "length"]
    content = r.choices[0].logprobs.content
    assert [t.token for t in content] == ["f", "e", "d"] and content[0].logprob == -0.5
    assert content[0].top_logprobs[0].token == "f" and content[0].bytes == [ord("f")]
    shout = c.chat.completions.create(model="shout", messages=[{"role": "user", "content": "abc"}])
    assert shout.choices[0].message.content == "CBA" and shout.model == "shout"


def test_chat_streaming_with_the_openai_client(server):
    stream = client(server).chat.completions.create(
        model="scripted",
        messages=[{"role": "user", "content": "streaming text"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "txet gnimaerts"
    assert chunks[0].choices[0].delta.role == "assistant"
    finals = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finals == ["stop"]
    assert chunks[-1].usage.completion_tokens == len(text)


def test_stream_never_shows_a_stop_string(server):
    with httpx.stream(
        "POST",
        server.url + "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "xyz STOP abc"}], "stream": True, "stop": ["POTS"]},
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=30,
    ) as r:
        lines = [line for line in r.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    deltas = [json.loads(line[6:]) for line in lines[:-1]]
    text = "".join(d["choices"][0]["delta"].get("content") or "" for d in deltas)
    assert text == "cba "  # reversed "xyz STOP abc" = "cba POTS zyx", cut before the stop string
    assert "P" not in text


def test_completions_echo_logprobs_for_loglikelihood(server):
    r = client(server).completions.create(model="scripted", prompt="the cat", max_tokens=2, echo=True, logprobs=1)
    choice = r.choices[0]
    assert choice.text == "the cat" + "ta"
    assert choice.logprobs.tokens == ["the", " cat", "t", "a"]
    assert choice.logprobs.token_logprobs == [None, -1.0, -0.5, -0.5]
    assert choice.logprobs.top_logprobs[0] is None and choice.logprobs.top_logprobs[1] == {" cat": -1.0}
    assert choice.logprobs.text_offset == [0, 3, 7, 8]
    # token-id prompts, several per request (what lm-eval's local-completions sends)
    r = post(server, "/v1/completions", {"prompt": [[5, 6], [7, 8, 9]], "max_tokens": 1, "echo": True, "logprobs": 1})
    assert r.status_code == 200
    assert [len(c["logprobs"]["tokens"]) for c in r.json()["choices"]] == [3, 4]
    # max_tokens 0 with echo: only the prompt is scored
    r = post(server, "/v1/completions", {"prompt": "a b c", "max_tokens": 0, "echo": True, "logprobs": 0})
    assert r.json()["choices"][0]["logprobs"]["token_logprobs"] == [None, -1.0, -1.0]


def test_embeddings_float_and_base64(server):
    c = client(server)
    r = c.embeddings.create(model="scripted", input=["ab", "abcd"], encoding_format="float")
    assert [d.embedding for d in r.data] == [[2.0, 1.0], [4.0, 1.0]]
    raw = post(server, "/v1/embeddings", {"input": "abc", "encoding_format": "base64"}).json()
    packed = base64.b64decode(raw["data"][0]["embedding"])
    assert struct.unpack("<2f", packed) == (3.0, 1.0)


ONE = {"messages": [{"role": "user", "content": "x"}]}


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ("{not json", 400, "malformed JSON"),
        ("[1, 2]", 400, "JSON object"),
        ({"messages": "hello"}, 400, "messages"),
        ({"messages": []}, 400, "messages"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, 400, "messages.0.role"),
        ({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"}, 400, "temperature"),
        ({"messages": [{"role": "user", "content": "x"}], "temperature": 3}, 400, "temperature"),
        ({**ONE, "presence_penalty": 2.5}, 400, "presence_penalty"),
        ({**ONE, "max_tokens": "5"}, 400, "max_tokens"),
        ({**ONE, "max_tokens": True}, 400, "max_tokens"),
        ({**ONE, "seed": 2**80}, 400, "seed"),
        ({**ONE, "logit_bias": {"abc": 1}}, 400, "logit_bias"),
        ({**ONE, "logit_bias": {"5": 101}}, 400, "logit_bias"),
        ({**ONE, "tool_choice": "required"}, 400, "needs 'tools'"),
        ({**ONE, "response_format": {"type": "yaml"}}, 400, "response_format"),
        ({**ONE, "top_k": "many"}, 400, "top_k"),
        ({**ONE, "min_p": 2}, 400, "min_p"),
        ({"messages": [{"role": "user", "content": "x"}], "n": 4}, 400, "n=4 is over"),
        ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 101}, 400, "max_tokens=101 is over"),
        ({"messages": [{"role": "user", "content": "word " * 60}]}, 400, "over this server's limit of 50"),
        ({"messages": [{"role": "user", "content": "x"}], "model": "gpt-9"}, 404, "not served here"),
        ({"messages": [{"role": "user", "content": "x"}], "stop": ["a", "b", "c", "d", "e"]}, 400, "at most 4"),
    ],
)
def test_bad_bodies_get_openai_style_errors(server, body, status, needle):
    r = post(server, "/v1/chat/completions", body)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert needle in error["message"], error
    assert set(error) == {"message", "type", "param", "code"}


def test_openai_client_raises_bad_request(server):
    with pytest.raises(openai.BadRequestError) as info:
        client(server).chat.completions.create(model="scripted", messages=[{"role": "user", "content": "x"}], n=9)
    assert "n=9" in str(info.value)


def test_internal_errors_hide_details():
    with serve(ScriptedEngine(fail_on="boom")) as s:
        r = post(s, "/v1/chat/completions", {"messages": [{"role": "user", "content": "boom"}]})
        assert r.status_code == 500
        assert "secret" not in r.text and "Traceback" not in r.text
        assert r.json()["error"]["type"] == "server_error"


def test_concurrent_requests_are_batched_and_each_gets_its_own_answer():
    engine = ScriptedEngine(step_s=0.002)
    with serve(engine, max_batch_size=8, batch_wait_ms=50) as s:

        async def main():
            async with httpx.AsyncClient(base_url=s.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=30) as c:
                prompts = [f"request number {i}" for i in range(16)]
                rs = await asyncio.gather(
                    *(
                        c.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": p}]})
                        for p in prompts
                    )
                )
                return prompts, rs

        prompts, responses = asyncio.run(main())
    for p, r in zip(prompts, responses):
        assert r.json()["choices"][0]["message"]["content"] == p[::-1]
    assert max(engine.batches) >= 4, engine.batches
    assert sum(engine.batches) == 16


def test_a_lone_client_never_waits_for_a_batch_to_fill():
    # the batching window only holds a batch open for clients of the previous batch that have not
    # come back yet: one client in a loop must not pay it on every request (here 3 s, so any wait
    # shows; 6 sequential requests take well under one window)
    engine = ScriptedEngine(step_s=0.001)
    with serve(engine, max_batch_size=8, batch_wait_ms=3000) as s:
        post(s, "/v1/chat/completions", {"messages": [{"role": "user", "content": "warm"}]})  # the first may wait
        before = httpx.get(s.url + "/health").json()
        start = time.perf_counter()
        for i in range(6):
            r = post(s, "/v1/chat/completions", {"messages": [{"role": "user", "content": f"one {i}"}]})
            assert r.json()["choices"][0]["message"]["content"] == f"{i} eno"
        assert time.perf_counter() - start < 3.0
        after = httpx.get(s.url + "/health").json()
    # the batcher's own account: not a moment held back, while the engine ran six batches
    assert after["wait_seconds"] == before["wait_seconds"]
    assert after["busy_seconds"] > before["busy_seconds"] and after["batches"] == before["batches"] + 6
    assert engine.batches[-6:] == [1] * 6


def test_queue_overflow_gives_429():
    engine = ScriptedEngine(step_s=0.02)
    with serve(engine, max_batch_size=1, batch_wait_ms=0, max_queue=2) as s:

        async def main():
            async with httpx.AsyncClient(base_url=s.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=30) as c:
                return await asyncio.gather(
                    *(
                        c.post(
                            "/v1/chat/completions", json={"messages": [{"role": "user", "content": f"q{i} long text"}]}
                        )
                        for i in range(12)
                    )
                )

        responses = asyncio.run(main())
    codes = [r.status_code for r in responses]
    # every request is answered (none lost): at least the bound (2) is accepted, the overflow gets 429
    assert codes.count(429) >= 1 and codes.count(200) >= 2 and codes.count(200) + codes.count(429) == 12, codes
    busy = next(r for r in responses if r.status_code == 429)
    assert busy.json()["error"]["code"] == "queue_full" and busy.headers["retry-after"] == "1"
    # deterministic: one request running, one waiting (the bound), the next one is refused
    engine = ScriptedEngine(step_s=0.05)
    with serve(engine, max_batch_size=1, batch_wait_ms=0, max_queue=1) as s2:
        # 60 tokens x 50 ms: a 3 s window even on a loaded machine
        body = {"messages": [{"role": "user", "content": "x" * 60}]}
        threads = [threading.Thread(target=post, args=(s2, "/v1/chat/completions", body)) for _ in range(2)]
        threads[0].start()
        while not engine.batches:
            time.sleep(0.005)
        threads[1].start()
        while httpx.get(s2.url + "/health").json()["queued"] < 1:
            time.sleep(0.005)
        try:
            with pytest.raises(openai.RateLimitError):
                # no client-side retries: the openai client retries 429s by default, and a retry
                # after the running request finished would (rightly) succeed
                client(s2).with_options(max_retries=0).chat.completions.create(
                    model="scripted", messages=[{"role": "user", "content": "late"}]
                )
        finally:
            for t in threads:
                t.join()


def test_client_disconnect_cancels_a_streaming_request():
    engine = ScriptedEngine(step_s=0.01)
    with serve(engine) as s:
        with httpx.stream(
            "POST",
            s.url + "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "z" * 400}], "stream": True, "max_tokens": 100},
            headers={"Authorization": f"Bearer {KEY}"},
            timeout=30,
        ) as r:
            for line in r.iter_lines():
                if '"content": "z"' in line:
                    break  # leave after the first token
        deadline = time.time() + 5
        while engine.cancelled_rows == 0 and time.time() < deadline:
            time.sleep(0.02)
    assert engine.cancelled_rows == 1


def test_timeout_gives_504():
    with serve(ScriptedEngine(step_s=0.05), request_timeout=0.2) as s:
        r = post(s, "/v1/chat/completions", {"messages": [{"role": "user", "content": "y" * 50}], "max_tokens": 50})
    assert r.status_code == 504 and r.json()["error"]["code"] == "timeout"


def test_server_connections_have_nagle_off():
    # asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP; a listening socket made
    # with proto 0 left Nagle on, and every keep-alive response then waited ~40 ms for a delayed ACK
    import socket

    from openmind.nlp.serve.server import bind_socket

    async def main():
        listener = bind_socket("127.0.0.1", 0)
        seen = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport):
                sock = transport.get_extra_info("socket")
                seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=listener)
        reader, writer = await asyncio.open_connection(*listener.getsockname()[:2])
        value = await asyncio.wait_for(seen, 10)
        writer.close()
        server.close()
        return value

    assert asyncio.run(main()) != 0


def test_keep_alive_requests_are_not_delayed():
    # the symptom itself: ten requests on one keep-alive connection (Nagle on: ~40 ms each)
    with serve(ScriptedEngine()) as s, httpx.Client(base_url=s.url, timeout=30) as c:
        c.get("/health")
        start = time.perf_counter()
        for _ in range(10):
            assert c.get("/health").status_code == 200
        assert time.perf_counter() - start < 0.35


def test_server_runs_on_uvloop_and_httptools():
    # openmind-nlp[serve] installs both: asyncio's loop and h11 cost about as much CPU per request
    # as decoding a short answer on a small model
    with serve(ScriptedEngine()) as s:
        config = s.server.config
        assert (config.loop, config.http) == ("uvloop", "httptools")
        assert config.http_protocol_class.__name__ == "HttpToolsProtocol"
        r = post(s, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3})
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"]


def test_short_text_prompts_are_prepared_on_the_event_loop_long_ones_off_it():
    """Rendering and tokenizing a short text prompt takes less than a hand-off to a worker thread
    and back: it runs on the event loop. A long prompt, tools or image parts go to a worker thread
    (the loop keeps answering other clients meanwhile)."""
    from openmind.nlp.serve.context import INLINE_PREPARE_CHARS, ServeContext
    from openmind.nlp.serve.engine import Job

    engine = ScriptedEngine()
    seen = []

    def recording(job):
        seen.append(threading.current_thread() is threading.main_thread())
        return 1

    engine.prepare = recording
    ctx = ServeContext(engine, ServeSettings())
    user = {"role": "user", "content": "hi there"}
    image = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}
    cases = [
        (Job(kind="chat", prompt=[user]), True),
        (Job(kind="completion", prompt="once upon a time"), True),
        (Job(kind="completion", prompt=[1, 2, 3]), True),
        (Job(kind="embedding", prompt=["a", "b"]), True),
        (Job(kind="chat", prompt=[{"role": "user", "content": "x" * (INLINE_PREPARE_CHARS + 1)}]), False),
        (Job(kind="chat", prompt=[user] * (INLINE_PREPARE_CHARS // 8)), False),
        (Job(kind="chat", prompt=[user], tools=[{"type": "function", "function": {"name": "f"}}]), False),
        (Job(kind="chat", prompt=[image]), False),
        (Job(kind="embedding", prompt=[[1, 2], [3]]), False),
    ]

    async def run():
        for job, _ in cases:
            await ctx.prepare_async(job)

    asyncio.run(run())
    assert seen == [inline for _, inline in cases]
