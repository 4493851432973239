"""``chat``: messages in, assistant message out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from openmind.core.errors import I_BAD_INPUT
from openmind.nlp.pipelines.base import Generation, GenerationParams
from openmind.nlp.pipelines.generative import GenerativeWrapper
from openmind.nlp.pipelines.wrapper import type_name

ROLES = ("system", "user", "assistant", "tool")


def template_for(tokenizer: Any, model_dir: str, name: str | None = None, model_group: str | None = None):
    """The chat template of a model: registered templates when openmind-nlp's template registry
    is available, else the tokenizer's own ``chat_template`` (OM-TP001 when it has none)."""
    try:
        from openmind.nlp.templates import resolve_template
    except ImportError:
        resolve_template = None
    if resolve_template is not None:
        return resolve_template(name, model_dir=model_dir, tokenizer=tokenizer, model_group=model_group)
    from openmind.nlp.templates.base import TP_NO_TEMPLATE, JinjaTemplate

    if name or model_group:
        raise TP_NO_TEMPLATE.error(
            f"template {name or model_group!r} requested, but this installation has no template registry"
        )
    return JinjaTemplate.from_tokenizer(tokenizer)


def _content(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in value):
        return "".join(str(p.get("text", "")) for p in value)
    if isinstance(value, list) and any(isinstance(p, dict) and p.get("type") in ("image", "image_url") for p in value):
        raise I_BAD_INPUT.error(
            f"{where}: an image part, but this model reads text only (not a vision-language model)",
            location=where,
            hint="Send text content, or serve / load a vision-language model (Qwen2-VL, LLaVA ...: "
            "`openmind list model-groups`).",
        )
    raise I_BAD_INPUT.error(
        f"{where}: content must be a string (or a list of text parts), not {type_name(value)}",
        location=where,
        hint='Write messages as {"role": "user", "content": "Hello"}.',
    )


def check_messages(messages: list[Any], where: str) -> list[dict[str, Any]]:
    """Validated copies of OpenAI-style messages (content parts joined to text)."""
    out = []
    for i, message in enumerate(messages):
        at = f"{where} message {i}"
        if not isinstance(message, dict):
            raise I_BAD_INPUT.error(
                f"{at}: a message is a {{role, content}} mapping, not {type_name(message)}", location=at
            )
        role = message.get("role")
        if role not in ROLES:
            raise I_BAD_INPUT.error(
                f"{at}: field 'role' is {role!r}; use one of {', '.join(ROLES)}", location=f"{at} field 'role'"
            )
        if "content" not in message and not message.get("tool_calls"):
            raise I_BAD_INPUT.error(f"{at}: field 'content' is missing", location=f"{at} field 'content'")
        copy = dict(message)
        if copy.get("content") is not None or not copy.get("tool_calls"):
            copy["content"] = _content(copy.get("content"), f"{at} field 'content'")
        out.append(copy)
    return out


def chat_variant(model: Any) -> str | None:
    """The task of another chat wrapper that a model folder belongs to, or ``None``: a registered
    model group that matches the folder's ``config.json`` ``model_type`` (or architecture) and
    lists a task with the ``chat`` capability instead of ``chat`` (openmind-mm's ``mm-chat`` for
    vision-language models). Reads JSON only."""
    import os

    from openmind.core.plugins import get_registry
    from openmind.core.specs import ModelGroupSpec

    if model is None or not isinstance(model, (str, os.PathLike)):
        return None
    path = os.path.join(os.path.expanduser(str(model)), "config.json")
    try:
        with open(path, encoding="utf-8") as fh:
            config = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict):
        return None
    registry = get_registry()
    model_type = config.get("model_type")
    archs = set(config.get("architectures") or ())
    chat_tasks = set(registry.tasks_with("chat")) - {"chat"}
    for group in registry.all(ModelGroupSpec):
        if "chat" in group.tasks:
            continue
        if model_type in group.model_types or (not group.model_types and archs & set(group.architectures)):
            for task in group.tasks:
                if task in chat_tasks:
                    return task
    return None


