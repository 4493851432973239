"""OpenAI wire format helpers shared by the serving routes (sampling, usage, logprobs, SSE)."""

from __future__ import annotations

import json
from typing import Any

from openmind.nlp.serve.engine import Output, Sampling, TokenLogprob
from openmind.nlp.serve.schemas import error_body

#: ``max_tokens`` of ``/v1/completions`` when the request does not say: OpenAI's documented default
#: for that endpoint (chat uses :data:`openmind.core.pipelines.base.DEFAULT_MAX_NEW_TOKENS`).
COMPLETIONS_DEFAULT_MAX_TOKENS = 16


def sampling(body: Any, max_tokens: int, logprobs: int | None) -> Sampling:
    return Sampling(
        max_tokens=max_tokens,
        temperature=1.0 if body.temperature is None else float(body.temperature),
        top_p=1.0 if body.top_p is None else float(body.top_p),
        seed=body.seed,
        stop=tuple(body.stop or ()),
        logprobs=logprobs,
        top_k=body.top_k if body.top_k and body.top_k > 0 else None,
        min_p=body.min_p or None,
        repetition_penalty=body.repetition_penalty,
        do_sample=body.do_sample,
        logit_bias=tuple(sorted((int(k), float(v)) for k, v in (body.logit_bias or {}).items())),
        presence_penalty=float(body.presence_penalty or 0.0),
        frequency_penalty=float(body.frequency_penalty or 0.0),
    )


def safe_prefix(text: str, stops: tuple[str, ...]) -> str:
    """The part of ``text`` that can be streamed: up to a stop string, minus a tail that may begin one."""
    if not stops:
        return text
    cut = len(text)
    for stop in stops:
        at = text.find(stop)
        if at != -1:
            cut = min(cut, at)
            continue
        for k in range(min(len(stop) - 1, len(text)), 0, -1):
            if text.endswith(stop[:k]):
                cut = min(cut, len(text) - k)
                break
    return text[:cut]


def sse_error(message: str, type_: str) -> str:
    return f"data: {json.dumps(error_body(message, type_))}\n\n"


def usage(prompt_tokens: int, outputs: list[Output]) -> dict[str, int]:
    completion = sum(o.completion_tokens for o in outputs)
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion, "total_tokens": prompt_tokens + completion}


def token_bytes(token: str) -> list[int]:
    return list(token.encode("utf-8"))


def chat_logprobs(items: list[TokenLogprob] | None) -> list[dict[str, Any]]:
    out = []
    for t in items or []:
        out.append(
            {
                "token": t.token,
                "logprob": t.logprob,
                "bytes": token_bytes(t.token),
                "top_logprobs": [{"token": s, "logprob": lp, "bytes": token_bytes(s)} for s, lp in t.top],
            }
        )
    return out


def completion_logprobs(out: Output, echo: bool) -> dict[str, Any]:
    items = [*(out.prompt_logprobs or [] if echo else []), *(out.logprobs or [])]
    tokens, token_logprobs, top, offsets = [], [], [], []
    offset = 0
    for t in items:
        tokens.append(t.token)
        token_logprobs.append(t.logprob)
        top.append(dict(t.top) if t.logprob is not None else None)
        offsets.append(offset)
        offset += len(t.token)
    return {"tokens": tokens, "token_logprobs": token_logprobs, "top_logprobs": top, "text_offset": offsets}
