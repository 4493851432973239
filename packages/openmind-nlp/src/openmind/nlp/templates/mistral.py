"""Mistral-7B-Instruct v0.1/v0.2 and Mixtral-8x7B-Instruct chat format."""

from __future__ import annotations

from openmind.nlp.templates.native import FastMiss, NativeTemplate, Pieces, alternates, around, tojson


class MistralTemplate(NativeTemplate):
    """``<s>[INST] {user} [/INST]{answer}</s>[INST] ...``

    Like the official template: no system role (a coded error: put instructions into the first
    user turn), turns alternate user/assistant, contents are kept as written.
    Trained: ``{answer}</s>``.
    """

    name = "mistral"
    tool_parser = "mistral"
    bos, eos = "<s>", "</s>"
    roles = ("system", "user", "assistant")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        for i, m in enumerate(messages):
            if m["role"] == "system":
                raise self.fail(
                    "Mistral's chat format has no system role",
                    i,
                    hint="Put the instructions at the start of the first user message.",
                )
        self.alternate(messages)
        pieces: Pieces = [(self.bos, False)]
        for m in messages:
            if m["role"] == "user":
                pieces.append(("[INST] " + m["content"] + " [/INST]", False))
            else:
                pieces.append((m["content"] + self.eos, True))
        return pieces

    def fast(self, messages, add_generation_prompt, options) -> str:
        if not alternates([m["role"] for m in messages]):
            raise FastMiss
        eos = self.eos
        return self.bos + "".join(
            ["[INST] " + m["content"] + " [/INST]" if m["role"] == "user" else m["content"] + eos for m in messages]
        )


class MistralV1Template(NativeTemplate):
    """Mistral v1 (current official text of Mistral-7B-Instruct-v0.1/v0.2, Mixtral-8x7B-Instruct):
    ``<s> [INST] {system}\\n\\n{user} [/INST] {answer}</s> [INST] ...``.

    A system message is merged into the first user turn; turns alternate user/assistant; contents
    are kept as written. Token for token what ``mistral_common``'s v1 tokenizer encodes.
    Trained: `` {answer}</s>``.
    """

    name = "mistral-v1"
    bos, eos = "<s>", "</s>"
    roles = ("system", "user", "assistant")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        system, loop, offset = None, messages, 0
        if messages[0]["role"] == "system":
            system, loop, offset = messages[0]["content"], messages[1:], 1
        for i, m in enumerate(loop):
            if m["role"] == "system":
                raise self.fail(
                    "Only user and assistant roles are supported, with the exception of an initial optional "
                    "system message!",
                    i + offset,
                )
        self.alternate(loop, offset)
        pieces: Pieces = [(self.bos, False)]
        for i, m in enumerate(loop):
            if m["role"] == "user":
                content = (system + "\n\n" + m["content"]) if i == 0 and system is not None else m["content"]
                pieces.append((" [INST] " + content + " [/INST]", False))
            else:
                pieces.append((" " + m["content"] + self.eos, True))
        return pieces

    def fast(self, messages, add_generation_prompt, options) -> str:
        head = ""
        if messages[0]["role"] == "system":
            head = messages[0]["content"] + "\n\n"
            messages = messages[1:]
        if not messages or not alternates([m["role"] for m in messages]):
            raise FastMiss
        eos = self.eos
        rest = [
            " [INST] " + m["content"] + " [/INST]" if m["role"] == "user" else " " + m["content"] + eos
            for m in messages[1:]
        ]
        return self.bos + " [INST] " + head + messages[0]["content"] + " [/INST]" + "".join(rest)


def _mistral_tool_json(tool: dict) -> str:
    """One entry of ``[AVAILABLE_TOOLS]`` exactly as Mistral's v3 template writes it."""
    function = tool.get("function", tool)
    parts = []
    for key, value in function.items():
        if key == "return":
            continue
        parts.append(f'"{key}": "{value}"' if isinstance(value, str) else f'"{key}": ' + tojson(value))
    return '{"type": "function", "function": {' + ", ".join(parts) + "}}"


