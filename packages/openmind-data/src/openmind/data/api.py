"""Entry points used by the trainers and the CLI."""

from __future__ import annotations

from typing import Any

from openmind.data.loading import announce, load


def load_dataset(data_args: Any, *, stage: str = "sft", quiet: bool = False):
    """The rows of ``data_args.dataset`` in the standard format of ``stage``, every row checked.

    :param data_args: :class:`openmind.core.args.DataArguments` (``dataset``, ``dataset_dir``,
        ``formatting``, ``max_samples``, ``on_error``, ``preprocessing_num_workers`` ...).
    :param stage: ``pt`` (rows with ``text``), ``sft`` (``messages``, ``tools``), ``dpo`` /
        ``rm`` (``messages`` prompt + ``chosen``/``rejected``) or ``mm-sft`` (+ media lists).
    :returns: a ``datasets.Dataset`` (with provenance columns ``_file``/``_row``). Bad rows
        raise OM-D001/OM-D002 with file, line and field (``on_error="fail"``) or are counted
        and written to a side file (``on_error="skip"``); the totals are printed.
    """
    loaded = load(data_args, stage=stage)
    if not quiet:
        announce(loaded.report, "loaded data")
    return loaded.dataset


def resolve_template(name: str | None = None, *, model_dir: str | None = None, tokenizer: Any = None):
    """The template to prepare data with: openmind-nlp's ``resolve_template`` when it exists,
    else the tokenizer's own chat template (:class:`~openmind.nlp.templates.JinjaTemplate`)."""
    try:
        from openmind.nlp.templates import resolve_template as nlp_resolve
    except ImportError:
        nlp_resolve = None
    if nlp_resolve is not None:
        return nlp_resolve(name, model_dir=model_dir, tokenizer=tokenizer)
    from openmind.nlp.templates import JinjaTemplate

    if name not in (None, "", "jinja", "auto"):
        from openmind.nlp.templates.base import TP_NO_TEMPLATE

        raise TP_NO_TEMPLATE.error(f"template {name!r} is not available (native templates are not installed)")
    return JinjaTemplate.from_tokenizer(tokenizer)
