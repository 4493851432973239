"""OpenAI request bodies (pydantic) and the OpenAI-style error body.

Unknown fields are rejected (400 naming the field) instead of being silently ignored; fields that
OpenAI defines but this server does not implement are accepted only at their neutral value
(``presence_penalty: 0``, ``logit_bias: {}``...), anything else is a 400 that says so.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Limits(BaseModel):
    """Server-side caps (from the ``deploy`` arguments)."""

    max_prompt_tokens: int = 8192
    max_tokens_cap: int = 4096
    max_n: int = 8


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    model: str | None = None
    user: str | None = None  # an end-user id for logs; no effect on generation
    seed: int | None = None
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    n: int = Field(1, ge=1)
    stop: str | list[str] | None = None
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    logit_bias: dict[str, float] | None = None

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

    @model_validator(mode="after")
    def _unsupported(self):
        for name in ("presence_penalty", "frequency_penalty"):
            if getattr(self, name) not in (None, 0, 0.0):
                raise ValueError(f"{name} is not supported by this server; omit it or pass 0")
        if self.logit_bias:
            raise ValueError("logit_bias is not supported by this server; omit it")
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


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")  # tool_calls, tool_call_id, name ... go to the template

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None

    def plain(self) -> dict[str, Any]:
        out = self.model_dump(exclude_none=True)
        if isinstance(self.content, list):
            out["content"] = "".join(part.text for part in self.content)
        elif self.content is None:
            out["content"] = ""
        if out["role"] == "developer":  # OpenAI's newer name for the system role
            out["role"] = "system"
        return out


class ChatCompletionRequest(_Body):
    messages: list[ChatMessage] = Field(min_length=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    logprobs: bool = False
    top_logprobs: int | None = Field(None, ge=0, le=20)
    tools: list[dict[str, Any]] | None = None
    tool_choice: Any = None
    response_format: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _chat_checks(self):
        if self.top_logprobs is not None and not self.logprobs:
            raise ValueError("top_logprobs needs logprobs: true")
        if self.response_format and self.response_format.get("type", "text") != "text":
            raise ValueError("response_format: only {'type': 'text'} is supported")
        if self.tool_choice not in (None, "auto", "none"):
            raise ValueError("tool_choice: only 'auto' and 'none' are supported")
        return self


class CompletionRequest(_Body):
    prompt: str | list[str] | list[int] | list[list[int]]
    max_tokens: int | None = Field(16, ge=0)
    echo: bool = False
    logprobs: int | None = Field(None, ge=0, le=20)
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
            raise ValueError("suffix (insertion) is not supported")
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
