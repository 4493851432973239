"""openmind-data's plugin: the standard dataset format of each training task. Registration only."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import DatasetSpec


@hookimpl
def openmind_register_datasets(register):
    register(
        DatasetSpec(name="pretrain", task="pt", columns=("text",), description="Plain text for continued pre-training.")
    )
    register(
        DatasetSpec(
            name="sft",
            task="sft",
            columns=("messages", "tools"),
            description="Conversations: messages with roles system/user/assistant/tool, optional tools.",
        )
    )
    register(
        DatasetSpec(
            name="preference",
            task="dpo",
            columns=("messages", "chosen", "rejected"),
            description="A prompt conversation with a chosen and a rejected answer.",
        )
    )
    register(
        DatasetSpec(
            name="pairwise",
            task="rm",
            columns=("messages", "chosen", "rejected"),
            description="Chosen/rejected pairs for reward-model training.",
        )
    )