class MistralV3Template(NativeTemplate):
    """Mistral v3 (Mistral-7B-Instruct-v0.3, Mixtral-8x22B, Mistral-Large-2407): ``<s>[INST] {user}[/INST] {answer}</s>``.

    The system message goes before the *last* user message; ``tools`` are listed in
    ``[AVAILABLE_TOOLS]`` before the last user message; calls are ``[TOOL_CALLS] [{...,"id": ...}]</s>``
    and results ``[TOOL_RESULTS] {"content": ..., "call_id": ...}[/TOOL_RESULTS]`` (ids: 9
    alphanumerics). Token for token what ``mistral_common``'s v3 tokenizer encodes.
    Trained: `` {answer}</s>`` and tool calls.
    """

    name = "mistral-v3"
    tool_parser = "mistral"
    bos, eos = "<s>", "</s>"
    roles = ("system", "user", "assistant", "tool", "tool_results")
    #: v3-tekken (Mistral-Nemo) writes the markers without the space after them
    sep = " "
    answer_sep = " "
    strip_answer = True

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        system, loop, offset = None, messages, 0
        if messages[0]["role"] == "system":
            system, loop, offset = messages[0]["content"], messages[1:], 1
        k = 0
        for i, m in enumerate(loop):
            if m["role"] in ("tool", "tool_results") or m.get("tool_calls") is not None:
                continue
            if (m["role"] == "user") != (k % 2 == 0):
                raise self.fail(
                    "After the optional system message, conversation roles must alternate "
                    "user/assistant/user/assistant/...",
                    i + offset,
                    hint="Merge consecutive turns of one role, and start with a user turn.",
                )
            k += 1
        users = [m for m in loop if m["role"] == "user"]
        pieces: Pieces = [(self.bos, False)]
        for i, m in enumerate(loop):
            role = m["role"]
            if role == "user":
                text = ""
                if tools is not None and m == users[-1]:
                    text += "[AVAILABLE_TOOLS]" + self.sep + "[" + ", ".join(_mistral_tool_json(t) for t in tools)
                    text += "]" if tools else ""
                    text += "[/AVAILABLE_TOOLS]"
                if i == len(loop) - 1 and system is not None:
                    text += "[INST]" + self.sep + system + "\n\n" + m["content"] + "[/INST]"
                else:
                    text += "[INST]" + self.sep + m["content"] + "[/INST]"
                pieces.append((text, False))
            elif m.get("tool_calls") is not None:
                calls = []
                for call in m["tool_calls"]:
                    call_id = call.get("id")
                    if not isinstance(call_id, str) or len(call_id) != 9:
                        raise self.fail("Tool call IDs should be alphanumeric strings with length 9!", i + offset)
                    calls.append(tojson(call["function"])[:-1] + ', "id": "' + call_id + '"}')
                pieces.append(("[TOOL_CALLS]" + self.sep + "[" + ", ".join(calls) + "]" + self.eos, True))
            elif role == "assistant":
                content = m["content"].strip() if self.strip_answer else m["content"]
                pieces.append((self.answer_sep + content + self.eos, True))
            elif role in ("tool", "tool_results"):
                content = m["content"]
                if isinstance(content, dict) and "content" in content:
                    content = content["content"]
                call_id = m.get("tool_call_id")
                if not isinstance(call_id, str) or len(call_id) != 9:
                    raise self.fail("Tool call IDs should be alphanumeric strings with length 9!", i + offset)
                text = "[TOOL_RESULTS]" + self.sep + '{"content": ' + str(content) + ", "
                pieces.append((text + '"call_id": "' + call_id + '"}[/TOOL_RESULTS]', False))
            else:
                raise self.fail(
                    "Only user and assistant roles are supported, with the exception of an initial optional "
                    "system message!",
                    i + offset,
                )
        return pieces


class MistralV3TekkenTemplate(MistralV3Template):
    """Mistral v3-tekken (Mistral-Nemo-Instruct-2407): v3 without spaces after the markers and
    answers kept as written. Token for token what ``mistral_common``'s tekken tokenizer
    (``tekken_240718.json``) encodes, tools and tool results included."""

    name = "mistral-v3-tekken"
    sep = ""
    answer_sep = ""
    strip_answer = False


class MistralV7Template(NativeTemplate):
    """Mistral v7 (Mistral-Large-Instruct-2411): ``<s>[SYSTEM_PROMPT] {system}[/SYSTEM_PROMPT][INST] {user}[/INST] {answer}</s>``.

    System messages are kept in place as ``[SYSTEM_PROMPT]`` blocks. Token for token what
    ``mistral_common``'s v7 tokenizer encodes. Trained: `` {answer}</s>``.
    """

    name = "mistral-v7"
    bos, eos = "<s>", "</s>"
    roles = ("system", "user", "assistant")
    #: role -> what comes before and after its content
    _before = {"system": "[SYSTEM_PROMPT] ", "user": "[INST] ", "assistant": " "}
    _after = {"system": "[/SYSTEM_PROMPT]", "user": "[/INST]", "assistant": eos}

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        before, after = self._before, self._after
        pieces: Pieces = [(self.bos, False)]
        for m in messages:
            role = m["role"]
            pieces.append((before[role] + m["content"] + after[role], role == "assistant"))
        return pieces

    def layout(self, roles, add_generation_prompt) -> list[str]:
        return around(roles, self._before, self._after, self.bos)
