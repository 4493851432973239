"""Fidelity: every native template renders exactly what the family's official chat_template renders.

The official templates are stored verbatim in ``data/chat_templates`` (sources in SOURCES.md) and
rendered with :class:`JinjaTemplate`, which mirrors ``transformers.apply_chat_template`` (checked
against transformers itself at the end of this module).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from openmind.core.errors import OpenMindError
from openmind.nlp.templates import JinjaTemplate, load_template
from openmind.nlp.templates.glm import GLM4Template

DATA = Path(__file__).parent / "data" / "chat_templates"

SPECIAL = {
    "llama2": {"bos_token": "<s>", "eos_token": "</s>"},
    "llama3": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
    "qwen2": {"eos_token": "<|im_end|>"},
    "qwen2.5": {"eos_token": "<|im_end|>"},
    "qwen3": {"eos_token": "<|im_end|>"},
    "mistral": {"bos_token": "<s>", "eos_token": "</s>"},
    "glm4": {"eos_token": "<|endoftext|>"},
    "gemma2": {"bos_token": "<bos>", "eos_token": "<eos>"},
    "internlm2": {"bos_token": "<s>", "eos_token": "</s>"},
    "deepseek": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    "phi3": {"bos_token": "<s>", "eos_token": "<|endoftext|>"},
    "llama3.1": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
    "llama3.2": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
    "mistral-v1": {"bos_token": "<s>", "eos_token": "</s>"},
    "mistral-v3": {"bos_token": "<s>", "eos_token": "</s>"},
    "mistral-v3-tekken": {"bos_token": "<s>", "eos_token": "</s>"},
    "mistral-v7": {"bos_token": "<s>", "eos_token": "</s>"},
    "chatglm3": {"eos_token": "</s>"},
    "phi4": {"eos_token": "<|im_end|>"},
    "phi3-mini": {"bos_token": "<s>", "eos_token": "<|endoftext|>"},
    "yi1.5": {"bos_token": "<|startoftext|>", "eos_token": "<|im_end|>"},
    "gemma3": {"bos_token": "<bos>", "eos_token": "<eos>"},
    "internlm3": {"bos_token": "<s>", "eos_token": "</s>"},
    "deepseek-r1": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    "internlm2.5": {"bos_token": "<s>", "eos_token": "</s>"},
    "llama4": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot|>"},
    "llama4-transformers": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot|>"},
}
SOURCES = json.loads((DATA / "SOURCES.json").read_text(encoding="utf-8"))
#: stored official templates that a native renderer reproduces -> that renderer
RENDERER = {Path(f).stem: meta["renderer"] for f, meta in SOURCES.items() if meta["renderer"]}
OFFICIAL = sorted(RENDERER)

SYSTEM = {"role": "system", "content": "You are a terse assistant. Answer in one line."}
U1 = {"role": "user", "content": "What is the capital of France?"}
A1 = {"role": "assistant", "content": "Paris."}
U2 = {"role": "user", "content": "  And of Italy?  "}
A2 = {"role": "assistant", "content": "  Rome, since 1871.  "}
U3 = {"role": "user", "content": "Say 你好 in English, with a newline:\nthen stop."}
A3 = {"role": "assistant", "content": "Hello.\nDone."}

CONVERSATIONS = {
    "user": [U1],
    "system+user": [SYSTEM, U1],
    "multi-turn": [U1, A1, U2, A2],
    "system+multi-turn": [SYSTEM, U1, A1, U2, A2, U3],
    "unicode+newlines": [U3, A3],
    "empty-system": [{"role": "system", "content": ""}, U1, A1],
}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name, e.g. Zürich"}},
            "required": ["city"],
        },
    },
}
TOOL_CONVERSATION = [
    {"role": "user", "content": "Weather in Paris and Rome?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Rome"}}},
        ],
    },
    {"role": "tool", "content": '{"temp": 21}'},
    {"role": "tool", "content": '{"temp": 25}'},
    {"role": "assistant", "content": "Paris 21°C, Rome 25°C."},
    {"role": "user", "content": "Thanks!"},
]
TOOL_FAMILIES = ("qwen2.5", "qwen3")


def official(name: str) -> JinjaTemplate:
    return JinjaTemplate((DATA / f"{name}.jinja").read_text(encoding="utf-8"), name=name, special_tokens=SPECIAL[name])


def both(name: str, messages, **kwargs):
    """(official render or its exception, native render or its exception)."""
    out = []
    for template in (official(name), load_template(RENDERER.get(name, name))):
        try:
            out.append(template.render(copy.deepcopy(messages), **kwargs))
        except OpenMindError as exc:
            out.append(exc)
    return out


def test_every_template_with_an_official_source_is_registered():
    assert set(OFFICIAL) == set(SPECIAL), "SPECIAL must list every stored official template"
    for name in OFFICIAL:
        assert load_template(RENDERER[name]).name == RENDERER[name]


@pytest.mark.parametrize("generation", [False, True], ids=["no-gen", "gen"])
@pytest.mark.parametrize("conversation", sorted(CONVERSATIONS))
@pytest.mark.parametrize("name", OFFICIAL)
def test_native_equals_official(name, conversation, generation):
    expected, got = both(name, CONVERSATIONS[conversation], add_generation_prompt=generation)
    if isinstance(expected, OpenMindError):
        # the official template refuses this conversation (e.g. a system role on Gemma/Mistral):
        # the native one refuses it too, with a coded error
        assert isinstance(got, OpenMindError), f"official raised {expected}, native rendered {got!r}"
        assert got.code in ("OM-TP002", "OM-TP003")
    else:
        assert not isinstance(got, Exception), got
        assert got == expected


@pytest.mark.parametrize("generation", [False, True], ids=["no-gen", "gen"])
@pytest.mark.parametrize("name", TOOL_FAMILIES)
def test_tools_equal_official(name, generation):
    for messages in (TOOL_CONVERSATION, [SYSTEM, *TOOL_CONVERSATION], TOOL_CONVERSATION[:1]):
        expected, got = both(name, messages, tools=[WEATHER_TOOL], add_generation_prompt=generation)
        assert got == expected
        assert '"name": "get_weather"' in got and "<tools>" in got
    # tool calls and tool results render the same without a tools list, too
    expected, got = both(name, TOOL_CONVERSATION, add_generation_prompt=generation)
    assert got == expected and "<tool_response>" in got


def _glm4_server_messages(messages, tools=None, tool_choice=None):
    """What GLM-4's own OpenAI-compatible server hands its chat template for an OpenAI request:
    ``process_messages`` of THUDM/GLM-4 ``basic_demo/openai_api_server.py`` at commit f887394 (the
    last revision for glm-4-9b-chat), restated step by step for dict messages (``tool_choice``
    defaults to ``None`` in its request model, which means "auto")."""
    out, has_system = [], False
    if tool_choice != "none" and tools:
        out.append({"role": "system", "content": None, "tools": tools})
        has_system = True
    for m in messages:
        role, content = m["role"], m.get("content")
        if role == "function":
            out.append({"role": "observation", "content": content})
        elif role == "tool":
            out.append({"role": "observation", "content": content, "function_call": True})
        elif role == "assistant":
            if m.get("tool_calls"):
                for call in m["tool_calls"]:
                    out.append(
                        {
                            "role": "assistant",
                            "metadata": call["function"]["name"],
                            "content": call["function"]["arguments"],
                        }
                    )
            else:
                for response in content.split("\n"):  # sic: every line becomes a message
                    metadata, sub = response.split("\n", maxsplit=1) if "\n" in response else ("", response)
                    out.append({"role": role, "metadata": metadata, "content": sub.strip()})
        else:
            if role == "system" and has_system:
                has_system = False
                continue
            out.append({"role": role, "content": content})
    if not tools or tool_choice == "none":
        for m in messages:
            if m["role"] == "system":  # sic: the system message a second time
                out.insert(0, {"role": m["role"], "content": m["content"]})
                break
    return out


def _glm4_call(name, arguments, call_id="call_1"):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


GLM4_OPENAI = [
    {"role": "system", "content": "Use tools when useful."},
    U1,
    {"role": "assistant", "content": None, "tool_calls": [_glm4_call("get_weather", '{"city": "Paris"}')]},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 21}'},
    {"role": "assistant", "content": "It is 21 degrees."},
    {"role": "user", "content": "And in Rome and Zürich?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            _glm4_call("get_weather", '{"city": "Rome"}', "call_2"),
            _glm4_call("get_weather", '{"city": "Zürich"}', "call_3"),
        ],
    },
    {"role": "tool", "tool_call_id": "call_2", "content": '{"temp": 25}'},
    {"role": "tool", "tool_call_id": "call_3", "content": '{"temp": 18}'},
]


@pytest.mark.parametrize("generation", [False, True], ids=["no-gen", "gen"])
def test_glm4_openai_tools_equal_glm4s_own_server(generation):
    """``render(messages, tools=...)`` (what ``pipeline("chat")`` and ``deploy`` call) equals the
    official template applied to what GLM-4's own OpenAI server makes of the same request."""
    cases = [GLM4_OPENAI, GLM4_OPENAI[1:], GLM4_OPENAI[:2], GLM4_OPENAI[:5], GLM4_OPENAI[5:]]
    for messages in cases:
        expected = official("glm4").render(
            _glm4_server_messages(copy.deepcopy(messages), [WEATHER_TOOL]), add_generation_prompt=generation
        )
        native = load_template("glm4").render(
            copy.deepcopy(messages), tools=[WEATHER_TOOL], add_generation_prompt=generation
        )
        assert native == expected
        assert "## get_weather" in native and "Use tools when useful." not in native
    whole = load_template("glm4").render(GLM4_OPENAI, tools=[WEATHER_TOOL])
    assert '<|assistant|>get_weather\n{"city": "Paris"}<|observation|>\n{"temp": 21}<|assistant|>\nIt is 21' in whole
    # tool history without a tools list: calls and results as the server converts them
    history = [U1, *GLM4_OPENAI[2:5]]
    expected = official("glm4").render(_glm4_server_messages(copy.deepcopy(history)), add_generation_prompt=True)
    assert load_template("glm4").render(history, add_generation_prompt=True) == expected
    # where that server contradicts the template it feeds (the system message twice without tools,
    # an answer split at every newline), the template's own rendering of the conversation stands
    plain = [{"role": "system", "content": "Be brief."}, U1, {"role": "assistant", "content": "Paris.\nFrance."}]
    assert load_template("glm4").render(plain) == official("glm4").render(plain)
    assert official("glm4").render(_glm4_server_messages(plain)).count("Be brief.") == 2


