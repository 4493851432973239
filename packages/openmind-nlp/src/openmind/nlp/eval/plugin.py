"""Plugin ``nlp-eval``: the `eval` verb (registration only)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import CommandSpec
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
