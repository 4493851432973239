"""The test plugin's dataset format and training stage, built only on public contracts.

* ``poems`` (a :class:`~openmind.core.specs.DatasetFormatSpec`): rows ``{"topic", "poem"}``;
  :func:`poem_to_messages` turns one into an OpenAI-style conversation, which openmind-data then
  checks and stores as an sft row (``openmind data validate`` and training use it).
* ``poem-sft`` (a training task): :class:`PoemSFTWrapper` is a
  :class:`~openmind.core.training.TrainerWrapper` whose plan checks the template and prepares the
  rows as sft data; the PyTorch trainer is openmind-pt's SFT trainer, reused through the
  :class:`~openmind.core.training.FrameworkTrainer` contract (its TrainerSpec names it).
"""

from __future__ import annotations

from typing import Any

from openmind.core.training import PreparedData, TrainerWrapper, TrainPlan


def poem_to_messages(row: dict[str, Any]) -> dict[str, Any]:
    topic, poem = row.get("topic"), row.get("poem")
    if not isinstance(topic, str) or not topic.strip():
        raise ValueError("topic: must be a non-empty string")
    if not isinstance(poem, str) or not poem.strip():
        raise ValueError("poem: must be a non-empty string")
    return {
        "messages": [
            {"role": "user", "content": f"Write a poem about {topic}."},
            {"role": "assistant", "content": poem},
        ]
    }


class PoemSFTWrapper(TrainerWrapper):
    """Fine-tune a poet: sft on ``poems`` rows."""

    stage = "poem-sft"

    def template_check(self, template: Any, tokenizer: Any) -> None:
        from openmind.nlp.training.base import check_template

        check_template(template, tokenizer)

    def data_step(self, plan: TrainPlan, tokenizer: Any, template: Any, *, quiet: bool = False) -> PreparedData:
        from openmind.data.training import prepare_for_training

        return prepare_for_training(plan, tokenizer, template, quiet=quiet, stage="sft")