def test_glm4_tool_calls_are_trained_and_parsed_back():
    from openmind.nlp.templates.toolcalls import get_tool_parser

    template = load_template("glm4")
    trained = "".join(text for text, on in template.segments(GLM4_OPENAI[1:5], tools=[WEATHER_TOOL]) if on)
    assert trained == 'get_weather\n{"city": "Paris"}\nIt is 21 degrees.'
    # what the model is taught to write after <|assistant|> parses back into the call
    parsed = get_tool_parser("glm4").parse('get_weather\n{"city": "Paris"}')
    assert [(c.name, json.loads(c.arguments)) for c in parsed.calls] == [("get_weather", {"city": "Paris"})]
    # a message-level ``tools`` key (GLM-4's own convention) still renders as the official template does
    own = [{"role": "system", "content": "", "tools": [WEATHER_TOOL]}, U1]
    assert template.render(own, add_generation_prompt=True) == official("glm4").render(own, add_generation_prompt=True)


def test_qwen3_thinking_equals_official():
    messages = [
        U1,
        {"role": "assistant", "content": "<think>\nrecall geography\n</think>\n\nParis."},
        U2,
        {"role": "assistant", "content": "Rome.", "reasoning_content": "Italy's capital"},
    ]
    for kwargs in ({}, {"add_generation_prompt": True}, {"add_generation_prompt": True, "enable_thinking": False}):
        for conv in (messages, messages[:3]):
            expected, got = both("qwen3", conv, **kwargs)
            assert got == expected
    text = load_template("qwen3").render(messages)
    assert "recall geography" not in text  # reasoning of earlier turns is dropped, like the official template
    assert "<think>\nItaly's capital\n</think>\n\nRome." in text
    gen = load_template("qwen3").render(messages[:1], add_generation_prompt=True, enable_thinking=False)
    assert gen.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")


