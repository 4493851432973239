"""OpenAI request bodies (pydantic) and the OpenAI-style error body.

Top-level fields outside the schema are ignored and named in the ``X-OpenMind-Ignored-Fields``
response header (``--strict-schema`` makes them a 400 naming the field). vLLM's sampling extras
(``top_k``, ``min_p``, ``repetition_penalty``) and ``do_sample`` (LLaMA-Factory-style clients) are
part of the schema and honoured. Integers are strict: ``max_tokens: "5"`` or ``true`` is a 400.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator, model_validator


class Limits(BaseModel):
    """Server-side caps (from the ``deploy`` arguments)."""

    max_prompt_tokens: int = 8192
    max_tokens_cap: int = 4096
    max_n: int = 8


#: seeds are 64-bit (what torch.manual_seed takes); 2**80 is a 400, not a 500
SEED_MIN, SEED_MAX = -(2**63), 2**63 - 1


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    model: str | None = None
    user: str | None = None  # an end-user id for logs; no effect on generation
    seed: StrictInt | None = Field(None, ge=SEED_MIN, le=SEED_MAX)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    n: StrictInt = Field(1, ge=1)
    stop: str | list[str] | None = None
    stream: StrictBool = False
    stream_options: dict[str, Any] | None = None
    presence_penalty: float | None = Field(None, ge=-2.0, le=2.0)
    frequency_penalty: float | None = Field(None, ge=-2.0, le=2.0)
    logit_bias: dict[str, float] | None = None
    # vLLM's sampling extras (``extra_body``) and LLaMA-Factory's do_sample
    top_k: StrictInt | None = Field(None, ge=-1)
    min_p: float | None = Field(None, ge=0.0, le=1.0)
    repetition_penalty: float | None = Field(None, gt=0.0, le=10.0)
    do_sample: StrictBool | None = None

    @field_validator("stop")
    @classmethod
    def _stop(cls, value: str | list[str] | None) -> list[str]:
        if value is None:
            return []
        value = [value] if isinstance(value, str) else value
        if len(value) > 4:
            raise ValueError("at most 4 stop sequences are allowed")
        if any(not s for s in value):
            raise ValueError("stop sequences must not be empty")
        return value

    @field_validator("logit_bias")
    @classmethod
    def _logit_bias(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        for key, bias in (value or {}).items():
            if not key.strip().lstrip("-").isdigit() or int(key) < 0:
                raise ValueError(f"key {key!r} is not a token id (a non-negative integer as a string)")
            if not -100 <= bias <= 100:
                raise ValueError(f"bias {bias} of token {key} is outside [-100, 100]")
        if value and len(value) > 300:
            raise ValueError("at most 300 token biases are allowed")
        return value

    @model_validator(mode="after")
    def _unsupported(self):
        if self.stream_options is not None:
            extra = set(self.stream_options) - {"include_usage"}
            if extra:
                raise ValueError(f"stream_options: unknown key(s) {', '.join(sorted(extra))}")
        return self

    @property
    def include_usage(self) -> bool:
        return bool((self.stream_options or {}).get("include_usage"))


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["text"]
    text: str


class ImageUrl(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str = Field(min_length=1)
    detail: Literal["auto", "low", "high"] | None = None


class ImagePart(BaseModel):
    """OpenAI's image content part; served by vision-language models (openmind-mm), which check
    the URL (data:, file:// under --media-root, http(s) with --allow-remote-media) and the caps."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["image_url"]
    image_url: ImageUrl


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")  # tool_calls, tool_call_id, name ... go to the template

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart | ImagePart] | None = None

    def plain(self) -> dict[str, Any]:
        out = self.model_dump(exclude_none=True)
        if isinstance(self.content, list) and any(isinstance(p, ImagePart) for p in self.content):
            out["content"] = [
                {"type": "text", "text": p.text}
                if isinstance(p, ContentPart)
                else {"type": "image_url", "image_url": {"url": p.image_url.url}}
                for p in self.content
            ]
        elif isinstance(self.content, list):
            out["content"] = "".join(part.text for part in self.content)
        elif self.content is None:
            out["content"] = ""
        if out["role"] == "developer":  # OpenAI's newer name for the system role
            out["role"] = "system"
        calls = out.get("tool_calls")
        if isinstance(calls, list):  # OpenAI sends arguments as a JSON string; templates take objects
            fixed = []
            for call in calls:
                call = dict(call) if isinstance(call, dict) else call
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                    try:
                        arguments = json.loads(function["arguments"] or "{}")
                    except ValueError:
                        arguments = function["arguments"]
                    call["function"] = {**function, "arguments": arguments}
                fixed.append(call)
            out["tool_calls"] = fixed
        return out


