"""Tool-call parsers on the official formats of each family.

The strings are the ones the families' own chat templates / docs write for a call:
Qwen2.5's chat_template (``<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>``), Llama 3.1's
model card ("JSON based tool calling": ``{"name": ..., "parameters": ...}``, and
``<|python_tag|>`` for built-in tools), mistral_common's v3 / v11 encodings (``[TOOL_CALLS]``), GLM-4's
function-call turn (``name\\n{json}``). Where the project ships a renderer for the family, the call
is also written by that renderer (an assistant message with ``tool_calls``) and parsed back.
"""

from __future__ import annotations

import json

import pytest

from openmind.nlp.templates import toolcalls as tc
from openmind.nlp.templates.base import JinjaTemplate

WEATHER = {"city": "Paris", "unit": "celsius"}


def _args(call):
    return json.loads(call.arguments)


def test_hermes_qwen25_single_and_parallel():
    p = tc.get_tool_parser("hermes")
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>'
    parsed = p.parse(text)
    assert parsed.content == "" and not parsed.malformed
    assert [(c.name, _args(c)) for c in parsed.calls] == [("get_weather", WEATHER)]
    two = (
        "Let me check both.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_time", "arguments": {"tz": "Europe/Paris"}}\n</tool_call>'
    )
    parsed = p.parse(two)
    assert parsed.content == "Let me check both."
    assert [c.name for c in parsed.calls] == ["get_weather", "get_time"]
    assert len({c.id for c in parsed.calls}) == 2 and all(c.id.startswith("call_") for c in parsed.calls)
    assert p.parse("Paris is sunny.").calls == [] and p.parse("Paris is sunny.").content == "Paris is sunny."


def test_hermes_round_trip_through_the_qwen_renderers():
    from openmind.nlp.templates.chatml import Qwen3Template, Qwen25Template

    call = {"type": "function", "function": {"name": "get_weather", "arguments": WEATHER}}
    for template in (Qwen25Template(), Qwen3Template()):
        assert template.tool_parser == "hermes"
        text = template.render(
            [{"role": "user", "content": "weather?"}, {"role": "assistant", "content": "", "tool_calls": [call, call]}]
        )
        answer = text.split("<|im_start|>assistant\n")[-1].split("<|im_end|>")[0]
        if "</think>" in answer:
            answer = answer.split("</think>")[-1].lstrip("\n")
        parsed = tc.get_tool_parser("hermes").parse(answer)
        assert [(c.name, _args(c)) for c in parsed.calls] == [("get_weather", WEATHER)] * 2


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>\n{not json}\n</tool_call>",
        '<tool_call>\n{"arguments": {}}\n</tool_call>',
        '<tool_call>\n{"name": "f", "arguments": [1]}\n</tool_call>',
        '<tool_call>\n{"name": "f", "arguments": {"a": 1',
    ],
)
def test_hermes_malformed_is_text_not_an_exception(text):
    parsed = tc.get_tool_parser("hermes").parse(text)
    assert parsed.malformed and parsed.calls == [] and parsed.content == text


def test_llama31_json_and_python_tag():
    p = tc.get_tool_parser("llama3_json")
    parsed = p.parse('{"name": "get_weather", "parameters": {"city": "Paris", "unit": "celsius"}}')
    assert [(c.name, _args(c)) for c in parsed.calls] == [("get_weather", WEATHER)] and parsed.content == ""
    parsed = p.parse('<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris", "unit": "celsius"}}')
    assert [c.name for c in parsed.calls] == ["get_weather"]
    parsed = p.parse('{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"x": 1}}')
    assert [(c.name, _args(c)) for c in parsed.calls] == [("a", {}), ("b", {"x": 1})]
    assert p.parse("The weather in Paris is sunny.").calls == []
    assert p.parse('{"name": "a", "parameters": ').malformed
    assert p.may_start("<|python") and p.may_start(' {"na') and not p.may_start("The weather")


def test_mistral_v3_and_v11():
    p = tc.get_tool_parser("mistral")
    parsed = p.parse('[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}]')
    assert [(c.name, _args(c)) for c in parsed.calls] == [("get_weather", WEATHER)]
    parsed = p.parse(
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_time", "arguments": {"tz": "CET"}}]'
    )
    assert [c.name for c in parsed.calls] == ["get_weather", "get_time"]
    parsed = p.parse('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "unit": "celsius"}[TOOL_CALLS]get_time[ARGS]{}')
    assert [(c.name, _args(c)) for c in parsed.calls] == [("get_weather", WEATHER), ("get_time", {})]
    assert p.parse("[TOOL_CALLS] [oops").malformed
    assert p.may_start("[TOOL_") and not p.may_start("Hello")


def test_mistral_common_encodes_what_the_parser_reads():
    """mistral_common's own v3 tokenizer writes the assistant's tool call; the parser reads it back."""
    pytest.importorskip("mistral_common")
    from mistral_common.protocol.instruct.messages import AssistantMessage, ToolMessage, UserMessage
    from mistral_common.protocol.instruct.request import ChatCompletionRequest
    from mistral_common.protocol.instruct.tool_calls import Function, FunctionCall, Tool, ToolCall
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    tok = MistralTokenizer.v3()
    request = ChatCompletionRequest(
        tools=[Tool(function=Function(name="get_weather", description="w", parameters={"type": "object"}))],
        messages=[
            UserMessage(content="weather in Paris?"),
            AssistantMessage(
                tool_calls=[
                    ToolCall(id="abcdefghi", function=FunctionCall(name="get_weather", arguments=json.dumps(WEATHER)))
                ]
            ),
            ToolMessage(tool_call_id="abcdefghi", content="sunny"),
        ],
    )
    text = tok.encode_chat_completion(request).text.replace("\u2581", " ")  # SentencePiece spaces
    answer = "[TOOL_CALLS]" + text.split("[TOOL_CALLS]")[1].split("</s>")[0]
    parsed = tc.get_tool_parser("mistral").parse(answer)
    assert [(c.name, _args(c)) for c in parsed.calls] == [("get_weather", WEATHER)]


def test_glm4_function_call_turn():
    p = tc.get_tool_parser("glm4")
    parsed = p.parse('get_weather\n{"city": "Paris", "unit": "celsius"}')
    assert [(c.name, _args(c)) for c in parsed.calls] == [("get_weather", WEATHER)]
    assert p.parse("It is sunny in Paris today.").calls == []
    assert p.parse("get_weather\n{broken").malformed


def test_jinja_templates_declare_their_parser_from_their_own_text():
    qwen = '{% for m in messages %}...{% endfor %}<tool_call>\\n{"name": <function-name>}</tool_call>'
    assert JinjaTemplate(qwen).tool_parser == "hermes"
    assert JinjaTemplate("{{ '[TOOL_CALLS]' }}").tool_parser == "mistral"
    assert JinjaTemplate("{{ '<|python_tag|>' }}").tool_parser == "llama3_json"
    assert JinjaTemplate("{{ messages }}").tool_parser == ""


def test_registered_templates_name_their_parsers_and_plugins_can_add_one():
    from openmind.nlp.templates.resolve import load_template

    assert load_template("qwen2.5").tool_parser == "hermes"
    assert load_template("llama3").tool_parser == "llama3_json"
    assert load_template("mistral").tool_parser == "mistral"
    assert load_template("glm4").tool_parser == "glm4"
    parser = tc.get_tool_parser("openmind.nlp.templates.toolcalls:HermesParser")
    assert isinstance(parser, tc.HermesParser)
    with pytest.raises(KeyError):
        tc.get_tool_parser("nope")
