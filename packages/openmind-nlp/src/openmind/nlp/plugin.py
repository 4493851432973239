"""openmind-nlp's plugin: NLP tasks (inference and training), pipeline wrappers, ``run``/``chat`` verbs.

Registration only: this module imports no framework and no implementation.
"""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import CommandSpec, DefaultModel, PipelineWrapperSpec, TaskSpec
from openmind.nlp import errors  # noqa: F401  (declares the OM-I1xx / OM-M1xx codes for the catalogue)


def om(repo: str, revision: str, framework: str = "pt", backend: str = "transformers") -> DefaultModel:
    """A default model on the Modelers hub, as openMind 1.0's ``native_pipelines.json`` named it."""
    return DefaultModel(f"om::{repo}", revision, framework=framework, backend=backend)


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
        default_models=(
            om("Baichuan/Baichuan2_7b_chat_pt", "86b5fdf"),
            om("MindSpore-Lab/qwen1_5_7b", "07278c4", "ms", "mindformers"),
            om("AI-Research/Qwen2-7B", "6b6e4c9", "ms", "mindnlp"),
        ),
    ),
    TaskSpec(
        name="text2emb",
        capabilities=("embedding",),
        aliases=("sentence-embedding", "embedding"),
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
        default_models=(om("PyTorch-NPU/distilbert_base_uncased_finetuned_sst_2_english", "5a5cb27"),),
    ),
    TaskSpec(
        name="fill-mask",
        aliases=("fill_mask",),
        description="Predict masked tokens.",
        input_schema="str with the mask token",
        output_schema="list[{token_str, score, sequence}]",
        default_models=(om("PyTorch-NPU/bert_base_uncased", "c5e6a69"),),
    ),
    TaskSpec(
        name="token-classification",
        aliases=("ner", "token_classification"),
        description="Label each token (NER).",
        input_schema="str | list[str]",
        output_schema="list[{entity, word, start, end, score}]",
        default_models=(om("PyTorch-NPU/camembert_ner", "1390d33"),),
    ),
    TaskSpec(
        name="summarization",
        capabilities=("generative", "chat"),
        description="Summarise a text (seq2seq models: T5/BART...; chat models: an instruction).",
        input_schema="str",
        output_schema="{summary_text}",
        default_models=(om("PyTorch-NPU/bart_large_cnn", "6a37416"),),
    ),
    TaskSpec(
        name="translation",
        capabilities=("generative", "chat"),
        description="Translate a text (seq2seq models: T5/Marian...; chat models: an instruction).",
        input_schema="str",
        output_schema="{translation_text}",
        default_models=(om("PyTorch-NPU/t5_base", "68829a3"),),
    ),
    TaskSpec(
        name="question-answering",
        aliases=("question_answering", "qa"),
        description="Extract the answer to a question from a context.",
        input_schema="{question, context}",
        output_schema="{score, start, end, answer}",
        default_models=(om("PyTorch-NPU/roberta_base_squad2", "b1c1638"),),
    ),
    TaskSpec(
        name="zero-shot-classification",
        aliases=("zero_shot_classification",),
        description="Score a text against labels given at call time (NLI models).",
        input_schema="str, candidate_labels",
        output_schema="{sequence, labels, scores}",
        default_models=(om("PyTorch-NPU/deberta_v3_large_zeroshot_v2.0", "d38d6f4"),),
    ),
    TaskSpec(
        name="table-question-answering",
        aliases=("table_question_answering",),
        description="Answer a question about a table (TAPAS).",
        input_schema="{table, query}",
        output_schema="{answer, coordinates, cells, aggregator}",
        default_models=(om("PyTorch-NPU/tapas_base_finetuned_wtq", "74f37f3"),),
    ),
    TaskSpec(
        name="text2text-generation",
        aliases=("text2text_generation", "seq2seq"),
        description="Text in, text out with an encoder-decoder model (T5, BART, mT5, Marian).",
        input_schema="str | list[str]",
        output_schema="{generated_text}",
        capabilities=("generative",),
        default_models=(om("PyTorch-NPU/flan_t5_base", "d15ab63"),),
    ),
    TaskSpec(
        name="feature-extraction",
        aliases=("feature_extraction",),
        description="Per-token hidden states of an encoder (1.0 semantics; text2emb pools them).",
        input_schema="str | list[str]",
        output_schema="list[list[list[float]]] (1 x tokens x hidden)",
        default_models=(om("PyTorch-NPU/xlnet_base_cased", "bc7408f"),),
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
    # seq2seq folders get the encoder-decoder wrapper, other models the chat-style one
    "summarization": "openmind.nlp.pipelines.seq2seq:Summarization",
    "translation": "openmind.nlp.pipelines.seq2seq:Translation",
    "text2text-generation": "openmind.nlp.pipelines.seq2seq:Text2TextGenerationPipeline",
    "question-answering": "openmind.nlp.pipelines.question_answering:QuestionAnsweringPipeline",
    "zero-shot-classification": "openmind.nlp.pipelines.zero_shot:ZeroShotClassificationPipeline",
    "table-question-answering": "openmind.nlp.pipelines.table_qa:TableQuestionAnsweringPipeline",
    "feature-extraction": "openmind.nlp.pipelines.feature_extraction:FeatureExtractionPipeline",
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

    archs = config.get("architectures") or []
    if config.get("model_type") == "tapas" and any(a.endswith("ForQuestionAnswering") for a in archs):
        return "table-question-answering"
    if any(a.endswith("ForQuestionAnswering") for a in archs):
        return "question-answering"
    if config.get("is_encoder_decoder") and any(a.endswith("ForConditionalGeneration") for a in archs):
        return "text2text-generation"
    return infer_task(model_dir, config)
