"""``question-answering``: extractive QA, the answer span of a context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openmind.core.errors import I_BAD_INPUT
from openmind.nlp.errors import I_BAD_PARAM
from openmind.nlp.pipelines.wrapper import PipelineWrapper, type_name


@dataclass(frozen=True)
class QuestionAnsweringParams:
    """transformers' question-answering parameters (same names, same defaults)."""

    top_k: int = 1
    doc_stride: int = 128
    max_answer_len: int = 15
    max_seq_len: int = 384
    max_question_len: int = 64
    handle_impossible_answer: bool = False

    def check(self) -> None:
        for name in ("top_k", "doc_stride", "max_answer_len", "max_seq_len", "max_question_len"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise I_BAD_PARAM.error(f"{name}={value!r}: must be an integer >= 1", location=name)
        if self.doc_stride >= self.max_seq_len:
            raise I_BAD_PARAM.error(
                f"doc_stride={self.doc_stride} must be smaller than max_seq_len={self.max_seq_len}",
                location="doc_stride",
            )


class QuestionAnsweringPipeline(PipelineWrapper):
    """A question and a context in, the answer span out: ``{"score", "start", "end", "answer"}``
    (``start``/``end`` are character offsets into the context; a list of ``top_k`` when > 1).

    Example::

        qa = pipeline("question-answering", model="./roberta-squad2")
        qa(question="Where do I live?", context="My name is Wolfgang and I live in Berlin.")
        qa([{"question": q, "context": c} for q, c in pairs], top_k=2)

    Options (per pipeline or per call), as transformers': ``top_k``, ``doc_stride``,
    ``max_answer_len``, ``max_seq_len``, ``max_question_len``, ``handle_impossible_answer``.
    """

    task = "question-answering"
    params_cls = QuestionAnsweringParams
    accepts = "a {question, context} mapping"
    record_keys = ("question",)

    def check_item(self, item: Any, index: int | None) -> dict[str, str]:
        where = f"input[{index}]" if index is not None else "input"
        if not isinstance(item, dict):
            raise I_BAD_INPUT.error(
                f"task 'question-answering' takes {{question, context}} mappings; got {type_name(item)} at {where}",
                location=where,
                hint='Example: qa(question="Who?", context="Ann wrote it.") or qa({"question": ..., "context": ...}).',
            )
        for key in ("question", "context"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise I_BAD_INPUT.error(
                    f"{where}: field {key!r} must be a non-empty string", location=f"{where} field {key!r}"
                )
        return {"question": item["question"], "context": item["context"]}

    def split(self, inputs: Any) -> tuple[bool, list[Any]]:
        if isinstance(inputs, dict):
            return True, [self.check_item(inputs, None)]
        return super().split(inputs)

    def from_record(self, record: Any, where: str) -> Any:
        return record

    def __call__(self, inputs: Any = None, *, question: Any = None, context: Any = None, **params: Any) -> Any:
        if inputs is None:
            if question is None or context is None:
                raise I_BAD_INPUT.error("question-answering needs question= and context= (or a mapping of both)")
            if isinstance(question, list) or isinstance(context, list):
                questions = question if isinstance(question, list) else [question] * len(context)
                contexts = context if isinstance(context, list) else [context] * len(questions)
                inputs = [{"question": q, "context": c} for q, c in zip(questions, contexts, strict=True)]
            else:
                inputs = {"question": question, "context": context}
        top_k = params.get("top_k", self.defaults.top_k)
        result = super().__call__(inputs, **params)
        if top_k == 1:
            return result[0] if isinstance(inputs, dict) else [r[0] for r in result]
        return result

    def to_text(self, output: Any) -> str:
        items = output if isinstance(output, list) else [output]
        return ", ".join(f"{o['answer']} ({o['score']:.4f})" for o in items)
