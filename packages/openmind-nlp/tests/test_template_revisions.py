"""Templates exact to the revision (issue 17).

* stored official templates keep their recorded sha256 (``data/chat_templates/SOURCES.json``);
* a model folder's own chat_template picks the native renderer that declares its revision, and
  any other template is served by Jinja with a notice;
* native == official Jinja over a case matrix per family/revision (tools, tool results, thinking);
* ``encode()`` ids equal ``apply_chat_template(tokenize=True)``; label masks equal across the
  native and the Jinja paths;
* Mistral: token for token what ``mistral_common`` encodes (v1, v3 with tools, v3-tekken with tools, v7);
* LLaMA-Factory template names resolve as aliases.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from pathlib import Path

import pytest

from openmind.core.errors import OpenMindError
from openmind.core.plugins import get_registry
from openmind.core.specs import TemplateSpec
from openmind.core.templates import TemplateProtocol, normalise_template, template_hash
from openmind.nlp.templates import IGNORE_INDEX, JinjaTemplate, load_template, resolve_template
from openmind.nlp.templates.resolve import template_for_source

DATA = Path(__file__).parent / "data" / "chat_templates"
SOURCES = json.loads((DATA / "SOURCES.json").read_text(encoding="utf-8"))
NATIVE = {Path(f).stem: meta["renderer"] for f, meta in SOURCES.items() if meta["renderer"]}

#: bos/eos as the family's tokenizer passes them to its template
SPECIAL = {Path(f).stem: meta["special_tokens"] for f, meta in SOURCES.items()}


def special(stem: str) -> dict[str, str]:
    return SPECIAL[stem]


def source(stem: str) -> str:
    return (DATA / f"{stem}.jinja").read_text(encoding="utf-8")


def official(stem: str) -> JinjaTemplate:
    return JinjaTemplate(source(stem), name=stem, special_tokens=special(stem))


# ---- stored copies, hashes and revisions ---------------------------------------------------------


def test_every_stored_template_is_listed_with_source_and_unchanged_sha256():
    stored = {p.name for p in DATA.glob("*.jinja")}
    assert stored == set(SOURCES), "every stored template needs an entry in SOURCES.json (and vice versa)"
    for name, meta in SOURCES.items():
        assert meta["model"] and meta["source"], name
        digest = hashlib.sha256((DATA / name).read_bytes()).hexdigest()
        assert digest == meta["sha256"], f"{name} changed: official copies are stored verbatim"


@pytest.mark.parametrize("stem", sorted(NATIVE))
def test_official_text_selects_its_native_renderer(stem):
    template = template_for_source(source(stem), special(stem), where=f"{stem}-folder")
    assert template.name == NATIVE[stem] and template.kind == "native"
    assert template.revision and "native renderer" in template.notice and f"{stem}-folder" in template.notice


def test_declared_revisions_are_stored_official_copies():
    stored = {template_hash(source(Path(f).stem)) for f in SOURCES}
    for spec in get_registry().all(TemplateSpec):
        if spec.component.distribution != "openmind-nlp":
            continue
        for label, digest in spec.revisions:
            assert digest in stored, f"{spec.name} declares revision {label!r} with no stored official copy"


def test_hash_ignores_line_ends_and_surrounding_whitespace_only():
    text = source("llama3.1")
    assert template_hash("\n" + text.replace("\n", "\r\n") + "\n\n") == template_hash(text)
    assert template_hash(text.replace("26 Jul 2024", "27 Jul 2024")) != template_hash(text)
    assert normalise_template(" a\r\nb ") == "a\nb"


def test_templates_implement_the_core_protocol():
    assert isinstance(load_template("llama3.1"), TemplateProtocol)
    assert isinstance(official("llama3.1"), TemplateProtocol)


# ---- the case matrix: native == official Jinja ---------------------------------------------------

SYSTEM = {"role": "system", "content": "You are terse.\nAnswer in one line."}
EMPTY_SYSTEM = {"role": "system", "content": ""}
U1 = {"role": "user", "content": "What is the capital of France?"}
A1 = {"role": "assistant", "content": "Paris."}
U2 = {"role": "user", "content": "  And of Italy?  \n"}
A2 = {"role": "assistant", "content": "  Rome, since 1871.  "}
U3 = {"role": "user", "content": "Say 你好 and 👋 in English, with a newline:\nthen stop."}
A3 = {"role": "assistant", "content": "Hello.\nDone. ✓"}
MATRIX = {
    "single": [U1],
    "system": [SYSTEM, U1],
    "empty-system": [EMPTY_SYSTEM, U1, A1],
    "multi-ends-user": [U1, A1, U2, A2, U3],
    "multi-ends-assistant": [U1, A1, U2, A2],
    "system-multi": [SYSTEM, U1, A1, U2, A2, U3, A3],
    "unicode": [U3, A3],
}
DATE = {"date_string": "01 Dec 2026"}  # Llama 3.2 renders today's date: fix it for both sides


def render_both(stem, messages, **kwargs):
    out = []
    for template in (official(stem), load_template(NATIVE[stem])):
        try:
            out.append(template.render(copy.deepcopy(messages), **kwargs))
        except OpenMindError as exc:
            out.append(exc)
    return out


@pytest.mark.parametrize("generation", [False, True], ids=["no-gen", "gen"])
@pytest.mark.parametrize("case", sorted(MATRIX))
@pytest.mark.parametrize("stem", sorted(NATIVE))
def test_native_equals_official_matrix(stem, case, generation):
    expected, got = render_both(stem, MATRIX[case], add_generation_prompt=generation, **DATE)
    if isinstance(expected, OpenMindError):  # the official template refuses it: so does native, coded
        assert isinstance(got, OpenMindError) and got.code in ("OM-TP002", "OM-TP003"), got
    else:
        assert got == expected


WEATHER = {
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


def _call(arguments, call_id="abc123def"):
    return {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": arguments}}


LLAMA_TOOLS = [
    SYSTEM,
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [_call({"city": "Paris"})]},
    {"role": "ipython", "content": '{"temp": 21}'},
    {"role": "assistant", "content": "21 °C."},
    {"role": "user", "content": "And Rome?"},
    {"role": "assistant", "content": None, "tool_calls": [_call({"city": "Rome"})]},
    {"role": "tool", "content": '{"temp": 25}'},
]


@pytest.mark.parametrize("generation", [False, True], ids=["no-gen", "gen"])
@pytest.mark.parametrize("stem", ["llama3.1", "llama3.2"])
def test_llama31_tools_equal_official(stem, generation):
    for messages in (LLAMA_TOOLS, LLAMA_TOOLS[1:], LLAMA_TOOLS[:2]):
        for extra in ({}, {"tools_in_user_message": False}):
            expected, got = render_both(
                stem, messages, tools=[WEATHER], add_generation_prompt=generation, **DATE, **extra
            )
            assert got == expected
            assert "Environment: ipython\n" in got and '"name": "get_weather"' in got
    # tool calls and results render the same without a tools list
    expected, got = render_both(stem, LLAMA_TOOLS, add_generation_prompt=generation, **DATE)
    assert got == expected and "<|start_header_id|>ipython<|end_header_id|>" in got


def test_llama31_builtin_tools_and_date_header():
    messages = [
        {"role": "user", "content": "Search the weather"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"type": "function", "function": {"name": "brave_search", "arguments": {"query": "weather"}}}
            ],
        },
    ]
    kwargs = {"builtin_tools": ["brave_search", "code_interpreter"], "add_generation_prompt": False}
    expected, got = render_both("llama3.1", messages, **kwargs)
    assert got == expected and "Tools: brave_search\n\n" in got
    assert got.endswith('<|python_tag|>brave_search.call(query="weather")<|eom_id|>')
    text = load_template("llama3.1").render([U1])
    assert "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>" in text


LLAMA4_TOOLS = [
    SYSTEM,
    {"role": "user", "content": "  Weather in Paris?  "},
    {"role": "assistant", "content": "", "tool_calls": [_call({"city": "Paris"})]},
    {"role": "tool", "content": '{"temp": 21}'},
    {"role": "assistant", "content": "21 °C."},
    {"role": "user", "content": "And Rome and Zürich?"},
    {"role": "assistant", "content": "Both:", "tool_calls": [_call('{"city": "Rome"}'), _call({"city": "Zürich"})]},
    {"role": "ipython", "content": '{"temp": 25}'},
]


@pytest.mark.parametrize("generation", [False, True], ids=["no-gen", "gen"])
@pytest.mark.parametrize("stem", ["llama4", "llama4-transformers"])
def test_llama4_tools_equal_official(stem, generation):
    for messages in (LLAMA4_TOOLS, LLAMA4_TOOLS[1:], LLAMA4_TOOLS[:2], LLAMA4_TOOLS[:5]):
        for extra in ({}, {"tools_in_user_message": False}, {"custom_tools": [WEATHER]}):
            tools = None if "custom_tools" in extra else [WEATHER]
            expected, got = render_both(stem, messages, tools=tools, add_generation_prompt=generation, **extra)
            assert got == expected
            if messages[0] is SYSTEM:
                assert "Environment: ipython\n" in got
    # tool calls and results without a tools list
    expected, got = render_both(stem, LLAMA4_TOOLS, add_generation_prompt=generation)
    assert got == expected and '<|python_end|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eot|>' in got
    assert "<|header_start|>ipython<|header_end|>\n\n" + json.dumps(json.dumps({"temp": 21})) in got
    # the official text fails on an OpenAI-style call without content; native renders it empty
    openai_call = [U1, {"role": "assistant", "content": None, "tool_calls": [_call({"city": "Paris"})]}]
    expected, got = render_both(stem, openai_call)
    assert isinstance(expected, OpenMindError)
    assert got == render_both(stem, [U1, {**openai_call[1], "content": ""}])[0]


def test_llama4_tool_calls_are_trained_and_parse_back():
    from openmind.nlp.templates.toolcalls import get_tool_parser

    template = load_template("llama4")
    trained = "".join(text for text, on in template.segments(LLAMA4_TOOLS[:5], tools=[WEATHER]) if on)
    call = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
    assert trained == "<|python_start|><|python_end|>" + call + "<|eot|>21 °C.<|eot|>"
    parsed = get_tool_parser(template.tool_parser).parse(call)
    assert [(c.name, json.loads(c.arguments)) for c in parsed.calls] == [("get_weather", {"city": "Paris"})]


MISTRAL_TOOLS = [
    SYSTEM,
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [_call({"city": "Paris"})]},
    {"role": "tool", "tool_call_id": "abc123def", "content": '{"temp": 21}'},
    {"role": "assistant", "content": "21 degrees."},
    {"role": "user", "content": "Thanks!"},
]


@pytest.mark.parametrize("stem", ["mistral-v3", "mistral-v3-tekken"])
def test_mistral_v3_tools_equal_official(stem):
    for messages in (MISTRAL_TOOLS, MISTRAL_TOOLS[1:], MISTRAL_TOOLS[:2]):
        for tools in ([WEATHER], None):
            expected, got = render_both(stem, messages, tools=tools)
            assert got == expected
    expected, got = render_both(stem, [U1, {"role": "assistant", "content": None, "tool_calls": [_call({}, "short")]}])
    assert isinstance(expected, OpenMindError) and isinstance(got, OpenMindError)  # ids must have 9 characters


R1_TOOLS = [
    SYSTEM,
    {"role": "user", "content": "Weather in Paris and Rome?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [_call('{"city": "Paris"}'), _call('{"city": "Rome"}', "xyz987uvw")],
    },
    {"role": "tool", "content": '{"temp": 21}'},
    {"role": "tool", "content": '{"temp": 25}'},
    {"role": "assistant", "content": "Paris 21, Rome 25."},
    {"role": "user", "content": "Warmer?"},
    {"role": "assistant", "content": "<think>\n25 > 21\n</think>\n\nRome."},
]


@pytest.mark.parametrize("generation", [False, True], ids=["no-gen", "gen"])
def test_deepseek_r1_tools_and_thinking_equal_official(generation):
    for messages in (R1_TOOLS, R1_TOOLS[:5], R1_TOOLS[:7], R1_TOOLS[6:]):
        expected, got = render_both("deepseek-r1", messages, add_generation_prompt=generation)
        assert got == expected
    text = load_template("deepseek-r1").render(R1_TOOLS[:7], add_generation_prompt=True)
    assert text.endswith("<｜User｜>Warmer?<｜Assistant｜><think>\n")
    assert "25 > 21" not in load_template("deepseek-r1").render(R1_TOOLS)  # reasoning is not shown again


def test_qwen3_nothink_alias_equals_official_with_thinking_off():
    template = load_template("qwen3_nothink")
    assert template.name == "qwen3_nothink" and template.options == {"enable_thinking": False}
    for messages in ([U1], [SYSTEM, U1, A1, U2]):
        expected = official("qwen3").render(messages, add_generation_prompt=True, enable_thinking=False)
        assert template.render(messages, add_generation_prompt=True) == expected
        assert expected.endswith("<think>\n\n</think>\n\n")


TEXT_PARTS = {Path(f).stem: meta["text_renderer"] for f, meta in SOURCES.items() if meta.get("text_renderer")}


@pytest.mark.parametrize("generation", [False, True], ids=["no-gen", "gen"])
@pytest.mark.parametrize("stem", sorted(TEXT_PARTS))
def test_vision_language_text_part_equals_official(stem, generation):
    """qwen2_vl / qwen3_vl_nothink render text conversations exactly as the VL model's own template."""
    native = load_template(TEXT_PARTS[stem])
    cases = [m for k, m in MATRIX.items() if k != "empty-system"] + [[EMPTY_SYSTEM, U1, A1]]
    calls = [{**m, "content": m["content"] or ""} for m in R1_TOOLS[1:6]]  # its template needs text content
    tool_cases = [] if stem == "qwen2-vl" else [(calls, [WEATHER]), (calls, None), ([SYSTEM, *calls], [WEATHER])]
    for messages, tools in [(m, None) for m in cases] + tool_cases:
        expected = official(stem).render(copy.deepcopy(messages), tools=tools, add_generation_prompt=generation)
        assert native.render(copy.deepcopy(messages), tools=tools, add_generation_prompt=generation) == expected
    # a VL folder's own template is never swapped for the text-only renderer
    assert isinstance(template_for_source(source(stem), special(stem)), JinjaTemplate)


