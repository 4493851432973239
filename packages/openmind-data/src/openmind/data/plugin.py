"""openmind-data's plugin: the standard dataset format of each training task and the ``data`` verb.

Registration only. The multimodal-sft format (:mod:`openmind.data.formats`) belongs to task
``mm-sft``, which openmind-mm registers; registering its DatasetSpec here would break the
registry (a spec for an unknown task) whenever openmind-mm is absent or disabled, so openmind-mm
registers it (``DatasetSpec(name="multimodal-sft", task="mm-sft", columns=...)``) and
``load_dataset(args, stage="mm-sft")`` validates it.
"""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import CommandSpec, DatasetSpec
from openmind.data import errors  # noqa: F401  (declares the OM-D0xx codes for the catalogue)


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


@hookimpl
def openmind_register_commands(register):
    register(
        CommandSpec(
            name="data",
            impl="openmind.data.cli:DataCommand",
            help="validate, convert, prepare (tokenise + cache) and preview training data",
        )
    )
