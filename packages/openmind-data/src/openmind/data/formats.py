"""The standard training formats (one per training task) and their row checks.

=================  =====  ================================================================
format             task   columns
=================  =====  ================================================================
``pretrain``       pt     ``text``
``sft``            sft    ``messages`` (roles system/user/assistant/tool), ``tools``
``preference``     dpo    ``messages`` (the prompt, ending with a user turn), ``chosen``,
                          ``rejected`` (the two assistant answers)
``pairwise``       rm     as ``preference``
``unpaired``       kto    ``messages`` (a conversation ending with the answer), ``tools``,
                          ``label`` (true: desirable answer; LLaMA-Factory's ``kto_tag``)
``prompts``        grpo   ``messages`` (the prompt, ending with a user turn), ``answer``
                          (the reference answer given to the reward functions; may be empty)
``multimodal-sft`` mm-sft as ``sft`` + ``images``/``videos``/``audios``: one ``<image>`` /
                          ``<video>`` / ``<audio>`` placeholder in the text per media file
=================  =====  ================================================================

A message is ``{"role", "content", "tool_calls", "name"}``; ``tool_calls`` (assistant turns
that call tools) and ``tools`` (the tool schemas offered) are stored as JSON strings, so every
row has the same Arrow schema. :func:`for_template` turns a stored row back into OpenAI-style
messages for a template.

Each prepared dataset also keeps two provenance columns, ``_file`` (index into the list of
source files) and ``_row`` (record index in that file), so any later failure names its source.

Checks return :class:`Problem` s (field + reason); the caller adds file and line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

ROLES = ("system", "user", "assistant", "tool")
PLACEHOLDERS = {"images": "<image>", "videos": "<video>", "audios": "<audio>"}
MEDIA = tuple(PLACEHOLDERS)
PROVENANCE = ("_file", "_row")

#: format name -> (task, columns)
FORMATS: dict[str, tuple[str, tuple[str, ...]]] = {
    "pretrain": ("pt", ("text",)),
    "sft": ("sft", ("messages", "tools")),
    "preference": ("dpo", ("messages", "chosen", "rejected")),
    "pairwise": ("rm", ("messages", "chosen", "rejected")),
    "unpaired": ("kto", ("messages", "tools", "label")),
    "prompts": ("grpo", ("messages", "answer")),
    "multimodal-sft": ("mm-sft", ("messages", "tools", *MEDIA)),
}
#: training stage -> the standard format its rows must have
STAGE_FORMAT = {
    "pt": "pretrain",
    "sft": "sft",
    "dpo": "preference",
    "rm": "pairwise",
    "orpo": "preference",
    "simpo": "preference",
    "kto": "unpaired",
    "grpo": "prompts",
    "mm-sft": "multimodal-sft",
}
#: the stages trained on chosen/rejected pairs (encoded as two sequences per row)
PAIR_STAGES = ("dpo", "rm", "orpo", "simpo")


def stage_formats(registry: Any = None) -> dict[str, str]:
    """Training stage -> the standard format its rows must have: the built-in table plus every
    registered :class:`~openmind.core.specs.DatasetSpec` whose format openmind-data checks (a
    plugin's training task gets a stage here by registering ``DatasetSpec(name=FORMAT, task=STAGE)``),
    each task's aliases included. Registered stages come first, in registry order."""
    if registry is None:
        from openmind.core.plugins import get_registry

        registry = get_registry()
    out: dict[str, str] = {}
    aliases = {task.name: task.aliases for task in registry.tasks()}
    for spec in registry.all("dataset"):
        if spec.name in FORMATS:
            for stage in (spec.task, *aliases.get(spec.task, ())):
                out.setdefault(stage, spec.name)
    for stage, fmt in STAGE_FORMAT.items():
        out.setdefault(stage, fmt)
    return out


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a row: ``field`` (e.g. ``messages[2].role``) and a ``reason``."""

    field: str
    reason: str
    #: error code when this problem stops a run (default: OM-D001)
    code: str = ""

    def to_dict(self) -> dict[str, str]:
        out = {"field": self.field, "reason": self.reason}
        if self.code:
            out["code"] = self.code
        return out


def features(fmt: str):
    """The ``datasets.Features`` of a standard format (with the provenance columns)."""
    from datasets import Features, Sequence, Value

    message = {
        "role": Value("string"),
        "content": Value("string"),
        "tool_calls": Value("string"),
        "name": Value("string"),
    }
    cols: dict[str, Any] = {}
    if fmt == "pretrain":
        cols["text"] = Value("string")
    else:
        cols["messages"] = [message]
        if fmt in ("sft", "multimodal-sft", "unpaired"):
            cols["tools"] = Value("string")
        if fmt == "unpaired":
            cols["label"] = Value("bool")
        if fmt == "prompts":
            cols["answer"] = Value("string")
        if fmt in ("preference", "pairwise"):
            cols["chosen"] = Value("string")
            cols["rejected"] = Value("string")
        if fmt == "multimodal-sft":
            for media in MEDIA:
                cols[media] = Sequence(Value("string"))
    cols["_file"] = Value("int32")
    cols["_row"] = Value("int64")
    return Features(cols)


def message(role: Any, content: Any, tool_calls: Any = None, name: Any = None) -> dict[str, Any]:
    """A stored message; ``tool_calls`` lists are serialised to JSON."""
    if tool_calls is not None and not isinstance(tool_calls, str):
        tool_calls = json.dumps(tool_calls, ensure_ascii=False)
    return {"role": role, "content": content, "tool_calls": tool_calls or None, "name": name}


def for_template(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stored messages -> OpenAI-style messages (no null keys; ``tool_calls`` parsed)."""
    out = []
    for m in messages:
        item: dict[str, Any] = {"role": m["role"], "content": m.get("content") or ""}
        calls = m.get("tool_calls")
        if calls:
            item["tool_calls"] = json.loads(calls) if isinstance(calls, str) else calls
        if m.get("name"):
            item["name"] = m["name"]
        out.append(item)
    return out


def parse_tools(tools: Any) -> list[dict] | None:
    if tools is None or tools == "":
        return None
    return json.loads(tools) if isinstance(tools, str) else tools


# ---- checks -------------------------------------------------------------------------------


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def check_tools(tools: Any, field: str = "tools") -> list[Problem]:
    if tools is None or tools == "":
        return []
    try:
        parsed = json.loads(tools) if isinstance(tools, str) else tools
    except json.JSONDecodeError as exc:
        return [Problem(field, f"is not valid JSON ({exc.msg} at character {exc.pos})")]
    if not isinstance(parsed, list) or not all(isinstance(t, dict) for t in parsed):
        return [Problem(field, "must be a list of tool schemas (JSON objects)")]
    return []


def check_tool_calls(calls: Any, field: str) -> list[Problem]:
    try:
        parsed = json.loads(calls) if isinstance(calls, str) else calls
    except json.JSONDecodeError as exc:
        return [Problem(field, f"is not valid JSON ({exc.msg})")]
    if not isinstance(parsed, list) or not parsed:
        return [Problem(field, "must be a non-empty list of calls")]
    for j, call in enumerate(parsed):
        fn = call.get("function", call) if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not _is_text(fn.get("name")):
            return [Problem(f"{field}[{j}]", "a tool call needs a function name")]
    return []


def check_conversation(messages: Any, *, field: str = "messages", prompt_only: bool = False) -> list[Problem]:
    """Roles, order and contents of a conversation.

    ``prompt_only`` (preference prompts): the conversation must end with a user (or tool) turn
    instead of an assistant turn.
    """
    if not isinstance(messages, list) or not messages:
        return [Problem(field, "must be a non-empty list of messages")]
    problems: list[Problem] = []
    previous = None
    for i, m in enumerate(messages):
        where = f"{field}[{i}]"
        if not isinstance(m, dict):
            problems.append(Problem(where, "a message must be an object with role and content"))
            previous = None
            continue
        role = m.get("role")
        content = m.get("content")
        calls = m.get("tool_calls")
        if role not in ROLES:
            problems.append(Problem(f"{where}.role", f"unknown role {role!r}; expected one of {', '.join(ROLES)}"))
            previous = role
            continue
        if content is not None and not isinstance(content, str):
            problems.append(Problem(f"{where}.content", f"must be a string, not {type(content).__name__}"))
        elif role == "assistant":
            if calls:
                problems += check_tool_calls(calls, f"{where}.tool_calls")
            elif not _is_text(content):
                problems.append(Problem(f"{where}.content", "empty assistant turn"))
        elif not _is_text(content):
            problems.append(Problem(f"{where}.content", f"empty {role} turn"))
        if role == "system" and i != 0:
            problems.append(Problem(f"{where}.role", "a system message may only come first"))
            continue  # judge the next turn by the one before this misplaced message
        elif role == "user" and previous == "user":
            problems.append(Problem(f"{where}.role", "two user turns in a row"))
        elif role == "assistant" and previous not in ("user", "tool"):
            problems.append(
                Problem(
                    f"{where}.role", f"an assistant turn must follow a user or tool turn, not {previous or 'the start'}"
                )
            )
        elif role == "tool" and previous not in ("assistant", "tool"):
            problems.append(Problem(f"{where}.role", "a tool turn must follow an assistant turn that calls a tool"))
        previous = role
    if problems:
        return problems
    last = messages[-1].get("role")
    if prompt_only:
        if last not in ("user", "tool"):
            problems.append(Problem(f"{field}[{len(messages) - 1}].role", "the prompt must end with a user turn"))
    else:
        if last != "assistant":
            problems.append(
                Problem(f"{field}[{len(messages) - 1}].role", "the conversation must end with an assistant turn")
            )
    return problems


def check_media(row: dict[str, Any]) -> list[Problem]:
    """Placeholders vs media lists: one ``<image>`` per entry of ``images`` and so on."""
    problems: list[Problem] = []
    texts = [m.get("content") or "" for m in row.get("messages") or [] if isinstance(m, dict)]
    for media, tag in PLACEHOLDERS.items():
        files = row.get(media) or []
        if not isinstance(files, list) or not all(_is_text(f) for f in files):
            problems.append(Problem(media, "must be a list of file paths or URLs"))
            continue
        count = sum(t.count(tag) for t in texts if isinstance(t, str))
        if count != len(files):
            if count > len(files):
                reason = f"{count} {tag} placeholder(s) in the messages but {len(files)} {media}"
            else:
                reason = f"{len(files)} {media} but only {count} {tag} placeholder(s) in the messages"
            problems.append(Problem(media, reason))
    return problems


def check_row(fmt: str, row: dict[str, Any]) -> list[Problem]:
    """All problems of one standard-format row (an empty list when it is valid)."""
    if fmt == "pretrain":
        text = row.get("text")
        if not isinstance(text, str):
            return [Problem("text", "missing" if text is None else f"must be a string, not {type(text).__name__}")]
        return [] if text.strip() else [Problem("text", "empty text")]
    if fmt in ("preference", "pairwise"):
        problems = check_conversation(row.get("messages"), prompt_only=True)
        for key in ("chosen", "rejected"):
            value = row.get(key)
            if value is None:
                problems.append(Problem(key, "missing"))
            elif not isinstance(value, str):
                problems.append(Problem(key, f"must be a string, not {type(value).__name__}"))
            elif not value.strip():
                problems.append(Problem(key, f"empty {key} answer"))
        if not problems and row["chosen"] == row["rejected"]:
            problems.append(Problem("rejected", "chosen and rejected answers are identical"))
        return problems
    if fmt == "prompts":
        problems = check_conversation(row.get("messages"), prompt_only=True)
        answer = row.get("answer")
        if answer is not None and not isinstance(answer, str):
            problems.append(Problem("answer", f"must be a string, not {type(answer).__name__}"))
        return problems
    problems = check_conversation(row.get("messages"))
    problems += check_tools(row.get("tools"))
    if fmt == "unpaired":
        label = row.get("label")
        if not isinstance(label, bool):
            problems.append(
                Problem(
                    "label",
                    "missing (the kto_tag column: true for a desirable answer, false for an undesirable one)"
                    if label is None
                    else f"must be true or false, not {label!r}",
                )
            )
    if fmt == "multimodal-sft":
        problems += check_media(row)
    else:
        for media in PLACEHOLDERS:
            if row.get(media):
                problems.append(Problem(media, f"media files need the multimodal-sft format (task mm-sft), not {fmt}"))
    return problems
