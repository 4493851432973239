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
}
SOURCES = json.loads((DATA / "SOURCES.json").read_text(encoding="utf-8"))
#: stored official templates that a native renderer reproduces (the stem names the renderer)
OFFICIAL = sorted(Path(f).stem for f, meta in SOURCES.items() if meta["renderer"])

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
    for template in (official(name), load_template(name)):
        try:
            out.append(template.render(copy.deepcopy(messages), **kwargs))
        except OpenMindError as exc:
            out.append(exc)
    return out


def test_every_template_with_an_official_source_is_registered():
    assert set(OFFICIAL) == set(SPECIAL), "SPECIAL must list every stored official template"
    for name in OFFICIAL:
        assert load_template(name).name == name


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


@pytest.mark.parametrize("generation", [False, True], ids=["no-gen", "gen"])
def test_glm4_tools_equal_official(generation):
    calls = [
        {"role": "system", "content": "Use tools when useful."},
        U1,
        {"role": "assistant", "metadata": "get_weather", "content": '{"city": "Paris"}'},
        {"role": "observation", "content": '{"temp": 21}'},
        {"role": "assistant", "content": "It is 21 degrees."},
    ]
    for messages in (calls, calls[1:]):
        native = load_template("glm4").render(messages, tools=[WEATHER_TOOL], add_generation_prompt=generation)
        expected = official("glm4").render(
            GLM4Template.with_tools(messages, [WEATHER_TOOL]), add_generation_prompt=generation
        )
        assert native == expected
        assert "## get_weather" in native and "<|observation|>\n" in native


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