def test_llama2_answer_has_space_before_eos():
    text = load_template("llama2").render([U1, A1])
    assert text == "<s>[INST] What is the capital of France? [/INST] Paris. </s>"


@pytest.mark.parametrize("name", ["gemma2", "mistral"])
def test_families_without_system_role_refuse_it_with_a_coded_error(name):
    with pytest.raises(OpenMindError) as info:
        load_template(name).render([SYSTEM, U1])
    assert info.value.code == "OM-TP002" and info.value.location == "messages[0]"
    assert "first user message" in info.value.hint


def test_unrenderable_role_is_an_error_not_dropped():
    with pytest.raises(OpenMindError) as info:
        load_template("llama2").render([U1, {"role": "tool", "content": "x"}])
    assert info.value.code == "OM-TP002" and info.value.location == "messages[1].role"


# ---- families without an official chat_template: expected strings written from their docs -----


def test_baichuan2_documented_format():
    template = load_template("baichuan2")
    text = template.render([SYSTEM, U1, A1, {"role": "user", "content": "Why?"}], add_generation_prompt=True)
    assert text == (
        "You are a terse assistant. Answer in one line.<reserved_106>What is the capital of France?"
        "<reserved_107>Paris.</s><reserved_106>Why?<reserved_107>"
    )
    assert template.segments([U1, A1]) == [
        ("<reserved_106>What is the capital of France?<reserved_107>", False),
        ("Paris.</s>", True),
    ]


