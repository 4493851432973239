"""``openmind eval``: evaluate a model on local or lm-eval tasks."""

from __future__ import annotations

import argparse
import os
import sys

from openmind.core.cli.command import Command

EPILOG = """examples:
  openmind eval --model ./my-model --tasks ./mmlu --n-shot 5 --limit 20
  openmind eval --model saves/sft-run --tasks ./ceval,./cmmlu --n-shot 0
  openmind eval --model ./my-model --tasks gsm8k_mini.yaml            # generation task: exact_match | regex | rouge
  openmind eval --model ./my-model --tasks mmlu_abstract_algebra --eval-backend lm-eval

Task folders follow the MMLU ({dev,val,test}/SUBJECT_{split}.csv), C-Eval (headers id,question,A..D,answer)
or CMMLU ({dev,test}/SUBJECT.csv) layouts; JSON/JSONL/CSV files and task YAMLs work too.
Results: a table on screen, results.json, results.md and samples_<task>.jsonl in --eval-output-dir."""


class EvalCommand(Command):
    groups = ("model", "template", "eval")
    takes_config = True
    description = (
        "Evaluate a model: multiple choice by log-likelihood (MMLU / C-Eval / CMMLU layouts, few-shot, per-subject "
        "and overall accuracy), generation tasks scored by exact match, regex or ROUGE, or lm-eval tasks "
        "(--eval-backend lm-eval). Runs on the PyTorch and MindSpore pipelines alike."
    )
    epilog = EPILOG

    def run(self, args: argparse.Namespace) -> int:
        from openmind.core.errors import A_MISSING
        from openmind.nlp.eval import report
        from openmind.nlp.serve.cli import resolve_run_folder

        ns = self.resolve(args)
        if not ns.model.model:
            raise A_MISSING.error("eval needs --model (a model folder, hub id or run folder)", location="--model")
        if not ns.eval.tasks:
            raise A_MISSING.error("eval needs --tasks (folders, files or lm-eval task names)", location="--tasks")
        if ns.eval.eval_backend == "native":  # load the tasks first: a bad file fails before the model loads
            from openmind.nlp.eval.tasks import load_task

            tasks = [load_task(t, ns.eval.task_dir) for t in ns.eval.tasks]
        else:
            from openmind.nlp.eval.harness import _lm_eval

            _lm_eval()
        resolve_run_folder(ns, args)
        from openmind.nlp.eval.model import load_model

        model = load_model(ns)
        if ns.eval.eval_backend == "native":
            from openmind.nlp.eval.runner import evaluate

            results = evaluate(
                model, tasks, n_shot=ns.eval.n_shot, limit=ns.eval.limit, batch_size=ns.eval.eval_batch_size
            )
        else:
            from openmind.nlp.eval.harness import evaluate_with_lm_eval

            results = evaluate_with_lm_eval(
                model, ns.eval.tasks, n_shot=ns.eval.n_shot, limit=ns.eval.limit, task_dir=ns.eval.task_dir
            )
        results["framework"] = model.framework
        out_dir = ns.eval.eval_output_dir or os.path.join("eval_results", model.name)
        paths = report.write(results, out_dir)
        print(report.table(results))
        print(f"\nwrote {paths['json']} and {paths['markdown']}", file=sys.stderr)
        return 0