# ---- the fast render path renders what the full path renders -----------------------------------

_CALL = {"role": "assistant", "content": None, "tool_calls": [_call({"city": "Paris"})]}
EDGE_CASES = {
    **MATRIX,
    "only-system": [SYSTEM],
    "system-late": [U1, A1, SYSTEM, U2],
    "empty-contents": [EMPTY_SYSTEM, U1, {"role": "assistant", "content": ""}, {"role": "user", "content": ""}],
    "empty-system-late": [U1, A1, EMPTY_SYSTEM, U2],
    "two-users": [U1, U2],
    "starts-with-assistant": [A1, U1],
    "tool-call": [U1, _CALL],
    "tool-call-with-text": [U1, {**_CALL, "content": "Let me check."}],
    "tool-call-none": [U1, {**A1, "tool_calls": None}],
    "tool-result": [U1, _CALL, {"role": "tool", "tool_call_id": "abc123def", "content": '{"temp": 21}'}, A1],
    "ipython": [U1, _CALL, {"role": "ipython", "content": '{"temp": 21}'}],
    "reasoning-in-content": [U1, {"role": "assistant", "content": "<think>\nhm\n</think>\n\nParis."}],
    "reasoning-key": [U1, {**A1, "reasoning_content": "hm"}, U2, {**A2, "thinking": "hmm"}],
    "metadata": [{**U1, "metadata": "m"}, A1],
    "tools-key": [{**SYSTEM, "tools": [WEATHER]}, U1],
    "unknown-role": [{"role": "robot", "content": "hi"}],
    "no-role": [{"content": "hi"}],
    "none-content": [{"role": "user", "content": None}],
    "list-content": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    "not-a-dict": [U1, "hello"],
    "empty": [],
    # the layout path (texts cached per role sequence, contents joined in): what must not fool it
    "content-before-role": [{"content": "Hi.", "role": "user"}, {"content": "Hello.", "role": "assistant"}],
    "unhashable-role": [{"role": ["user"], "content": "hi"}],
    "empty-first-user": [{"role": "user", "content": ""}, A1, SYSTEM, U1],
    "marker-text-in-content": [{"role": "user", "content": "<|system|>\n<|end|>\n<|im_start|>system\n"}, A1],
    "markers-in-content": [SYSTEM, {"role": "user", "content": "[INST] <s></s>{0}%s{}"}, {**A1, "content": "\\n}}"}],
    "same-roles-other-text": [{**SYSTEM, "content": "Be brief."}, U3, A3, U1, A1],
    "long": [SYSTEM] + [U1, A1, U2, A2, U3, A3] * 7,
}