def test_yi_documented_format():
    text = load_template("yi").render([U1, A1, U2], add_generation_prompt=True)
    assert text == (
        "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\nParis.<|im_end|>\n"
        "<|im_start|>user\n  And of Italy?  <|im_end|>\n<|im_start|>assistant\n"
    )


# ---- JinjaTemplate itself mirrors transformers.apply_chat_template ---------------------------------


@pytest.fixture(scope="module")
def hf_tokenizer():
    pytest.importorskip("transformers")
    from openmind.nlp.testing.assets import llama2_tokenizer

    return llama2_tokenizer()


@pytest.mark.parametrize(
    ("name", "messages", "kwargs"),
    [
        ("llama2", [SYSTEM, U1, A1, U2], {}),
        ("qwen2.5", TOOL_CONVERSATION, {"tools": [WEATHER_TOOL], "add_generation_prompt": True}),
        ("qwen3", [U1, {"role": "assistant", "content": "x", "reasoning_content": "r"}], {"enable_thinking": False}),
        ("glm4", GLM4Template.with_tools([U1, A1], [WEATHER_TOOL]), {"add_generation_prompt": True}),
        ("phi3", [SYSTEM, U1, A1], {}),
    ],
    ids=["llama2", "qwen2.5-tools", "qwen3-reasoning", "glm4-tools", "phi3"],
)
def test_jinja_template_equals_transformers(hf_tokenizer, name, messages, kwargs):
    source = (DATA / f"{name}.jinja").read_text(encoding="utf-8")
    hf_tokenizer.chat_template = source
    expected = hf_tokenizer.apply_chat_template(copy.deepcopy(messages), tokenize=False, **kwargs)
    mine = JinjaTemplate.from_tokenizer(hf_tokenizer).render(copy.deepcopy(messages), **kwargs)
    assert mine == expected
