"""Llama-2 and Llama-3 chat formats (Meta's official ``chat_template`` of each, rendered natively)."""

from __future__ import annotations

from openmind.nlp.templates.native import FastMiss, NativeTemplate, Pieces

EOT = "<|eot_id|>"
#: role -> its header (the fast renderers' role table)
HEADERS = {role: "<|start_header_id|>" + role + "<|end_header_id|>\n\n" for role in ("system", "user", "assistant")}


class Llama2Template(NativeTemplate):
    """``<s>[INST] <<SYS>>\\n{system}\\n<</SYS>>\\n\\n{user} [/INST] {answer} </s>``.

    Like meta-llama/Llama-2-7b-chat-hf: the system prompt is folded into the first user turn,
    contents are stripped, each answer is `` {answer} </s>`` (note the space before EOS), turns
    alternate user/assistant. Trained: `` {answer} </s>``.
    """

    name = "llama2"
    bos, eos = "<s>", "</s>"
    roles = ("system", "user", "assistant")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        system = None
        loop = messages
        if messages[0]["role"] == "system":
            system, loop = messages[0]["content"], messages[1:]
        offset = len(messages) - len(loop)
        for i, m in enumerate(loop):
            if m["role"] == "system":
                raise self.fail("a system message is only allowed first", i + offset)
        self.alternate(loop, offset)
        pieces: Pieces = []
        for i, m in enumerate(loop):
            content = m["content"]
            if i == 0 and system is not None:
                content = "<<SYS>>\n" + system + "\n<</SYS>>\n\n" + content
            if m["role"] == "user":
                pieces.append((self.bos + "[INST] " + content.strip() + " [/INST]", False))
            else:
                pieces.append((" " + content.strip() + " " + self.eos, True))
        return pieces


class Llama3Template(NativeTemplate):
    """``<|begin_of_text|><|start_header_id|>{role}<|end_header_id|>\\n\\n{content}<|eot_id|>...``

    Like meta-llama/Meta-Llama-3-8B-Instruct: any role gets its header, contents are stripped,
    no default system prompt. Trained: ``{answer}<|eot_id|>``.
    """

    name = "llama3"
    tool_parser = "llama3_json"
    bos = "<|begin_of_text|>"
    roles = ("system", "user", "assistant", "tool", "ipython")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        pieces: Pieces = []
        for i, m in enumerate(messages):
            header = ("" if i else self.bos) + "<|start_header_id|>" + m["role"] + "<|end_header_id|>\n\n"
            body = (m["content"] or "").strip() + "<|eot_id|>"
            if m["role"] == "assistant":
                pieces += [(header, False), (body, True)]
            else:
                pieces.append((header + body, False))
        if add_generation_prompt:
            pieces.append(("<|start_header_id|>assistant<|end_header_id|>\n\n", False))
        return pieces

    def fast(self, messages, add_generation_prompt, options) -> str:
        h = self._headers
        text = self.bos + "".join([h[m["role"]] + m["content"].strip() + EOT for m in messages])
        return text + HEADERS["assistant"] if add_generation_prompt else text

    _headers = {role: "<|start_header_id|>" + role + "<|end_header_id|>\n\n" for role in roles}


LLAMA31_TOOLS_NOTE = (
    'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.'
    "Do not use variables.\n\n"
)


