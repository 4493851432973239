"""``mm-chat``: conversations with images in, the assistant's message out.

``pipeline("chat", model=VL_DIR)`` builds this wrapper too (the ``chat`` wrapper hands a folder of
a registered vision-language group over to it), so one call works for text and VL folders.

Inputs: a string; a list of OpenAI-style messages whose ``content`` mixes ``{"type": "text"}``,
``{"type": "image_url", "image_url": {"url": "data:..." | "file://..." | path}}`` and
``{"type": "image", "image": PIL | path}`` parts; a LLaMA-Factory row ``{"messages": [...],
"images": [...]}`` with ``<image>`` placeholders; or a list of those (a batch, left-padded, rows
with different numbers of images). Streaming and generation parameters as for ``chat``.

Example::

    chat = pipeline("chat", model="./Qwen2-VL-2B-Instruct", max_new_tokens=64)
    chat([{"role": "user", "content": [{"type": "image", "image": "cat.png"},
                                       {"type": "text", "text": "What is this?"}]}])
    chat({"messages": [{"role": "user", "content": "<image>What colour?"}], "images": ["sq.png"]})
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from openmind.core.errors import I_BAD_INPUT
from openmind.core.pipelines.wrapper import type_name
from openmind.mm.vl.inputs import VLPrompt, render_vl_prompt
from openmind.mm.vl.messages import MediaLimits
from openmind.nlp.pipelines.base import GenerationParams
from openmind.nlp.pipelines.chat import ChatPipeline, ChatSession
from openmind.nlp.pipelines.generative import GenerativeWrapper


class VLChatPipeline(ChatPipeline):
    """The ``mm-chat`` wrapper (see the module docstring)."""

    task = "mm-chat"
    options = ("system", "tools", "template", "model_group")
    accepts = "a string, a list of messages with text/image parts, or {messages, images}"
    record_keys = ("messages", "input", "text", "prompt")
    #: limits on the images of one input (the server sets its own)
    limits: MediaLimits | None = None

    def __init__(self, task: str | None = None, model: Any = None, **kwargs: Any) -> None:
        # built for task "chat" on a vision-language folder (ChatPipeline hands it over): mm-chat
        import os

        framework = kwargs.get("framework") or "auto"
        if framework == "auto":
            framework = os.environ.get("OPENMIND_FRAMEWORK") or "auto"
        if framework == "ms":
            from openmind.mm.errors import M_VL_FRAMEWORK

            raise M_VL_FRAMEWORK.error(
                f"{model!r} is a vision-language model; framework 'ms' has no vision-language chat pipeline",
                location="framework",
            )
        super().__init__(task="mm-chat", model=model, **kwargs)

    def configure(self, **options: Any) -> GenerationParams:
        params = GenerativeWrapper.configure(self, **options)
        from openmind.core.pipelines.errors import I_BAD_PARAM

        # the prompt is the processor's own chat template: nothing else is rendered for VL folders
        if getattr(self, "template", None):
            self._check_named_template(self.template)
        for name in ("model_group", "tools"):
            if getattr(self, name, None):
                raise I_BAD_PARAM.error(
                    f"{name}={getattr(self, name)!r}: a vision-language model is prompted through its processor's "
                    "own chat template; template, model_group and tools do not apply",
                    location=name,
                    hint="Leave it out (edit chat_template.jinja in the model folder to change the prompt).",
                )
        self.chat_template = None
        return params

    #: text-only conversations a named ``template`` must render exactly like the processor's
    PROBES = (
        [{"role": "user", "content": "Hi"}],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "2+2?"},
        ],
    )

    def _check_named_template(self, name: str) -> None:
        """A ``template`` named for a VL folder (LLaMA-Factory's ``template: qwen3_vl_nothink``) is
        accepted when it renders text conversations exactly as the model's own chat template does
        (the prompt then stays the processor's, images included); otherwise OM-I102 says where they
        differ. The processor's template is what the model was trained with."""
        from openmind.core.logs import logger
        from openmind.core.pipelines.errors import I_BAD_PARAM
        from openmind.nlp.templates.resolve import load_template

        fix = "Leave `template` out: a vision-language model is prompted through its processor's own chat template."
        try:
            named = load_template(str(name))
        except Exception as exc:  # unknown name: the coded error of the template registry, at this field
            raise I_BAD_PARAM.error(f"template={name!r}: {exc}", location="template", hint=fix) from None
        for probe in self.PROBES:
            own = render_vl_prompt(self.processor, [dict(m) for m in probe], None).text
            theirs = named.render([dict(m) for m in probe], add_generation_prompt=True)
            if own != theirs:
                at = next((i for i, (a, b) in enumerate(zip(own, theirs)) if a != b), min(len(own), len(theirs)))
                raise I_BAD_PARAM.error(
                    f"template={name!r} renders text differently from this vision-language model's own chat "
                    f"template (first difference at character {at}: {theirs[at : at + 30]!r} vs the model's "
                    f"{own[at : at + 30]!r})",
                    location="template",
                    hint=fix,
                )
        logger.info("template %r: the same prompt as the model's own chat template, which is used", name)
        self.template = None

    def stop_words(self) -> tuple[str, ...]:
        return ()

    @property
    def processor(self) -> Any:
        return self.backend.processor

    # ---- inputs --------------------------------------------------------------------------
    def configure_serving(self, ns: Any) -> None:
        """Take the server's media limits from the resolved deploy arguments (``media`` group)."""
        from openmind.mm.vl.serve import limits_from

        self.limits = limits_from(ns)

    def check_item(self, item: Any, index: int | None) -> dict[str, Any]:
        # one input: fields are named from the messages (messages[2].content[1].image_url); in a
        # list of inputs, from the input (input[3].messages[0]...)
        where = f"input[{index}]" if index is not None else ""
        if isinstance(item, str):
            return {"messages": [{"role": "user", "content": item}], "images": None, "where": where}
        if isinstance(item, dict) and "messages" in item:
            return {"messages": item["messages"], "images": item.get("images"), "where": where}
        if isinstance(item, (list, tuple)) and all(isinstance(m, dict) for m in item):
            return {"messages": list(item), "images": None, "where": where}
        raise I_BAD_INPUT.error(
            f"task 'mm-chat' takes {self.accepts}, or a list of those; got {type_name(item)} at {where or 'input'}",
            location=where or "input",
            hint='Example: chat([{"role": "user", "content": [{"type": "image", "image": "cat.png"}, '
            '{"type": "text", "text": "What is this?"}]}]).',
        )

    def from_record(self, record: Any, where: str) -> Any:
        """A row of an input file (``openmind run --input rows.jsonl``): a LLaMA-Factory row keeps its
        ``images`` (paths relative to the working directory) with its ``messages``."""
        if isinstance(record, dict) and "messages" in record and record.get("images") is not None:
            return {"messages": record["messages"], "images": record["images"]}
        return super().from_record(record, where)

    def split(self, inputs: Any) -> tuple[bool, list[Any]]:
        if isinstance(inputs, dict) or isinstance(inputs, str):
            return True, [self.check_item(inputs, None)]
        if isinstance(inputs, (list, tuple)) and inputs and all(isinstance(m, dict) and "role" in m for m in inputs):
            return True, [self.check_item(list(inputs), None)]
        if isinstance(inputs, (list, tuple)):
            return False, [self.check_item(item, i) for i, item in enumerate(inputs)]
        return True, [self.check_item(inputs, None)]

    def render_item(self, item: dict[str, Any], *, system: str | None = None) -> VLPrompt:
        messages = self.messages(list(item["messages"]), system if system is not None else self.system)
        return render_vl_prompt(
            self.processor,
            messages,
            item.get("images"),
            add_generation_prompt=True,
            limits=self.limits,
            where=f"{item['where']}.messages" if item.get("where") else "messages",
            where_images=f"{item['where']}.images" if item.get("where") else "images",
        )

    def render(self, conversation: Any, *, system: str | None = None, tools=None) -> str:
        """The prompt text of a conversation (messages or ``{messages, images}``)."""
        item = conversation if isinstance(conversation, dict) else {"messages": conversation, "images": None}
        return self.render_item(item, system=system).text

    def prompt(self, item: Any, overrides: dict[str, Any]) -> VLPrompt:
        return self.render_item(item, system=overrides.get("system"))

    def session(self, system: str | None = None, **params: Any) -> VLChatSession:
        return VLChatSession(self, system=system, params=params)


class VLChatSession(ChatSession):
    """A conversation that keeps its history, with images: :meth:`attach` adds an image (path,
    URL or PIL) to the next message (``openmind chat``'s ``/image PATH``)."""

    def __init__(self, pipe: VLChatPipeline, system: str | None = None, params: dict[str, Any] | None = None) -> None:
        super().__init__(pipe, system=system, params=params)
        self.pending: list[Any] = []

    def attach(self, image: Any) -> None:
        """Check ``image`` now (OM-I301 when missing or not an image) and keep it for the next message."""
        from openmind.mm.vl.messages import read_image

        self.pending.append(read_image(image, "/image"))

    def clear(self) -> None:
        super().clear()
        self.pending.clear()

    def send(self, text: str, *, stream: bool = False, **params: Any) -> str | Iterator[str]:
        if not self.pending:
            return super().send(text, stream=stream, **params)
        content = [*({"type": "image", "image": image} for image in self.pending), {"type": "text", "text": text}]
        self.pending = []
        message = {"role": "user", "content": content}
        conversation = [*self.history, message]
        kwargs = {**self.params, **params, "system": self.system or ""}
        if not stream:
            answer = self.pipe(conversation, **kwargs)["content"]
            self.history += [message, {"role": "assistant", "content": answer}]
            return answer
        deltas = self.pipe(conversation, stream=True, **kwargs)

        def recording() -> Iterator[str]:
            parts = []
            for delta in deltas:
                parts.append(delta)
                yield delta
            self.history += [message, {"role": "assistant", "content": "".join(parts)}]

        return recording()
