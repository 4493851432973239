"""The native server on a real (tiny, random) Llama with the real Llama-2 tokenizer and chat
template: what it serves equals what the chat pipeline returns; batching does not change greedy
outputs; echo logprobs equal the pipeline's log-likelihoods; LoRA adapters by name; embeddings
from the real MiniLM encoder."""

from __future__ import annotations

import asyncio

import httpx
import openai
import pytest
from conftest import build

from openmind.nlp.serve.app import ServeSettings, create_app
from openmind.nlp.serve.server import ServerThread


@pytest.fixture(scope="module")
def engine(tiny_model, lora_adapter):
    return build(tiny_model, lora_adapters=[f"lora-a={lora_adapter}"], served_model_name="tiny")


@pytest.fixture(scope="module")
def chat(tiny_model):
    """The chat pipeline on its own (the engine's copy has LoRA adapters added)."""
    from openmind import pipeline

    return pipeline("chat", model=tiny_model, framework="pt", device="cpu")


@pytest.fixture(scope="module")
def server(engine):
    with ServerThread(
        create_app(engine, ServeSettings(served_model_name="tiny", max_batch_size=8, batch_wait_ms=20))
    ) as s:
        yield s


def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0, timeout=60)


CONVERSATIONS = [
    [{"role": "user", "content": "Hello there"}],
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Name a colour."}],
    [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Tell me a joke about cats"},
    ],
]


def test_served_chat_equals_the_chat_pipeline(server, chat):
    c = client(server)
    for messages in CONVERSATIONS:
        served = c.chat.completions.create(model="tiny", messages=messages, max_tokens=12, temperature=0)
        direct = chat(messages, max_new_tokens=12, temperature=0)
        assert served.choices[0].message.content == direct["content"]
        assert served.usage.completion_tokens == 12 and served.choices[0].finish_reason == "length"
        prompt_ids = chat.prompt(chat.check_item(messages, None), {})
        assert served.usage.prompt_tokens == len(prompt_ids)


def test_streaming_equals_non_streaming(server):
    c = client(server)
    messages = CONVERSATIONS[2]
    whole = c.chat.completions.create(model="tiny", messages=messages, max_tokens=16, temperature=0)
    chunks = list(c.chat.completions.create(model="tiny", messages=messages, max_tokens=16, temperature=0, stream=True))
    streamed = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert streamed == whole.choices[0].message.content and len(streamed) > 0


def test_seeded_sampling_is_reproducible_and_differs_from_greedy(server):
    c = client(server)
    kw = dict(model="tiny", messages=CONVERSATIONS[0], max_tokens=10, temperature=1.0, seed=7)
    a = c.chat.completions.create(**kw).choices[0].message.content
    b = c.chat.completions.create(**kw).choices[0].message.content
    greedy = c.chat.completions.create(model="tiny", messages=CONVERSATIONS[0], max_tokens=10, temperature=0)
    assert a == b and a != greedy.choices[0].message.content


def test_concurrent_requests_batch_without_changing_greedy_outputs(server, chat):
    prompts = [f"Question {i}: what is {i} plus {i}?" for i in range(8)]
    expected = chat([p for p in prompts], max_new_tokens=8, temperature=0, batch_size=1)

    async def main():
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as c:
            return await asyncio.gather(
                *(
                    c.post(
                        "/v1/chat/completions",
                        json={"messages": [{"role": "user", "content": p}], "max_tokens": 8, "temperature": 0},
                    )
                    for p in prompts
                )
            )

    before = server.server.config.app.state.scheduler.stats.largest_batch
    responses = asyncio.run(main())
    got = [r.json()["choices"][0]["message"]["content"] for r in responses]
    assert got == [e["content"] for e in expected]
    assert server.server.config.app.state.scheduler.stats.largest_batch >= max(before, 4)


def test_completion_echo_logprobs_equal_the_pipeline_loglikelihood(server, chat):
    backend = chat.backend
    context, continuation = "The quick brown fox", " jumps over the dog"
    ctx_ids = backend.tokenizer(context)["input_ids"]
    whole = backend.tokenizer(context + continuation)["input_ids"]
    r = client(server).completions.create(
        model="tiny", prompt=whole, max_tokens=1, echo=True, logprobs=1, temperature=0
    )
    lp = r.choices[0].logprobs
    assert len(lp.tokens) == len(whole) + 1 and lp.token_logprobs[0] is None
    served = sum(lp.token_logprobs[len(ctx_ids) : -1])
    [(expected, greedy)] = chat.loglikelihood([(context, continuation)])
    assert served == pytest.approx(expected, abs=1e-4)
    is_greedy = all(
        t == max(top.values())
        for t, top in zip(lp.token_logprobs[len(ctx_ids) : -1], lp.top_logprobs[len(ctx_ids) : -1])
    )
    assert is_greedy == greedy
    text = client(server).completions.create(
        model="tiny", prompt="Once upon a time", max_tokens=5, temperature=0, echo=True
    )
    assert text.choices[0].text.startswith("<s>") or text.choices[0].text.startswith("Once")
    assert "Once upon a time" in text.choices[0].text


def test_chat_logprobs_are_the_chosen_tokens(server):
    r = client(server).chat.completions.create(
        model="tiny", messages=CONVERSATIONS[0], max_tokens=6, temperature=0, logprobs=True, top_logprobs=2
    )
    content = r.choices[0].logprobs.content
    assert len(content) == 6
    assert "".join(t.token for t in content) == r.choices[0].message.content
    for t in content:  # greedy: the chosen token is the best alternative
        assert t.logprob == pytest.approx(t.top_logprobs[0].logprob) and t.logprob < 0


def test_lora_adapter_served_by_name(server, tiny_model, lora_adapter):
    from openmind import pipeline

    c = client(server)
    assert [m.id for m in c.models.list().data] == ["tiny", "lora-a"]
    with_adapter = c.chat.completions.create(model="lora-a", messages=CONVERSATIONS[0], max_tokens=10, temperature=0)
    base = c.chat.completions.create(model="tiny", messages=CONVERSATIONS[0], max_tokens=10, temperature=0)
    direct = pipeline("chat", model=tiny_model, adapter=lora_adapter, framework="pt", device="cpu")
    expected = direct(CONVERSATIONS[0], max_new_tokens=10, temperature=0)["content"]
    assert with_adapter.choices[0].message.content == expected
    assert with_adapter.choices[0].message.content != base.choices[0].message.content


def test_embeddings_from_the_real_minilm():
    from openmind.nlp.testing.assets import minilm_path

    engine = build(str(minilm_path()))
    assert engine.kinds == frozenset({"embedding"})
    with ServerThread(create_app(engine, ServeSettings(served_model_name="minilm", api_key="k"))) as s:
        c = openai.OpenAI(base_url=s.url + "/v1", api_key="k", max_retries=0)
        r = c.embeddings.create(
            model="minilm", input=["A man is eating food.", "A man is eating a meal.", "The stock market fell today."]
        )
        a, b, z = (d.embedding for d in r.data)
        assert len(a) == 384
        dot = lambda x, y: sum(p * q for p, q in zip(x, y))  # noqa: E731
        assert dot(a, b) > dot(a, z) + 0.3
        assert r.usage.prompt_tokens > 0
        bad = httpx.post(
            s.url + "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "x"}]},
            headers={"Authorization": "Bearer k"},
        )
        assert bad.status_code == 400 and "not a chat model" in bad.json()["error"]["message"]
