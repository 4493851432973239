"""Load on loopback (bounded, stops by itself): 200 concurrent chat requests against the tiny
model; none lost, none mis-routed (each answer is the greedy answer to its own prompt), p50/p99
latency reported; a small queue bound gives 429s."""

from __future__ import annotations

import asyncio
import statistics
import time

import httpx
import pytest
from conftest import build

from openmind.nlp.serve.app import ServeSettings, create_app
from openmind.nlp.serve.server import ServerThread

N_REQUESTS = 200
N_PROMPTS = 20
MAX_TOKENS = 4


@pytest.fixture(scope="module")
def engine(tiny_model):
    return build(tiny_model)


async def fire(url: str, prompts: list[str]):
    limits = httpx.Limits(max_connections=N_REQUESTS, max_keepalive_connections=N_REQUESTS)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as c:

        async def one(prompt: str):
            start = time.perf_counter()
            r = await c.post(
                "/v1/chat/completions",
                json={"messages": [{"role": "user", "content": prompt}], "max_tokens": MAX_TOKENS, "temperature": 0},
            )
            return r, time.perf_counter() - start

        return await asyncio.gather(*(one(p) for p in prompts))


@pytest.mark.slow
def test_200_concurrent_requests_none_lost_or_misrouted(engine):
    distinct = [f"Request {i}: tell me about topic {i * 7}" for i in range(N_PROMPTS)]
    expected = {
        p: g["content"] for p, g in zip(distinct, engine.generator(distinct, max_new_tokens=MAX_TOKENS, temperature=0))
    }
    assert len(set(expected.values())) > N_PROMPTS // 2  # answers tell the prompts apart
    prompts = [distinct[i % N_PROMPTS] for i in range(N_REQUESTS)]
    settings = ServeSettings(served_model_name="tiny", max_batch_size=32, batch_wait_ms=10, max_queue=N_REQUESTS)
    app = create_app(engine, settings)
    with ServerThread(app) as server:
        results = asyncio.run(fire(server.url, prompts))
        stats = app.state.scheduler.stats
    assert [r.status_code for r, _ in results] == [200] * N_REQUESTS
    answers = [r.json()["choices"][0]["message"]["content"] for r, _ in results]
    assert answers == [expected[p] for p in prompts]
    latencies = sorted(t for _, t in results)
    p50 = statistics.median(latencies)
    p99 = latencies[int(0.99 * (len(latencies) - 1))]
    print(
        f"\n200 concurrent requests: p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
        f"{stats.batches} batches, largest {stats.largest_batch}"
    )
    assert stats.jobs == N_REQUESTS and stats.largest_batch == 32 and stats.batches < N_REQUESTS / 4


def test_queue_overflow_gives_429_and_the_rest_complete(engine):
    settings = ServeSettings(served_model_name="tiny", max_batch_size=4, batch_wait_ms=0, max_queue=8)
    with ServerThread(create_app(engine, settings)) as server:
        results = asyncio.run(fire(server.url, [f"prompt {i}" for i in range(40)]))
    codes = [r.status_code for r, _ in results]
    assert set(codes) == {200, 429} and codes.count(200) >= 8, codes
    assert all(r.json()["error"]["code"] == "queue_full" for r, _ in results if r.status_code == 429)
