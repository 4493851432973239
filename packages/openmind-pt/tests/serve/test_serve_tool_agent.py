"""slow -- a tiny model fine-tuned here (full SFT, a few hundred steps, like the quickstart) to write
Qwen2.5/Hermes tool calls for a small tool set, then served: the ``openai`` client gets parsed
``tool_calls`` (streaming and not), and LangChain's ``ChatOpenAI.bind_tools`` runs a two-step tool
loop (call -> tool result -> final answer) against it. Trained once per module, under the test tmp.
"""

from __future__ import annotations

import json
import random

import openai
import pytest
from conftest import build

from openmind.nlp.serve.app import ServeSettings, create_app
from openmind.nlp.serve.server import ServerThread

pytestmark = pytest.mark.slow

langchain_core = pytest.importorskip("langchain_core")
langchain_openai = pytest.importorskip("langchain_openai")

CITIES = ["Paris", "Rome", "Oslo", "Lima", "Cairo", "Tokyo", "Quito", "Dakar"]
WEATHER = ["sunny", "rainy", "windy", "cloudy"]


def get_weather(city: str) -> str:
    """Get the current weather of a city."""
    return WEATHER[CITIES.index(city) % len(WEATHER)] if city in CITIES else "unknown"


def _tool_schema() -> dict:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return convert_to_openai_tool(get_weather)


def _rows(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    tools = [_tool_schema()]
    rows = []
    for _ in range(n):
        city = rng.choice(CITIES)
        weather = rng.choice(WEATHER)
        ask = {"role": "user", "content": f"What is the weather in {city}?"}
        call = {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": city}}}],
        }
        if rng.random() < 0.5:
            rows.append({"messages": [ask, call], "tools": tools})
        else:
            result = {"role": "tool", "content": weather}
            answer = {"role": "assistant", "content": f"It is {weather} in {city}."}
            rows.append({"messages": [ask, call, result, answer], "tools": tools})
    return rows


def _chatml_base(tiny_model: str, folder) -> str:
    """The tiny Llama with ChatML's special tokens added (Qwen's template needs them as single tokens)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]})
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    model.resize_token_embeddings(len(tokenizer))
    base = folder / "base"
    model.save_pretrained(base)
    tokenizer.save_pretrained(base)
    return str(base)


@pytest.fixture(scope="module")
def tuned(tiny_model, tmp_path_factory):
    import openmind
    from openmind.nlp.testing.synthetic import write_jsonl

    folder = tmp_path_factory.mktemp("tool-sft")
    data = write_jsonl(folder / "tools.jsonl", _rows(2000, seed=1))
    out = folder / "run"
    result = openmind.train(
        None,
        model=_chatml_base(tiny_model, folder),
        dataset=[str(data)],
        template="qwen2.5",
        finetuning_type="full",
        output_dir=str(out),
        max_steps=300,
        learning_rate=5e-3,
        per_device_train_batch_size=16,
        warmup_ratio=0.05,
        lr_scheduler_type="cosine",
        logging_steps=50,
        save_steps=10_000,
        report_to=["none"],
        plot_loss=False,
        framework="pt",
    )
    assert result.final_loss < 0.3
    return str(out)


@pytest.fixture(scope="module")
def server(tuned):
    engine = build(tuned, template="qwen2.5", served_model_name="tuned")
    with ServerThread(create_app(engine, ServeSettings(served_model_name="tuned"))) as s:
        yield s


def test_openai_client_gets_parsed_tool_calls(server):
    c = openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0, timeout=120)
    tools = [_tool_schema()]
    for city in ("Oslo", "Tokyo"):
        ask = [{"role": "user", "content": f"What is the weather in {city}?"}]
        r = c.chat.completions.create(model="tuned", messages=ask, tools=tools, temperature=0, max_tokens=60)
        assert r.choices[0].finish_reason == "tool_calls", r.choices[0].message
        (call,) = r.choices[0].message.tool_calls
        assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": city}
        stream = c.chat.completions.create(
            model="tuned", messages=ask, tools=tools, temperature=0, max_tokens=60, stream=True
        )
        args, finish = "", None
        for chunk in stream:
            for tc in chunk.choices[0].delta.tool_calls or []:
                args += tc.function.arguments or ""
            finish = chunk.choices[0].finish_reason or finish
        assert finish == "tool_calls" and json.loads(args) == {"city": city}


def test_langchain_bind_tools_runs_a_two_step_tool_loop(server):
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(base_url=server.url + "/v1", api_key="none", model="tuned", temperature=0, max_tokens=60)
    bound = llm.bind_tools([get_weather])
    messages = [HumanMessage("What is the weather in Rome?")]
    ai = bound.invoke(messages)
    assert [c["name"] for c in ai.tool_calls] == ["get_weather"] and ai.tool_calls[0]["args"] == {"city": "Rome"}
    call = ai.tool_calls[0]
    messages += [ai, ToolMessage(get_weather(**call["args"]), tool_call_id=call["id"])]
    final = bound.invoke(messages)
    assert not final.tool_calls
    assert final.content == f"It is {get_weather('Rome')} in Rome."