def _native_names() -> list[str]:
    from openmind.nlp.templates.native import NativeTemplate

    names = []
    for spec in get_registry().all(TemplateSpec):
        try:
            if isinstance(load_template(spec.name), NativeTemplate):
                names.append(spec.name)
        except OpenMindError:  # a template whose requirements are not installed
            continue
    return sorted(set(names))


def _outcome(fn):
    try:
        return fn()
    except OpenMindError as exc:
        return ("error", exc.code)
    except Exception as exc:
        return ("error", type(exc).__name__)


@pytest.mark.parametrize("name", _native_names())
def test_fast_render_equals_the_full_path(name):
    """``render`` takes a string-only fast path for plain conversations; whatever it renders or
    refuses, the pieces ``build()`` makes (what ``segments``/``encode`` use) render and refuse alike."""
    template = load_template(name)
    for case, messages in EDGE_CASES.items():
        for generation in (False, True):
            for options in ({}, DATE, {"enable_thinking": False}, {"builtin_tools": ["brave_search"]}):
                full = _outcome(
                    lambda m=messages, g=generation, o=options: "".join(
                        text for text, _ in template._pieces(copy.deepcopy(m), None, g, dict(o))
                    )
                )
                got = _outcome(
                    lambda m=messages, g=generation, o=options: template.render(
                        copy.deepcopy(m), add_generation_prompt=g, **o
                    )
                )
                assert got == full, (case, generation, options)
    # the conversations above really take the fast path where the family has one
    if template.fast is not None:
        assert template.fast(copy.deepcopy(MATRIX["multi-ends-assistant"]), False, {**template.options, **DATE})
    if template.layout is not None:
        without = template._layouts[1]
        assert ("user", "assistant", "user", "assistant") in without and len(without) <= template.layout_cache_size


