"""The native evaluator: few-shot prompts, log-likelihood multiple choice, scored generations.

It talks to the model through :class:`EvalModel` (two methods), implemented over the task
pipelines by :class:`openmind.nlp.eval.model.PipelineEvalModel`, so PyTorch and MindSpore
pipelines are evaluated by the same code. Prompts follow lm-eval's MMLU / C-Eval / CMMLU tasks
(description, ``Question\\nA. ...\\nAnswer:``, continuation ``" A"``), so numbers are comparable.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

from openmind.nlp.eval.errors import E_NO_ITEMS
from openmind.nlp.eval.scorers import exact_match, pick_choice, regex_match, rouge
from openmind.nlp.eval.tasks import LETTERS, EvalTask, GenItem, MCItem, Subject

TARGET_DELIMITER = " "
FEWSHOT_DELIMITER = "\n\n"


class EvalModel(Protocol):
    name: str

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[tuple[float, bool]]:
        """``(sum log p(continuation | context), is_greedy)`` per pair."""
        ...

    def generate(self, prompts: Sequence[str | list[dict]], *, max_tokens: int, stop: Sequence[str]) -> list[str]:
        """Greedy generations (a list of messages is rendered with the chat template)."""
        ...


# ---- prompts ---------------------------------------------------------------------------------


def description(task: EvalTask, subject: str) -> str:
    pretty = subject.replace("_", " ")
    if task.layout == "ceval":
        return f"以下是中国关于{pretty}的单项选择题，请选出其中的正确答案。\n\n"
    if task.layout == "cmmlu" or task.language == "zh":
        return f"以下是关于{pretty}的单项选择题，请直接给出正确答案的选项。\n\n"
    if task.layout == "mmlu":
        return f"The following are multiple choice questions (with answers) about {pretty}.\n\n"
    return ""


def question_text(task: EvalTask, item: MCItem) -> str:
    options = "".join(f"\n{LETTERS[i]}. {choice}" for i, choice in enumerate(item.choices))
    answer = "\n答案：" if task.language == "zh" else "\nAnswer:"
    return f"{item.question.strip()}{options}{answer}"


def mc_context(task: EvalTask, subject: Subject, item: MCItem, n_shot: int) -> str:
    shots = [s for s in subject.shots if s is not item][: max(0, n_shot)]
    parts = [question_text(task, s) + TARGET_DELIMITER + LETTERS[s.answer] for s in shots]
    return description(task, subject.name) + FEWSHOT_DELIMITER.join([*parts, question_text(task, item)])


def gen_prompt(subject: Subject, item: GenItem, n_shot: int) -> str:
    shots = [s for s in subject.shots if s is not item][: max(0, n_shot)]
    parts = [f"{s.input}\n{s.targets[0]}" for s in shots]
    return FEWSHOT_DELIMITER.join([*parts, item.input]) + ("\n" if shots else "")


# ---- evaluation ------------------------------------------------------------------------------


def _progress(total: int, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="item", disable=not enabled, leave=False)


def evaluate(
    model: EvalModel,
    tasks: Sequence[EvalTask],
    *,
    n_shot: int = 5,
    limit: int | None = None,
    batch_size: int = 8,
    progress: bool = True,
) -> dict[str, Any]:
    """Run ``tasks`` on ``model``; returns the results mapping written by :mod:`report`."""
    started = time.perf_counter()
    out: dict[str, Any] = {"model": model.name, "n_shot": n_shot, "limit": limit, "tasks": {}, "samples": {}}
    for task in tasks:
        if task.size == 0:
            raise E_NO_ITEMS.error(f"task {task.name!r} has no items", location=task.source)
        result, samples = kind_runner(task.type)(model, task, n_shot, limit, batch_size, progress)
        out["tasks"][task.name] = result
        out["samples"][task.name] = samples
    out["seconds"] = round(time.perf_counter() - started, 2)
    return out


def _run_mc(model, task: EvalTask, n_shot, limit, batch_size, progress):
    subjects: dict[str, Any] = {}
    samples = []
    total = sum(min(len(s.items), limit) if limit else len(s.items) for s in task.subjects)
    with _progress(total, task.name, progress) as bar:
        for subject in task.subjects:
            items = subject.items[:limit] if limit else subject.items
            correct = 0
            for start in range(0, len(items), max(1, batch_size)):
                chunk = items[start : start + max(1, batch_size)]
                requests = []
                for item in chunk:
                    context = mc_context(task, subject, item, n_shot)
                    requests += [(context, TARGET_DELIMITER + LETTERS[i]) for i in range(len(item.choices))]
                scores = model.loglikelihood(requests)
                at = 0
                for item in chunk:
                    lls = [float(s[0]) for s in scores[at : at + len(item.choices)]]
                    at += len(item.choices)
                    pred = pick_choice(lls)
                    correct += pred == item.answer
                    samples.append(
                        {
                            "subject": subject.name,
                            "where": item.where,
                            "answer": LETTERS[item.answer],
                            "prediction": LETTERS[pred],
                            "loglikelihoods": lls,
                        }
                    )
                bar.update(len(chunk))
            subjects[subject.name] = {
                "score": correct / len(items) if items else 0.0,
                "n": len(items),
                "correct": correct,
            }
    n = sum(s["n"] for s in subjects.values())
    right = sum(s["correct"] for s in subjects.values())
    return {
        "type": task.type,
        "layout": task.layout,
        "metric": "acc",
        "score": right / n if n else 0.0,
        "macro": sum(s["score"] for s in subjects.values()) / len(subjects) if subjects else 0.0,
        "n": n,
        "subjects": subjects,
    }, samples


def _run_gen(model, task: EvalTask, n_shot, limit, batch_size, progress):
    subjects: dict[str, Any] = {}
    samples = []
    extra_totals: dict[str, float] = {}
    total = sum(min(len(s.items), limit) if limit else len(s.items) for s in task.subjects)
    with _progress(total, task.name, progress) as bar:
        for subject in task.subjects:
            items = subject.items[:limit] if limit else subject.items
            score_sum = 0.0
            for start in range(0, len(items), max(1, batch_size)):
                chunk = items[start : start + max(1, batch_size)]
                prompts: list[Any] = []
                for item in chunk:
                    text = gen_prompt(subject, item, n_shot)
                    prompts.append([{"role": "user", "content": text}] if task.chat else text)
                outputs = model.generate(prompts, max_tokens=task.max_tokens, stop=task.stop)
                for item, prediction in zip(chunk, outputs):
                    extra: dict[str, float] = {}
                    if task.metric == "exact_match":
                        score = exact_match(prediction, item.targets)
                    elif task.metric == "regex":
                        score = regex_match(prediction, item.targets, task.regex or "")
                    else:
                        extra = rouge(prediction, item.targets)
                        score = extra["rougeL"]
                    for k, v in extra.items():
                        extra_totals[k] = extra_totals.get(k, 0.0) + v
                    score_sum += score
                    samples.append(
                        {
                            "subject": subject.name,
                            "where": item.where,
                            "targets": item.targets,
                            "prediction": prediction,
                            "score": score,
                        }
                    )
                bar.update(len(chunk))
            subjects[subject.name] = {"score": score_sum / len(items) if items else 0.0, "n": len(items)}
    n = sum(s["n"] for s in subjects.values())
    result = {
        "type": task.type,
        "layout": task.layout,
        "metric": "rougeL" if task.metric == "rouge" else task.metric,
        "score": sum(s["score"] * s["n"] for s in subjects.values()) / n if n else 0.0,
        "macro": sum(s["score"] for s in subjects.values()) / len(subjects) if subjects else 0.0,
        "n": n,
        "subjects": subjects,
    }
    if extra_totals:
        result["rouge"] = {k: v / n for k, v in extra_totals.items()}
    return result, samples


def kind_runner(kind: str):
    """The scorer of an evaluation task kind, from the registry
    (:class:`~openmind.core.specs.EvalKindSpec`, hook ``openmind_register_eval_kinds``)."""
    from openmind.core.plugins import attributed, get_registry
    from openmind.core.specs import EvalKindSpec

    spec = get_registry().get(EvalKindSpec, kind)
    with attributed(spec.component):
        return spec.load()


#: the built-in kinds' scorers, as registered by :mod:`openmind.nlp.eval.plugin`:
#: ``runner(model, task, n_shot, limit, batch_size, progress) -> (result, samples)``
run_multiple_choice = _run_mc
run_generation = _run_gen