class Llama31Template(NativeTemplate):
    """Llama 3.1 / 3.3 Instruct (and 3.2 with :class:`Llama32Template`): Meta's official template.

    Every prompt opens with a system header holding ``Cutting Knowledge Date: December 2023`` and
    ``Today Date: {date_string}`` (3.1/3.3: fixed ``26 Jul 2024``; 3.2: today), then the system
    message (stripped). ``tools`` go into the first user message (``tools_in_user_message=False``:
    into the system header) as indented JSON with Meta's instructions, and ``Environment: ipython``
    is announced; a tool call is rendered ``{"name": ..., "parameters": ...}``; tool results use the
    ``ipython`` role (their content JSON-encoded, as the official template does). 3.1/3.3 also take
    ``builtin_tools`` (``<|python_tag|>name.call(...)`` calls ending in ``<|eom_id|>``).
    Trained: ``{answer}<|eot_id|>``.
    """

    name = "llama3.1"
    tool_parser = "llama3_json"
    bos = "<|begin_of_text|>"
    roles = ("system", "user", "assistant", "tool", "ipython")
    default_date = "26 Jul 2024"
    #: 3.2's template takes today's date and has no builtin tools
    today = False
    builtin = True

    def date(self, options) -> str:
        if options.get("date_string") is not None:
            return str(options["date_string"])
        if self.today:
            from datetime import datetime

            return datetime.now().strftime("%d %b %Y")
        return self.default_date

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        from openmind.nlp.templates.native import tojson

        if options.get("custom_tools") is not None:
            tools = options["custom_tools"]
        in_user = options.get("tools_in_user_message", True)
        builtin = options.get("builtin_tools") if self.builtin else None
        if options.get("builtin_tools") is not None and not self.builtin:
            builtin = None
        offset = 0
        system = ""
        if messages[0]["role"] == "system":
            system, messages, offset = messages[0]["content"].strip(), messages[1:], 1
        head = self.bos + "<|start_header_id|>system<|end_header_id|>\n\n"
        if builtin is not None or tools is not None:
            head += "Environment: ipython\n"
        if builtin is not None:
            head += "Tools: " + ", ".join(str(t) for t in builtin if t != "code_interpreter") + "\n\n"
        head += "Cutting Knowledge Date: December 2023\n" + "Today Date: " + self.date(options) + "\n\n"
        if tools is not None and not in_user:
            head += (
                "You have access to the following functions. To call a function, please respond with JSON for a "
                "function call." + LLAMA31_TOOLS_NOTE
            )
            head += "".join(tojson(t, indent=4) + "\n\n" for t in tools)
        pieces: Pieces = [(head + system + "<|eot_id|>", False)]
        if in_user and tools is not None:
            if not messages:
                raise self.fail(
                    "Cannot put tools in the first user message when there's no first user message!",
                    hint="Add a user message, or pass tools_in_user_message=False.",
                )
            first = (messages[0]["content"] or "").strip()
            messages, offset = messages[1:], offset + 1
            text = "<|start_header_id|>user<|end_header_id|>\n\n"
            text += "Given the following functions, please respond with a JSON for a function call "
            text += "with its proper arguments that best answers the given prompt.\n\n" + LLAMA31_TOOLS_NOTE
            text += "".join(tojson(t, indent=4) + "\n\n" for t in tools)
            pieces.append((text + first + "<|eot_id|>", False))
        for i, m in enumerate(messages):
            role = m["role"]
            header = "<|start_header_id|>" + ("ipython" if role == "tool" else role) + "<|end_header_id|>\n\n"
            if "tool_calls" in m and role not in ("tool", "ipython"):
                calls = m["tool_calls"] or []
                if len(calls) != 1:
                    raise self.fail("This model only supports single tool-calls at once!", i + offset)
                call = calls[0].get("function", calls[0])
                if builtin is not None and call["name"] in builtin:
                    args = ", ".join(f'{k}="{v}"' for k, v in (call.get("arguments") or {}).items())
                    body = "<|python_tag|>" + call["name"] + ".call(" + args + ")"
                else:
                    body = '{"name": "' + str(call["name"]) + '", "parameters": ' + tojson(call.get("arguments")) + "}"
                end = "<|eom_id|>" if builtin is not None else "<|eot_id|>"
                pieces += [("<|start_header_id|>assistant<|end_header_id|>\n\n", False), (body + end, True)]
            elif role in ("tool", "ipython"):
                content = m["content"]
                text = tojson(content) if isinstance(content, (str, list, dict, tuple)) else str(content)
                pieces.append((header + text + "<|eot_id|>", False))
            elif role == "assistant":
                pieces += [(header, False), ((m["content"] or "").strip() + "<|eot_id|>", True)]
            else:
                pieces.append((header + (m["content"] or "").strip() + "<|eot_id|>", False))
        if add_generation_prompt:
            pieces.append(("<|start_header_id|>assistant<|end_header_id|>\n\n", False))
        return pieces

    def fast(self, messages, add_generation_prompt, options) -> str:
        if options and (options.get("custom_tools") is not None or options.get("builtin_tools") is not None):
            raise FastMiss
        system = ""
        if messages[0]["role"] == "system":
            system = messages[0]["content"].strip()
            messages = messages[1:]
        for m in messages:
            if "tool_calls" in m:
                raise FastMiss
        h = HEADERS  # tool results (tool/ipython) miss it: the full path renders them
        text = self.bos + h["system"] + "Cutting Knowledge Date: December 2023\nToday Date: " + self.date(options)
        text += "\n\n" + system + EOT + "".join([h[m["role"]] + m["content"].strip() + EOT for m in messages])
        return text + h["assistant"] if add_generation_prompt else text


class Llama32Template(Llama31Template):
    """Llama 3.2 Instruct: 3.1's format with today's date in the system header (``date_string``
    overrides it) and without builtin tools."""

    name = "llama3.2"
    today = True
    builtin = False


LLAMA4_HEADERS = {
    role: "<|header_start|>" + role + "<|header_end|>\n\n" for role in ("system", "user", "assistant", "ipython")
}
LLAMA4_TOOLS_NOTE = (
    'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.'
    "Do not use variables.\n\n"
)