LAYOUT_NAMES = [name for name in _native_names() if load_template(name).layout is not None]


def test_the_families_missing_10x_have_a_layout():
    """The renderers whose official Jinja template renders in ~14 us take the layout path."""
    expected = {"phi3", "phi3-mini", "phi4", "yi", "yi1.5", "internlm2", "internlm3", "deepseek", "mistral-v7"}
    assert expected <= set(LAYOUT_NAMES)


@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_layout_cache_is_bounded_and_keyed_by_roles_and_generation_prompt(name):
    """Layouts are cached per role sequence and generation prompt only: renders of many different
    conversations (more role sequences than the cache holds, truthy non-bool generation prompts)
    each equal the full path, and the cache never grows past its size."""
    template = load_template(name)
    template.layout_cache_size = 4
    turns = [U1, A1, U2, A2, U3, A3]
    conversations = [turns[:k] for k in range(1, 7)] + [[SYSTEM, *turns[:k]] for k in range(1, 7)]
    conversations += [[{**m, "content": m["content"] + str(k)} for m in c] for k, c in enumerate(conversations)]
    for generation in (False, True, 1, 0, "yes", ""):
        for messages in conversations:
            full = _outcome(
                lambda m=messages, g=generation: "".join(
                    text for text, _ in template._pieces(copy.deepcopy(m), None, bool(g), {})
                )
            )
            assert _outcome(lambda m=messages, g=generation: template.render(m, add_generation_prompt=g)) == full
            assert all(len(cache) <= 4 for cache in template._layouts)
    # a tuple of messages is not cached (the full path takes it) and renders alike
    assert template.render(tuple(turns)) == template.render(list(turns))


