"""``--eval-backend lm-eval``: EleutherAI's lm-evaluation-harness running on the openmind pipelines.

The harness drives its own tasks (its registry, or YAML tasks under ``--task-dir``) and calls an
``lm_eval.api.model.LM`` implemented here over :class:`~openmind.nlp.eval.model.PipelineEvalModel`,
so any pipeline (PyTorch or MindSpore) is evaluated the way lm-eval evaluates Hugging Face models.
"""

from __future__ import annotations

from typing import Any

from openmind.nlp.eval.errors import E_LM_EVAL_MISSING, E_UNKNOWN_TASK


def _lm_eval():
    try:
        import lm_eval
        from lm_eval.api.model import LM
    except ImportError as exc:
        raise E_LM_EVAL_MISSING.error(f"--eval-backend lm-eval needs the 'lm-eval' package ({exc})") from None
    return lm_eval, LM


def make_lm(model: Any):
    """An lm-eval ``LM`` answering from ``model`` (an :class:`EvalModel`)."""
    _, LM = _lm_eval()

    class OpenMindLM(LM):
        def loglikelihood(self, requests, disable_tqdm: bool = False):
            return [tuple(r) for r in model.loglikelihood([tuple(req.args) for req in requests])]

        def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
            return [model.prompt_logprob_sum(req.args[0]) for req in requests]

        def generate_until(self, requests, disable_tqdm: bool = False):
            out = []
            for req in requests:
                context, kwargs = req.args
                until = kwargs.get("until") or []
                until = [until] if isinstance(until, str) else list(until)
                max_tokens = int(kwargs.get("max_gen_toks", 256))
                out += model.generate([context], max_tokens=max_tokens, stop=until)
            return out

    return OpenMindLM()


def evaluate_with_lm_eval(
    model: Any,
    tasks: list[str],
    *,
    n_shot: int | None,
    limit: int | None,
    task_dir: str | None = None,
) -> dict[str, Any]:
    """Run lm-eval tasks on ``model``; results in the same shape as the native evaluator's."""
    lm_eval, _ = _lm_eval()
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=task_dir) if task_dir else TaskManager()
    unknown = [t for t in tasks if t not in manager.all_tasks]
    if unknown:
        raise E_UNKNOWN_TASK.error(
            f"lm-eval knows no task {', '.join(map(repr, unknown))}"
            + (f" (searched its registry and {task_dir!r})" if task_dir else " (pass --task-dir for local YAML tasks)")
        )
    raw = lm_eval.simple_evaluate(
        model=make_lm(model), tasks=tasks, num_fewshot=n_shot, limit=limit, task_manager=manager, log_samples=True
    )
    return convert(raw, model.name, n_shot, limit)


def convert(raw: dict[str, Any], name: str, n_shot: int | None, limit: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": name,
        "n_shot": n_shot,
        "limit": limit,
        "backend": "lm-eval",
        "tasks": {},
        "samples": {},
    }
    for task, metrics in raw["results"].items():
        values = {
            k.split(",")[0]: v for k, v in metrics.items() if "," in k and not k.split(",")[0].endswith("_stderr")
        }
        values = {k: v for k, v in values.items() if isinstance(v, (int, float))}
        metric = "acc" if "acc" in values else next(iter(values), "score")
        n = raw.get("n-samples", {}).get(task, {}).get("effective", 0)
        out["tasks"][task] = {
            "type": "lm-eval",
            "layout": "lm-eval",
            "metric": metric,
            "score": float(values.get(metric, 0.0)),
            "n": n,
            "metrics": values,
            "subjects": {},
        }
        samples = []
        for s in (raw.get("samples") or {}).get(task, []):
            resps = s.get("filtered_resps") or s.get("resps")
            samples.append({"doc_id": s.get("doc_id"), "target": s.get("target"), "resps": resps})
        out["samples"][task] = samples
    return out
