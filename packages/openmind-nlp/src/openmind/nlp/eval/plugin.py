"""Plugin ``nlp-eval``: the `eval` verb and the evaluation task kinds (registration only)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import CommandSpec, EvalKindSpec
from openmind.nlp.eval import errors  # noqa: F401  (declares the OM-E0xx codes for the catalogue)


@hookimpl
def openmind_register_commands(register):
    register(
        CommandSpec(
            name="eval",
            impl="openmind.nlp.eval.cli:EvalCommand",
            help="Evaluate a model on multiple-choice (MMLU / C-Eval / CMMLU layouts) and generation tasks, "
            "or through lm-eval; results as a table, JSON and Markdown.",
        )
    )


@hookimpl
def openmind_register_eval_kinds(register):
    register(
        EvalKindSpec(
            name="multiple_choice",
            impl="openmind.nlp.eval.runner:run_multiple_choice",
            capability="loglikelihood",
            description="pick the choice letter with the highest log-likelihood (MMLU / C-Eval / CMMLU layouts)",
        )
    )
    register(
        EvalKindSpec(
            name="generation",
            impl="openmind.nlp.eval.runner:run_generation",
            capability="generative",
            description="generate greedily, then score with a metric (exact_match, regex, rouge)",
        )
    )