# ---- LLaMA-Factory names ------------------------------------------------------------------------

LLAMAFACTORY = {
    "llama2": "llama2",
    "llama3": "llama3",
    "qwen": "qwen2.5",
    "qwen2_vl": "qwen2",
    "qwen3": "qwen3",
    "qwen3_nothink": "qwen3_nothink",
    "qwen3_vl_nothink": "qwen3_vl_nothink",
    "mistral": "mistral",
    "chatglm3": "chatglm3",
    "glm4": "glm4",
    "yi": "yi",
    "intern2": "internlm2",
    "deepseek": "deepseek",
    "deepseek3": "deepseek3",
    "deepseekr1": "deepseek-r1",
    "phi": "phi3",
    "phi4": "phi4",
    "gemma": "gemma2",
    "gemma3": "gemma3",
    "baichuan2": "baichuan2",
}


@pytest.mark.parametrize(("alias", "renderer"), sorted(LLAMAFACTORY.items()))
def test_llamafactory_template_names_resolve(alias, renderer):
    assert load_template(alias).name == renderer
    assert resolve_template(alias).name == renderer


def test_deepseek3_is_r1_without_the_think_prompt():
    text = load_template("deepseek3").render([U1], add_generation_prompt=True)
    assert text == "<｜begin▁of▁sentence｜><｜User｜>What is the capital of France?<｜Assistant｜>"


