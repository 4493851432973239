"""openmind-nlp's plugin: NLP tasks (inference and training), pipeline wrappers, ``run``/``chat`` verbs.

Registration only: this module imports no framework and no implementation.
"""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import CommandSpec, PipelineWrapperSpec, TaskSpec
from openmind.nlp import errors  # noqa: F401  (declares the OM-I1xx / OM-M1xx codes for the catalogue)

#: ``capabilities`` (see :class:`~openmind.core.specs.TaskSpec`): ``generative`` tasks take the
#: generation arguments, ``chat`` tasks render messages through a template (template arguments),
#: ``embedding`` tasks are served on ``/v1/embeddings``. CLI verbs and the server read these
#: instead of keeping task lists of their own.
INFERENCE_TASKS = (
    TaskSpec(
        name="chat",
        capabilities=("generative", "chat"),
        aliases=("chat-completion", "conversational"),
        description="Messages in, assistant message out (system prompt, history, streaming).",
        input_schema="list[{role, content}] | str",
        output_schema="{role: assistant, content}",
    ),
    TaskSpec(
        name="text-generation",
        capabilities=("generative",),
        aliases=("text_generation", "causal-lm"),
        description="Continue a text prompt.",
        input_schema="str | list[str]",
        output_schema="{generated_text}",
    ),
    TaskSpec(
        name="text2emb",
        capabilities=("embedding",),
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
        capabilities=("generative", "chat"),
        description="Summarise a text (a chat-style instruction task on chat models).",
        input_schema="str",
        output_schema="{summary_text}",
    ),
    TaskSpec(
        name="translation",
        capabilities=("generative", "chat"),
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
    TaskSpec(name="kto", kind_of="training", description="KTO on single answers marked desirable or undesirable."),
    TaskSpec(name="orpo", kind_of="training", description="ORPO (odds-ratio preference, no reference model)."),
    TaskSpec(name="simpo", kind_of="training", description="SimPO (length-normalised, reference-free preference)."),
    TaskSpec(name="grpo", kind_of="training", description="GRPO: online RL on prompts with reward functions."),
)


@hookimpl
def openmind_register_tasks(register):
    for task in INFERENCE_TASKS + TRAINING_TASKS:
        register(task)


#: task -> "module:attr" of its framework-neutral wrapper (openmind.nlp.pipelines)
WRAPPERS = {
    "chat": "openmind.nlp.pipelines.chat:ChatPipeline",
    "text-generation": "openmind.nlp.pipelines.text_generation:TextGenerationPipeline",
    "text2emb": "openmind.nlp.pipelines.text2emb:Text2EmbPipeline",
    "text-classification": "openmind.nlp.pipelines.text_classification:TextClassificationPipeline",
    "fill-mask": "openmind.nlp.pipelines.fill_mask:FillMaskPipeline",
    "token-classification": "openmind.nlp.pipelines.token_classification:TokenClassificationPipeline",
    "summarization": "openmind.nlp.pipelines.summarization:SummarizationPipeline",
    "translation": "openmind.nlp.pipelines.translation:TranslationPipeline",
}


@hookimpl
def openmind_register_pipeline_wrappers(register):
    for task, impl in WRAPPERS.items():
        register(PipelineWrapperSpec(task=task, impl=impl, description=f"framework-neutral {task} wrapper"))


@hookimpl
def openmind_register_commands(register):
    register(
        CommandSpec(
            name="run",
            impl="openmind.nlp.cli.run:RunCommand",
            help="Run a task pipeline once or over a file: openmind run TASK|MODEL --model PATH --input TEXT|FILE.",
        )
    )
    register(
        CommandSpec(
            name="chat",
            impl="openmind.nlp.cli.chat:ChatCommand",
            help="Chat with a model in the terminal (streaming; /clear, /system TEXT, /exit).",
        )
    )


@hookimpl
def openmind_infer_task(model_dir, config):
    """Causal LMs -> chat (with a chat template) or text-generation; *ForSequenceClassification ->
    text-classification; *ForTokenClassification -> token-classification; *ForMaskedLM -> fill-mask;
    sentence-transformers folders and bare encoders -> text2emb."""
    from openmind.nlp.pipelines.model import infer_task

    return infer_task(model_dir, config)
