"""openmind-data's plugin: the standard dataset format of each training task and the ``data`` verb.

Registration only. The multimodal-sft format (:mod:`openmind.data.formats`) belongs to task
``mm-sft``, which openmind-mm registers; registering its DatasetSpec here would break the
registry (a spec for an unknown task) whenever openmind-mm is absent or disabled, so openmind-mm
registers it (``DatasetSpec(name="multimodal-sft", task="mm-sft", columns=...)``) and
``load_dataset(args, stage="mm-sft")`` validates it.
"""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import CommandSpec, DatasetFormatSpec, DatasetSpec
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
    for task in ("orpo", "simpo"):
        register(
            DatasetSpec(
                name=f"preference-{task}",
                task=task,
                columns=("messages", "chosen", "rejected"),
                description=f"A prompt conversation with a chosen and a rejected answer ({task}).",
            )
        )
    register(
        DatasetSpec(
            name="unpaired",
            task="kto",
            columns=("messages", "tools", "label"),
            description="A conversation ending with one answer and label (true: desirable; LLaMA-Factory's kto_tag).",
        )
    )
    register(
        DatasetSpec(
            name="prompts",
            task="grpo",
            columns=("messages", "answer"),
            description="A prompt conversation and an optional reference answer for the reward functions.",
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


#: the built-in input formats and the columns that identify them (converted by
#: :class:`openmind.data.converters.Converter`; a plugin's format names its own converter)
BUILTIN_FORMATS = (
    ("alpaca", ("instruction",), "instruction/input/output (+ system, history); LLaMA-Factory's alpaca."),
    ("sharegpt", ("conversations",), "conversations of from/value turns (+ system, tools); LLaMA-Factory's."),
    ("openai", ("messages",), "OpenAI chat messages (role/content/tool_calls) + tools."),
    ("sft", ("messages",), "The standard sft format (same as openai)."),
    ("pretrain", ("text",), "Plain text."),
    ("preference", ("chosen", "rejected"), "A prompt or messages with chosen/rejected answers."),
)


@hookimpl
def openmind_register_dataset_formats(register):
    for name, columns, description in BUILTIN_FORMATS:
        register(DatasetFormatSpec(name=name, produces=name, columns=columns, description=description))