# ---- choosing by the folder's own template ------------------------------------------------------


def _folder(tmp_path, chat_template: str | None, config: dict | None = None) -> Path:
    pytest.importorskip("transformers")
    from openmind.nlp.testing.assets import save_llama2_tokenizer

    folder = tmp_path / "model"
    save_llama2_tokenizer(folder, chat_template=chat_template)
    config = config or {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 32000}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_folder_with_an_official_template_gets_the_native_renderer(tmp_path, caplog):
    folder = _folder(tmp_path, source("llama3.1"))
    with caplog.at_level(logging.INFO, logger="openmind"):
        template = resolve_template(model_dir=folder)
    # the group (llama2 by vocabulary) does not decide: the folder's template does
    assert template.name == "llama3.1" and template.revision == "Llama-3.1/3.3-Instruct"
    assert any("official Llama-3.1/3.3-Instruct chat_template" in r.getMessage() for r in caplog.records)


def test_folder_with_an_unknown_template_is_served_by_it_through_jinja(tmp_path, caplog):
    from openmind.nlp.testing.assets import llama2_tokenizer

    text = source("deepseek-r1-distill-qwen-llamacpp")  # a real template no native renderer declares
    folder = _folder(tmp_path, text)
    with caplog.at_level(logging.INFO, logger="openmind"):
        template = resolve_template(model_dir=folder)
    assert isinstance(template, JinjaTemplate) and template.source.strip() == text.strip()
    assert template.stop_words == ("</s>",)  # the folder's EOS (its group, llama2, adds none: no "</s>" in the text)
    notice = [r.getMessage() for r in caplog.records if "matches no native renderer" in r.getMessage()]
    assert len(notice) == 1 and str(folder) in notice[0] and template.notice == notice[0]
    assert "\n" not in notice[0]  # one line
    tokenizer = llama2_tokenizer(chat_template=text)  # what the folder holds (loading it back is slow)
    for messages in ([U1], [SYSTEM, U1, A1, U2]):
        expected = tokenizer.apply_chat_template(copy.deepcopy(messages), tokenize=False, add_generation_prompt=True)
        assert template.render(messages, add_generation_prompt=True) == expected
    # label masks are still computed on the Jinja path
    encoded = template.encode(tokenizer, [U1, A1, U2, A2])
    trained = tokenizer.decode([t for t, label in zip(encoded.input_ids, encoded.labels) if label != IGNORE_INDEX])
    assert "Paris." in trained and "Rome" in trained and "capital" not in trained


def test_unknown_revision_stops_at_its_familys_end_of_turn_words(tmp_path):
    # a ChatML template that is no stored revision (InternLM2.5-like: no closing </s>), in an InternLM2 folder
    text = source("internlm2").replace("{% elif messages[-1]['role'] == 'assistant' %}{{ eos_token }}", "")
    folder = _folder(tmp_path, text, {"architectures": ["InternLM2ForCausalLM"], "model_type": "internlm2"})
    template = resolve_template(model_dir=folder)
    assert isinstance(template, JinjaTemplate)
    assert template.stop_words == ("</s>", "<|im_end|>")  # EOS, then the family's end of turn


