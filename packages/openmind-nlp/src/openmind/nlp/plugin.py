"""openmind-nlp's plugin: NLP tasks (inference and training), wrappers, model groups, templates.

Registration only: this module imports no framework and no implementation.
"""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import TaskSpec

INFERENCE_TASKS = (
    TaskSpec(
        name="chat",
        aliases=("chat-completion", "conversational"),
        description="Messages in, assistant message out (system prompt, history, streaming).",
        input_schema="list[{role, content}] | str",
        output_schema="{role: assistant, content}",
    ),
    TaskSpec(
        name="text-generation",
        aliases=("text_generation", "causal-lm"),
        description="Continue a text prompt.",
        input_schema="str | list[str]",
        output_schema="{generated_text}",
    ),
    TaskSpec(
        name="text2emb",
        aliases=("feature-extraction", "sentence-embedding", "embedding"),
        description="Sentence embeddings with pooling and normalisation.",
        input_schema="str | list[str]",
        output_schema="list[float]",
    ),
    TaskSpec(
        name="text-classification",
        aliases=("sentiment-analysis", "text_classification"),
        description="Label a text.",
        input_schema="str | list[str]",
        output_schema="{label, score}",
    ),
    TaskSpec(
        name="fill-mask",
        aliases=("fill_mask",),
        description="Predict masked tokens.",
        input_schema="str with the mask token",
        output_schema="list[{token_str, score, sequence}]",
    ),
    TaskSpec(
        name="token-classification",
        aliases=("ner", "token_classification"),
        description="Label each token (NER).",
        input_schema="str | list[str]",
        output_schema="list[{entity, word, start, end, score}]",
    ),
    TaskSpec(
        name="summarization",
        description="Summarise a text (a chat-style instruction task on chat models).",
        input_schema="str",
        output_schema="{summary_text}",
    ),
    TaskSpec(
        name="translation",
        description="Translate a text (a chat-style instruction task on chat models).",
        input_schema="str",
        output_schema="{translation_text}",
    ),
)

TRAINING_TASKS = (
    TaskSpec(name="pt", kind_of="training", aliases=("pretrain",), description="Continued pre-training on plain text."),
    TaskSpec(
        name="sft",
        kind_of="training",
        aliases=("supervised-finetuning",),
        description="Supervised fine-tuning on conversations.",
    ),
    TaskSpec(name="dpo", kind_of="training", description="Direct preference optimisation on chosen/rejected pairs."),
    TaskSpec(
        name="rm",
        kind_of="training",
        aliases=("reward-model",),
        description="Reward-model training on chosen/rejected pairs.",
    ),
)


@hookimpl
def openmind_register_tasks(register):
    for task in INFERENCE_TASKS + TRAINING_TASKS:
        register(task)