class Llama4Template(NativeTemplate):
    """Llama 4 Instruct (meta-llama/Llama-4-Scout-17B-16E-Instruct, -Maverick-17B-128E-Instruct),
    text part: ``<|begin_of_text|><|header_start|>{role}<|header_end|>\\n\\n{content}<|eot|>...``.

    Like the official template: no date or knowledge-cutoff header; a first system message
    (stripped) gets a system header, where ``tools`` add ``Environment: ipython`` (and, with
    ``tools_in_user_message=False``, the function list); by default the function list goes into the
    first message after the system one (stripped); other contents are kept as written. A tool call
    is ``<|python_start|>{content}<|python_end|>{"name": ..., "parameters": ...}`` (arguments through
    ``tojson``, as the template writes them); tool results use the ``ipython`` header with their
    content JSON-encoded. Images need the model's own template (``--template jinja``). Where the
    official template fails on an assistant tool call without content (``content: None``, the
    OpenAI form), the call is rendered with empty content. Trained: ``{answer}<|eot|>`` and the calls.
    """

    name = "llama4"
    tool_parser = "llama3_json"
    bos = "<|begin_of_text|>"
    roles = ("system", "user", "assistant", "tool", "ipython")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        from openmind.nlp.templates.native import tojson

        if options.get("custom_tools") is not None:
            tools = options["custom_tools"]
        in_user = options.get("tools_in_user_message", True)
        offset = 0
        head = self.bos
        if messages[0]["role"] == "system":
            head += LLAMA4_HEADERS["system"] + ("Environment: ipython\n" if tools is not None else "")
            if tools is not None and not in_user:
                head += (
                    "You have access to the following functions. To call a function, please respond with JSON "
                    "for a function call." + LLAMA4_TOOLS_NOTE
                )
                head += "".join(tojson(t, indent=4) + "\n\n" for t in tools)
            head += messages[0]["content"].strip() + "<|eot|>"
            messages, offset = messages[1:], 1
        pieces: Pieces = [(head, False)]
        if in_user and tools is not None:
            if not messages:
                raise self.fail(
                    "Cannot put tools in the first user message when there's no first user message!",
                    hint="Add a user message, or pass tools_in_user_message=False.",
                )
            text = LLAMA4_HEADERS["user"] + "Given the following functions, please respond with a JSON for a "
            text += "function call with its proper arguments that best answers the given prompt.\n\n"
            text += LLAMA4_TOOLS_NOTE + "".join(tojson(t, indent=4) + "\n\n" for t in tools)
            pieces.append((text + str(messages[0]["content"]).strip() + "<|eot|>", False))
            messages, offset = messages[1:], offset + 1
        for i, m in enumerate(messages):
            role, has_calls = m["role"], "tool_calls" in m
            if not (role in ("tool", "ipython") or has_calls):
                if role == "assistant":
                    pieces += [(LLAMA4_HEADERS["assistant"], False), (m["content"] + "<|eot|>", True)]
                else:
                    pieces.append(("<|header_start|>" + role + "<|header_end|>\n\n" + m["content"] + "<|eot|>", False))
            elif has_calls and m["tool_calls"] is None:
                raise self.fail("tool_calls is None (the official template cannot render it)", i + offset)
            elif has_calls and m["tool_calls"]:
                body = "<|python_start|>" + (m["content"] or "") + "<|python_end|>"
                for call in m["tool_calls"]:
                    function = call.get("function", call)
                    body += '{"name": "' + str(function["name"]) + '", "parameters": '
                    body += tojson(function.get("arguments")) + "}"
                pieces += [(LLAMA4_HEADERS["assistant"], False), (body + "<|eot|>", True)]
            elif role in ("tool", "ipython"):
                content = m["content"]
                text = tojson(content) if isinstance(content, (str, list, dict, tuple)) else str(content)
                pieces.append((LLAMA4_HEADERS["ipython"] + text + "<|eot|>", False))
            # an assistant message with an empty tool_calls list: the official template writes nothing
        if add_generation_prompt:
            pieces.append((LLAMA4_HEADERS["assistant"], False))
        return pieces

    def fast(self, messages, add_generation_prompt, options) -> str:
        if options and options.get("custom_tools") is not None:
            raise FastMiss
        h = LLAMA4_HEADERS  # tool results miss its "tool" role: the full path renders them
        text = self.bos
        if messages[0]["role"] == "system":
            text += h["system"] + messages[0]["content"].strip() + "<|eot|>"
            messages = messages[1:]
        for m in messages:
            if "tool_calls" in m or m["role"] == "ipython":
                raise FastMiss
        text += "".join([h[m["role"]] + m["content"] + "<|eot|>" for m in messages])
        return text + h["assistant"] if add_generation_prompt else text