def test_folder_without_a_template_uses_the_groups_default_and_says_so(tmp_path, caplog):
    folder = _folder(
        tmp_path,
        None,
        {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "vocab_size": 32000},
    )
    with caplog.at_level(logging.INFO, logger="openmind"):
        template = resolve_template(model_dir=folder)
    assert template.name == "mistral-v1"
    assert any("no chat_template; using model group 'mistral'" in r.getMessage() for r in caplog.records)


def test_r1_distill_folder_is_its_own_group(tmp_path):
    from openmind.nlp.templates import match_model_dir

    config = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": 152064}
    folder = _folder(tmp_path, source("deepseek-r1"), config)
    assert match_model_dir(folder).name == "deepseek-r1"
    assert resolve_template(model_dir=folder).name == "deepseek-r1"


# ---- tokens: encode() == apply_chat_template(tokenize=True); masks native == Jinja ----------------


def family_tokenizer(name: str):
    """The real Llama-2 BPE tokenizer with the family's markers as special tokens (one id each),
    the way the family's own tokenizer treats them."""
    from openmind.nlp.testing.assets import llama2_tokenizer

    bos, eos = SPECIAL[name].get("bos_token"), SPECIAL[name]["eos_token"]
    tok = llama2_tokenizer(chat_template=source(name))
    markers = set(load_template(NATIVE.get(name, name)).stop_words) | {t for t in (bos, eos) if t}
    for text in source(name).replace('"', "'").split("'"):
        if text.startswith(("<|", "<｜", "[INST", "[/INST", "[SYSTEM", "[/SYSTEM", "[TOOL", "[AVAIL", "[/AVAIL")):
            if len(text) < 40 and " " not in text:
                markers.add(text)
    tok.add_special_tokens({"additional_special_tokens": sorted(m for m in markers if m not in ("<s>", "</s>"))})
    if bos:
        tok.bos_token = bos
    tok.eos_token = eos
    return tok


def _ids(result):
    return list(result["input_ids"] if hasattr(result, "keys") else result)


ENCODE_CASES = {"system-multi": [SYSTEM, U1, A1, U2, A2], "unicode": [U3, A3], "multi": [U1, A1, U2, A2]}


@pytest.mark.parametrize("stem", sorted(NATIVE))
def test_encode_ids_equal_apply_chat_template_and_masks_equal_jinja(stem):
    tokenizer = family_tokenizer(stem)
    native = load_template(NATIVE[stem])
    jinja = JinjaTemplate.from_tokenizer(tokenizer)
    checked = 0
    for messages in ENCODE_CASES.values():
        try:
            expected = _ids(tokenizer.apply_chat_template(copy.deepcopy(messages), tokenize=True))
        except Exception:  # the official template refuses the conversation (e.g. a system role)
            with pytest.raises(OpenMindError):
                native.encode(tokenizer, messages)
            continue
        got = native.encode(tokenizer, messages)
        assert got.input_ids == expected
        assert got.labels == jinja.encode(tokenizer, messages).labels
        assert any(label != IGNORE_INDEX for label in got.labels)
        checked += 1
    assert checked


# ---- Mistral: token for token what mistral_common encodes ----------------------------------------

MISTRAL_TOKENIZERS = {
    "mistral-v1": "tokenizer.model.v1",
    "mistral-v3": "mistral_instruct_tokenizer_240323.model.v3",
    "mistral-v7": "mistral_instruct_tokenizer_241114.model.v7",
}


def _mistral(name: str, tmp_path):
    pytest.importorskip("mistral_common")
    pytest.importorskip("sentencepiece")
    import shutil

    import mistral_common
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer
    from transformers import LlamaTokenizer

    model = Path(mistral_common.__file__).parent / "data" / MISTRAL_TOKENIZERS[name]
    folder = tmp_path / name
    folder.mkdir()
    shutil.copy(model, folder / "tokenizer.model")
    return MistralTokenizer.from_file(str(model)), LlamaTokenizer.from_pretrained(str(folder), legacy=False)


