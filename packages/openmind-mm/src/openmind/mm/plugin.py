"""openmind-mm's plugin: multimodal tasks. Registration only; imports no framework."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import DatasetSpec, TaskSpec


@hookimpl
def openmind_register_tasks(register):
    register(
        TaskSpec(
            name="text2image",
            domain="mm",
            aliases=("text-to-image",),
            description="Generate an image from a prompt.",
            input_schema="str",
            output_schema="PIL.Image",
        )
    )
    register(
        TaskSpec(
            name="image-to-text",
            domain="mm",
            aliases=("image-captioning",),
            description="Describe an image.",
            input_schema="image",
            output_schema="{generated_text}",
        )
    )
    register(
        TaskSpec(
            name="mm-sft",
            domain="mm",
            kind_of="training",
            aliases=("multimodal-sft",),
            description="Supervised fine-tuning on conversations with images/videos/audios.",
        )
    )


@hookimpl
def openmind_register_datasets(register):
    # The format itself (messages + images/videos/audios with placeholders, and its checks) is
    # implemented by openmind-data; the spec lives here because the task is openmind-mm's.
    register(
        DatasetSpec(
            name="multimodal-sft",
            task="mm-sft",
            columns=("messages", "images", "videos", "audios"),
            description="Conversations whose <image>/<video>/<audio> placeholders match the listed media.",
        )
    )
