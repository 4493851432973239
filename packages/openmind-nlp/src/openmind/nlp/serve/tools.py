"""Function calling and structured outputs for the chat route (framework-free).

* :func:`constraint_for` turns ``response_format`` (json_object / json_schema) and a forced
  ``tool_choice`` (``required`` / a named function) into a grammar
  (:class:`~openmind.nlp.pipelines.controls.Constraint`) the backend enforces while decoding: a
  forced call is the family's own call syntax (the template's tool parser writes the prefix and
  suffix) around JSON that matches the function's ``parameters``.
* :func:`assistant_message` parses the generated text with the template's tool parser into
  OpenAI's ``message`` (``tool_calls`` with ids and JSON-string arguments) and finish reason:
  ``tool_calls`` when calls were parsed, ``malformed_tool_call`` (the text is returned as content)
  when the model started a call it did not finish as valid JSON.
"""

from __future__ import annotations

import json
from typing import Any

from openmind.nlp.serve.context import ApiError

#: finish_reason of an answer that began a tool call but did not parse (its text is the content)
MALFORMED = "malformed_tool_call"


def parser_for(ctx: Any, tools: list[dict] | None) -> Any:
    if not tools:
        return None
    getter = getattr(ctx.engine, "tool_parser", None)
    return getter() if getter is not None else None


def constraint_for(body: Any, parser: Any) -> Any:
    """The grammar of a request, or ``None``."""
    from openmind.nlp.pipelines.controls import Alternative, Constraint, json_object_constraint

    choice = body.tool_choice
    if choice == "required" or (choice is not None and not isinstance(choice, str)):
        if parser is None:
            raise ApiError(
                400,
                "tool_choice 'required' / a named function needs a chat template that declares its tool-call "
                "format (a tool parser); this model's template has none",
                param="tool_choice",
            )
        names = [choice.function.name] if not isinstance(choice, str) else [t.function.name for t in body.tools]
        schemas = {t.function.name: t.function.parameters or {"type": "object"} for t in body.tools}
        prefixes = {name: parser.call_prefix(name) for name in names}
        if any(prefix is None for prefix in prefixes.values()):
            raise ApiError(400, f"the {parser.name} tool-call parser cannot force a call", param="tool_choice")
        alternatives = tuple(
            Alternative(json.dumps(schemas[name]), prefix=prefixes[name], suffix=parser.call_suffix()) for name in names
        )
        return Constraint(alternatives, "tool_choice")
    fmt = body.response_format
    if fmt is None or fmt.type == "text":
        return None
    if fmt.type == "json_object":
        return json_object_constraint()
    from openmind.nlp.pipelines.controls import json_schema_constraint

    return json_schema_constraint(fmt.json_schema.schema_, "response_format")


def assistant_message(text: str, finish: str, parser: Any, parallel: bool = True) -> tuple[dict[str, Any], str]:
    """OpenAI's assistant ``message`` for generated ``text`` and its ``finish_reason``."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if parser is None or finish == "cancelled":
        return message, finish
    parsed = parser.parse(text)
    if parsed.calls:
        calls = parsed.calls if parallel else parsed.calls[:1]
        message = {
            "role": "assistant",
            "content": parsed.content or None,
            "tool_calls": [call.openai() for call in calls],
        }
        return message, "tool_calls" if finish == "stop" else finish
    if parsed.malformed:
        return message, MALFORMED
    return message, finish
