"""The model side of evaluation: the task pipelines (PyTorch or MindSpore) behind :class:`EvalModel`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from openmind.nlp.eval.errors import E_MODEL_CANNOT_SCORE


class PipelineEvalModel:
    """Log-likelihoods and greedy generations from a generative wrapper (``chat`` or ``text-generation``)."""

    def __init__(self, wrapper: Any, name: str | None = None, batch_size: int = 8) -> None:
        if not hasattr(wrapper, "loglikelihood") or not hasattr(wrapper, "backend"):
            raise E_MODEL_CANNOT_SCORE.error(
                f"the {getattr(wrapper, 'task', '?')!r} pipeline has no log-likelihood scoring; evaluate a causal LM"
            )
        self.wrapper = wrapper
        self.name = name or os.path.basename(os.path.normpath(str(wrapper.model_dir)))
        self.batch_size = max(1, batch_size)

    @property
    def framework(self) -> str:
        return str(getattr(self.wrapper, "selection", {}).get("framework", ""))

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[tuple[float, bool]]:
        return self.wrapper.loglikelihood(list(requests), batch_size=self.batch_size)

    def generate(self, prompts: Sequence[str | list[dict]], *, max_tokens: int, stop: Sequence[str]) -> list[str]:
        from openmind.nlp.pipelines.base import GenerationParams

        params = GenerationParams.build(max_new_tokens=max_tokens, temperature=0, stop=tuple(stop))
        out: list[str] = [""] * len(prompts)
        chats = [i for i, p in enumerate(prompts) if not isinstance(p, str)]
        texts = [i for i, p in enumerate(prompts) if isinstance(p, str)]
        if chats:
            if getattr(self.wrapper, "task", "") != "chat":
                raise E_MODEL_CANNOT_SCORE.error("a chat-formatted task needs a model with a chat template")
            answers = self.wrapper(
                [prompts[i] for i in chats],
                batch_size=self.batch_size,
                max_new_tokens=max_tokens,
                temperature=0,
                stop=list(stop),
            )
            for i, answer in zip(chats, answers):
                out[i] = answer["content"]
        if texts:
            generations = self.wrapper.backend.generate([prompts[i] for i in texts], params, batch_size=self.batch_size)
            for i, generation in zip(texts, generations):
                out[i] = generation.text
        return out

    def prompt_logprob_sum(self, text: str) -> float:
        """log p(text) under the model (BOS-conditioned), for lm-eval's rolling log-likelihood."""
        scored = self.wrapper.backend.prompt_logprobs([text])[0]
        return float(sum(t.logprob for t in scored if t.logprob is not None))


def load_model(ns: Any) -> PipelineEvalModel:
    """Build the evaluated model from resolved unified arguments (``model``, ``template``, ``eval``)."""
    from openmind import pipeline
    from openmind.core.errors import OpenMindError

    m = ns.model
    common: dict[str, Any] = dict(
        framework=m.framework,
        device=m.device,
        dtype=m.dtype,
        adapter=m.adapter,
        trust_remote_code=m.trust_remote_code,
        allow_pickle=m.allow_pickle,
        batch_size=ns.eval.eval_batch_size,
    )
    try:
        wrapper = pipeline(
            "chat",
            model=m.model,
            template=ns.template.template,
            model_group=m.model_group,
            system=ns.template.system,
            **common,
        )
    except OpenMindError as exc:
        if not exc.code.startswith("OM-TP") or ns.template.template or m.model_group:
            raise
        wrapper = pipeline("text-generation", model=m.model, **common)
    name = os.path.basename(os.path.normpath(m.adapter or m.model))
    return PipelineEvalModel(wrapper, name=name, batch_size=ns.eval.eval_batch_size)