class ChatPipeline(GenerativeWrapper):
    """A conversation in, the assistant's message out: ``{"role": "assistant", "content": ...}``.

    Inputs: a string (one user turn), a list of ``{"role", "content"}`` messages (one
    conversation, with history), or a list of either (a batch). The prompt is rendered with the
    model's chat template (its model group's, or the tokenizer's ``chat_template``); generation
    stops on the template's stop words and on ``stop`` strings, which are not part of the answer.

    Options (per pipeline or per call): ``system`` (system prompt added when a conversation has
    none), ``tools`` (offered to the template), ``template`` / ``model_group`` (per pipeline), and
    every generation parameter.

    Example::

        chat = pipeline("chat", model="./model", system="You are terse.", max_new_tokens=64)
        chat("Hello!")                                    # {"role": "assistant", "content": ...}
        chat([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"},
              {"role": "user", "content": "How are you?"}], temperature=0)
        for delta in chat("Tell me a story", stream=True):
            print(delta, end="", flush=True)
        session = chat.session()                          # keeps the history
        session.send("Hi"); session.send("And then?")
    """

    task = "chat"
    #: openmind's own task: its message, whatever the return_format
    listed = False
    options = ("system", "tools", "template", "model_group")

    def __new__(cls, task: str | None = None, model: Any = None, **kwargs: Any) -> Any:
        # a folder of a group served by another chat wrapper (a vision-language model) gets that
        # wrapper; its __init__ runs with these arguments and takes its own task name
        if cls is ChatPipeline:
            variant = chat_variant(model)
            if variant is not None:
                from openmind.core.plugins import get_registry

                other = get_registry().pipeline_wrapper(variant).load()
                if isinstance(other, type) and issubclass(other, ChatPipeline):
                    return object.__new__(other)
                return other(task=variant, model=model, **kwargs)
        return object.__new__(cls)

    accepts = "a string, a list of {role, content} messages"
    record_keys = ("messages", "input", "text", "prompt")
    system: str | None = None
    tools: list[dict] | None = None
    template: str | None = None
    model_group: str | None = None

    def configure(self, **options: Any) -> GenerationParams:
        params = super().configure(**options)
        if isinstance(self.tools, str):
            self.tools = json.loads(self.tools)
        self.chat_template = template_for(self.backend.tokenizer, self.model_dir, self.template, self.model_group)
        return params

    def stop_words(self) -> tuple[str, ...]:
        return tuple(self.chat_template.stop_words or ())

    # ---- inputs --------------------------------------------------------------------------
    def check_item(self, item: Any, index: int | None) -> list[dict[str, Any]]:
        where = f"input[{index}]" if index is not None else "input"
        if isinstance(item, str):
            return [{"role": "user", "content": item}]
        if isinstance(item, (list, tuple)) and all(isinstance(m, dict) for m in item):
            return check_messages(list(item), where)
        raise I_BAD_INPUT.error(
            f"task 'chat' takes a string, a list of {{role, content}} messages, or a list of those; "
            f"got {type_name(item)} at {where}",
            location=where,
            hint='Example: chat([{"role": "user", "content": "Hello"}]).',
        )

    def split(self, inputs: Any) -> tuple[bool, list[Any]]:
        if isinstance(inputs, str):
            return True, [self.check_item(inputs, None)]
        if isinstance(inputs, (list, tuple)) and inputs and all(isinstance(m, dict) for m in inputs):
            return True, [self.check_item(list(inputs), None)]
        if isinstance(inputs, (list, tuple)):
            return False, [self.check_item(item, i) for i, item in enumerate(inputs)]
        return True, [self.check_item(inputs, None)]

    def messages(self, conversation: list[dict[str, Any]], system: str | None) -> list[dict[str, Any]]:
        if system and not (conversation and conversation[0].get("role") == "system"):
            return [{"role": "system", "content": system}, *conversation]
        return conversation

    def render(self, conversation: list[dict[str, Any]], *, system: str | None = None, tools=None) -> str:
        """The prompt text of a conversation, ending where the assistant's answer starts."""
        return self.chat_template.render(
            self.messages(conversation, system if system is not None else self.system),
            tools=tools if tools is not None else self.tools,
            add_generation_prompt=True,
        )

    def prompt(self, item: Any, overrides: dict[str, Any]) -> list[int]:
        text = self.render(item, system=overrides.get("system"), tools=overrides.get("tools"))
        # the template writes the special tokens itself (BOS ...): tokenize without adding more
        return list(self.backend.tokenizer(text, add_special_tokens=False)["input_ids"])

    def output(self, generation: Generation, item: Any, overrides: dict[str, Any]) -> Any:
        return {"role": "assistant", "content": generation.text}

    def to_text(self, output: Any) -> str:
        return output["content"]

    def session(self, system: str | None = None, **params: Any) -> ChatSession:
        """A conversation that keeps its history (what ``openmind chat`` uses)."""
        return ChatSession(self, system=system, params=params)


class ChatSession:
    """Multi-turn chat state: ``send`` appends the user's turn and the answer to :attr:`history`."""

    def __init__(self, pipe: ChatPipeline, system: str | None = None, params: dict[str, Any] | None = None) -> None:
        self.pipe = pipe
        self.system = system if system is not None else pipe.system
        self.params = dict(params or {})
        self.history: list[dict[str, Any]] = []

    def clear(self) -> None:
        self.history.clear()

    def send(self, text: str, *, stream: bool = False, **params: Any) -> str | Iterator[str]:
        """Answer ``text`` given the history; with ``stream`` an iterator of text deltas (the answer
        joins the history once it has been read to the end)."""
        conversation = [*self.history, {"role": "user", "content": text}]
        kwargs = {**self.params, **params, "system": self.system or ""}
        if not stream:
            answer = self.pipe(conversation, **kwargs)["content"]
            self.history += [conversation[-1], {"role": "assistant", "content": answer}]
            return answer
        deltas = self.pipe(conversation, stream=True, **kwargs)

        def recording() -> Iterator[str]:
            parts = []
            for delta in deltas:
                parts.append(delta)
                yield delta
            self.history += [conversation[-1], {"role": "assistant", "content": "".join(parts)}]

        return recording()
