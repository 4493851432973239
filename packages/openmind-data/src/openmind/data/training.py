"""The data step of training: what every framework's trainer gets through the trainer wrapper's
plan (:class:`openmind.core.training.TrainPlan`), done once here for pt, ms and any plugin backend.

Example::

    prepared = prepare_for_training(plan, tokenizer, template)
    prepared.train, prepared.eval, prepared.stats
"""

from __future__ import annotations

from typing import Any

from openmind.core.training.contract import PreparedData
from openmind.core.training.errors import T_CUTOFF


def prepare_for_training(
    plan: Any,
    tokenizer: Any,
    template: Any,
    *,
    quiet: bool = False,
    stage: str | None = None,
    data_args: Any = None,
    **media: Any,
) -> PreparedData:
    """Tokenised, label-masked (optionally packed) train/eval sets for ``plan`` (its arguments and
    stage; ``stage`` overrides the data format's stage, e.g. a plugin stage trained on sft rows).
    ``data_args`` replaces ``plan.args.data`` (e.g. with the media keys of another group);
    ``media``: ``image_processor`` and ``model_config`` for ``mm-sft`` (see :func:`openmind.data.prepare`).

    Raises OM-T003 when ``cutoff_len`` leaves samples without any trained token (their prompt
    alone reaches it) unless ``truncation`` is ``drop``, and the data engine's OM-D0xx codes.
    """
    from openmind.core.errors import OpenMindError
    from openmind.data import prepare
    from openmind.data.errors import D_EMPTY

    args, stage = plan.args, stage or plan.stage
    data_args = data_args if data_args is not None else args.data
    try:
        prepared = prepare(
            data_args,
            tokenizer,
            template if stage != "pt" else None,
            stage=stage,
            seed=args.training.seed,
            quiet=quiet,
            **media,
        )
    except OpenMindError as exc:
        if (
            exc.code == D_EMPTY.code
            and data_args.truncation in ("right", "left")
            and "dropped (too long) 0" not in exc.message
        ):
            raise T_CUTOFF.error(
                f"cutoff_len={data_args.cutoff_len} leaves no sample with a trained token: every prompt is at least "
                f"that long ({exc.message})",
                location="cutoff_len",
            ) from exc
        raise
    stats = dict(prepared.stats)
    dropped = int(stats.get("dropped", 0) or 0)
    if dropped and data_args.truncation in ("right", "left") and stage != "pt":
        raise T_CUTOFF.error(
            f"cutoff_len={data_args.cutoff_len} cuts away every trained token of {dropped} sample(s) "
            f"(their prompt is at least {data_args.cutoff_len} tokens long)",
            location="cutoff_len",
        )
    return PreparedData(prepared.train, prepared.eval, stats)