class FunctionDef(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class Tool(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Literal["function"]
    function: FunctionDef


class _FunctionName(BaseModel):
    name: str


class NamedToolChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["function"]
    function: _FunctionName


class JsonSchemaFormat(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str = "response"
    description: str | None = None
    schema_: dict[str, Any] = Field(default_factory=lambda: {"type": "object"}, alias="schema")
    strict: bool | None = None


class ResponseFormat(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchemaFormat | None = None

    @model_validator(mode="after")
    def _schema(self):
        if self.type == "json_schema" and self.json_schema is None:
            raise ValueError("type 'json_schema' needs a 'json_schema': {name, schema, strict} object")
        return self


class ChatCompletionRequest(_Body):
    messages: list[ChatMessage] = Field(min_length=1)
    max_tokens: StrictInt | None = Field(None, ge=1)
    max_completion_tokens: StrictInt | None = Field(None, ge=1)
    logprobs: StrictBool = False
    top_logprobs: StrictInt | None = Field(None, ge=0, le=20)
    tools: list[Tool] | None = None
    tool_choice: Literal["none", "auto", "required"] | NamedToolChoice | None = None
    parallel_tool_calls: StrictBool | None = None
    response_format: ResponseFormat | None = None

    @model_validator(mode="after")
    def _chat_checks(self):
        if self.top_logprobs is not None and not self.logprobs:
            raise ValueError("top_logprobs needs logprobs: true")
        if self.tool_choice in ("required",) or isinstance(self.tool_choice, NamedToolChoice):
            if not self.tools:
                raise ValueError("tool_choice: 'required' or a named function needs 'tools'")
        if isinstance(self.tool_choice, NamedToolChoice):
            names = [t.function.name for t in self.tools or []]
            if self.tool_choice.function.name not in names:
                raise ValueError(
                    f"tool_choice: function {self.tool_choice.function.name!r} is not among the tools "
                    f"({', '.join(names)})"
                )
        forced = self.tool_choice == "required" or isinstance(self.tool_choice, NamedToolChoice)
        if forced and self.response_format is not None and self.response_format.type != "text":
            raise ValueError("response_format and a forced tool_choice cannot be combined")
        return self

    def tool_dicts(self) -> list[dict[str, Any]] | None:
        """The tools as plain dicts (what templates render)."""
        if not self.tools:
            return None
        return [t.model_dump(exclude_none=True) for t in self.tools]


class CompletionRequest(_Body):
    prompt: str | list[str] | list[StrictInt] | list[list[StrictInt]]
    max_tokens: StrictInt | None = Field(16, ge=0)
    echo: StrictBool = False
    logprobs: StrictInt | None = Field(None, ge=0, le=20)
    best_of: int | None = None
    suffix: str | None = None

    @field_validator("prompt")
    @classmethod
    def _prompt(cls, value):
        if isinstance(value, list) and not value:
            raise ValueError("prompt must not be empty")
        if isinstance(value, list) and value and isinstance(value[0], list) and any(not p for p in value):
            raise ValueError("token-id prompts must not be empty")
        return value

    @model_validator(mode="after")
    def _completion_checks(self):
        if self.best_of not in (None, self.n):
            raise ValueError("best_of is not supported (it must equal n)")
        if self.suffix:
            raise ValueError(
                "suffix (fill-in-the-middle insertion) is not supported by this server; "
                "send the text before the gap as the prompt and omit suffix"
            )
        if self.max_tokens == 0 and not self.echo:
            raise ValueError("max_tokens: 0 is only meaningful with echo: true")
        return self

    def prompts(self) -> list[str | list[int]]:
        """The prompt(s) as a list: strings or token-id lists."""
        p = self.prompt
        if isinstance(p, str):
            return [p]
        if p and isinstance(p[0], int):
            return [list(p)]  # type: ignore[arg-type]
        return list(p)  # type: ignore[arg-type]


class EmbeddingRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: str | list[str] | list[int] | list[list[int]]
    model: str | None = None
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = None
    user: str | None = None

    @field_validator("input")
    @classmethod
    def _input(cls, value):
        if isinstance(value, list) and not value:
            raise ValueError("input must not be empty")
        if isinstance(value, str) and not value:
            raise ValueError("input must not be an empty string")
        return value

    @model_validator(mode="after")
    def _checks(self):
        if self.dimensions is not None:
            raise ValueError("dimensions is not supported: the model's own embedding size is returned")
        return self

    def inputs(self) -> list[str | list[int]]:
        v = self.input
        if isinstance(v, str):
            return [v]
        if v and isinstance(v[0], int):
            return [list(v)]  # type: ignore[arg-type]
        return list(v)  # type: ignore[arg-type]


def error_body(message: str, type_: str = "invalid_request_error", param: str | None = None, code: str | None = None):
    """The body OpenAI returns on errors (the openai client raises typed exceptions from it)."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def describe_validation_errors(errors: list[dict[str, Any]]) -> tuple[str, str | None]:
    """Turn pydantic / FastAPI validation errors into one message and the first offending field."""
    parts: list[str] = []
    first: str | None = None
    for err in errors[:5]:
        loc = [str(p) for p in err.get("loc", ()) if p not in ("body",)]
        # pydantic lists each member of a union; keep the path readable
        loc = [p for p in loc if not p.startswith(("list[", "str", "int", "function-"))]
        field = ".".join(loc) or "body"
        first = first or field
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            msg = "unknown field (not part of the OpenAI API this server implements)"
        elif err.get("type") == "json_invalid":
            msg = f"malformed JSON: {err.get('ctx', {}).get('error', msg)}"
            field = "body"
        parts.append(f"{field}: {msg.removeprefix('Value error, ')}")
    return "; ".join(dict.fromkeys(parts)), first