def _request(messages, tools=None):
    from mistral_common.protocol.instruct.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
    from mistral_common.protocol.instruct.request import ChatCompletionRequest
    from mistral_common.protocol.instruct.tool_calls import Function, FunctionCall, Tool, ToolCall

    out = []
    for m in messages:
        if m["role"] == "system":
            out.append(SystemMessage(content=m["content"]))
        elif m["role"] == "user":
            out.append(UserMessage(content=m["content"]))
        elif m["role"] == "tool":
            out.append(ToolMessage(tool_call_id=m["tool_call_id"], content=m["content"]))
        elif m.get("tool_calls"):
            calls = [
                ToolCall(
                    id=c["id"],
                    function=FunctionCall(name=c["function"]["name"], arguments=json.dumps(c["function"]["arguments"])),
                )
                for c in m["tool_calls"]
            ]
            out.append(AssistantMessage(content=None, tool_calls=calls))
        else:
            out.append(AssistantMessage(content=m["content"]))
    tools = [Tool(function=Function(**t["function"])) for t in tools] if tools else None
    return ChatCompletionRequest(messages=out, tools=tools)


PLAIN = [U1, {"role": "assistant", "content": "Paris."}, {"role": "user", "content": "And of Italy?"}]
WITH_SYSTEM = [{"role": "system", "content": "Be brief."}, *PLAIN]
LONG = [*WITH_SYSTEM, {"role": "assistant", "content": "Rome."}, U3]


@pytest.mark.parametrize("name", sorted(MISTRAL_TOKENIZERS))
def test_mistral_tokens_equal_mistral_common(name, tmp_path):
    reference, tokenizer = _mistral(name, tmp_path)
    template = load_template(name)
    cases = [PLAIN, WITH_SYSTEM, LONG]
    for messages in cases:
        expected = reference.encode_chat_completion(_request(messages)).tokens
        assert template.encode(tokenizer, messages).input_ids == expected
        assert tokenizer(template.render(messages), add_special_tokens=False)["input_ids"] == expected


def test_mistral_v3_tool_tokens_equal_mistral_common(tmp_path):
    reference, tokenizer = _mistral("mistral-v3", tmp_path)
    template = load_template("mistral-v3")
    for messages in (MISTRAL_TOOLS, MISTRAL_TOOLS[:2], MISTRAL_TOOLS[1:]):
        expected = reference.encode_chat_completion(_request(messages, [WEATHER])).tokens
        encoded = template.encode(tokenizer, messages, tools=[WEATHER])
        assert encoded.input_ids == expected
        if len(messages) == 2:
            continue
        trained = tokenizer.decode([t for t, label in zip(encoded.input_ids, encoded.labels) if label != IGNORE_INDEX])
        assert "get_weather" in trained and "Weather in a city" not in trained


def test_mistral_v3_tekken_tokens_equal_mistral_common():
    """Mistral-Nemo's tekken tokenizer (``mistral_common``'s ``tekken_240718.json``, converted for
    transformers by its own ``MistralConverter``): plain chats, a system prompt, tools, tool calls
    and tool results encode to exactly the ids of ``encode_chat_completion``."""
    pytest.importorskip("mistral_common")
    import mistral_common
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer
    from transformers import PreTrainedTokenizerFast
    from transformers.integrations.mistral.tokenizer import MistralConverter

    vocab = Path(mistral_common.__file__).parent / "data" / "tekken_240718.json"
    reference = MistralTokenizer.from_file(str(vocab))
    assert reference.instruct_tokenizer.tokenizer.version.value == "v3"  # tekken with the v3 instruct format
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=MistralConverter(str(vocab)).converted())
    template = load_template("mistral-v3-tekken")
    cases = [(PLAIN, None), (WITH_SYSTEM, None), (LONG, None)]
    cases += [(MISTRAL_TOOLS, [WEATHER]), (MISTRAL_TOOLS[1:], [WEATHER]), (MISTRAL_TOOLS[:2], [WEATHER])]
    for messages, tools in cases:
        expected = reference.encode_chat_completion(_request(messages, tools)).tokens
        encoded = template.encode(tokenizer, messages, tools=tools)
        assert encoded.input_ids == expected
        assert tokenizer(template.render(messages, tools=tools), add_special_tokens=False)["input_ids"] == expected
        if messages is MISTRAL_TOOLS:  # the call and the answer are trained, the tool list and result are not
            trained = tokenizer.decode([t for t, lab in zip(encoded.input_ids, encoded.labels) if lab != IGNORE_INDEX])
            assert "get_weather" in trained and "21 degrees." in trained
            assert "Weather in a city" not in trained and '"temp": 21' not in trained
