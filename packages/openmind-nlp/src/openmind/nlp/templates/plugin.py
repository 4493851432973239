"""Plugin ``nlp-templates``: model groups and their templates (registration only).

Imports nothing heavy: templates are named by ``"module:attr"`` and loaded on use.
"""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import ModelGroupSpec, TemplateSpec

CHAT_TASKS = ("chat", "text-generation", "summarization", "translation")
EMBEDDING_TASKS = ("text2emb",)
ATTENTION_MLP = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
M = "openmind.nlp.templates"

TEMPLATES = (
    TemplateSpec(
        name="llama2",
        impl=f"{M}.llama:Llama2Template",
        stop_words=("</s>",),
        description="Llama-2-chat: [INST] <<SYS>> ... [/INST] answer </s>",
    ),
    TemplateSpec(
        name="llama3",
        impl=f"{M}.llama:Llama3Template",
        stop_words=("<|eot_id|>", "<|end_of_text|>"),
        description="Llama-3-Instruct header/eot format",
    ),
    TemplateSpec(
        name="qwen2",
        impl=f"{M}.chatml:Qwen2Template",
        stop_words=("<|im_end|>", "<|endoftext|>"),
        description="Qwen2-Instruct ChatML, default system prompt",
    ),
    TemplateSpec(
        name="qwen2.5",
        impl=f"{M}.chatml:Qwen25Template",
        stop_words=("<|im_end|>", "<|endoftext|>"),
        description="Qwen2.5-Instruct ChatML with tools",
    ),
    TemplateSpec(
        name="qwen3",
        impl=f"{M}.chatml:Qwen3Template",
        stop_words=("<|im_end|>", "<|endoftext|>"),
        description="Qwen3 ChatML with tools and thinking (enable_thinking)",
    ),
    TemplateSpec(
        name="mistral",
        impl=f"{M}.mistral:MistralTemplate",
        stop_words=("</s>",),
        description="Mistral-Instruct v0.1/v0.2, Mixtral-Instruct: [INST] ... [/INST]answer</s>",
    ),
    TemplateSpec(
        name="glm4",
        impl=f"{M}.glm:GLM4Template",
        stop_words=("<|user|>", "<|observation|>", "<|endoftext|>"),
        description="GLM-4-chat: [gMASK]<sop><|role|>metadata\\ncontent, function tools",
    ),
    TemplateSpec(
        name="gemma2",
        impl=f"{M}.gemma:Gemma2Template",
        stop_words=("<end_of_turn>", "<eos>"),
        description="Gemma-2-it turns (no system role)",
    ),
    TemplateSpec(
        name="internlm2",
        impl=f"{M}.chatml:InternLM2Template",
        stop_words=("<|im_end|>", "</s>"),
        description="InternLM2/2.5-chat: <s> + ChatML",
    ),
    TemplateSpec(
        name="baichuan2",
        impl=f"{M}.baichuan:Baichuan2Template",
        stop_words=("</s>",),
        description="Baichuan2-Chat: <reserved_106>user<reserved_107>answer (no official chat_template)",
    ),
    TemplateSpec(
        name="deepseek",
        impl=f"{M}.deepseek:DeepSeekTemplate",
        stop_words=("<｜end▁of▁sentence｜>",),
        description="DeepSeek LLM chat: User: ...\\n\\nAssistant: ...",
    ),
    TemplateSpec(
        name="phi3",
        impl=f"{M}.phi:Phi3Template",
        stop_words=("<|end|>", "<|endoftext|>"),
        description="Phi-3/3.5-instruct <|user|>/<|assistant|>/<|end|>",
    ),
    TemplateSpec(
        name="yi",
        impl=f"{M}.chatml:YiTemplate",
        stop_words=("<|im_end|>", "<|endoftext|>"),
        description="Yi-Chat ChatML (no official chat_template stored; documented format)",
    ),
)


def _hubs(huggingface: tuple[str, ...], modelscope: tuple[str, ...] = (), modelers: tuple[str, ...] = ()) -> dict:
    hubs = {"huggingface": huggingface, "modelscope": modelscope, "modelers": modelers}
    return {hub: ids for hub, ids in hubs.items() if ids}


GROUPS = (
    ModelGroupSpec(
        name="llama2",
        template="llama2",
        tasks=CHAT_TASKS,
        architectures=("LlamaForCausalLM",),
        model_types=("llama",),
        hub_ids=_hubs(
            ("meta-llama/Llama-2-7b-chat-hf", "meta-llama/Llama-2-13b-chat-hf", "meta-llama/Llama-2-70b-chat-hf"),
            ("modelscope/Llama-2-7b-chat-ms",),
        ),
        sizes=("7B", "13B", "70B"),
        lora_targets=ATTENTION_MLP,
        description="Meta Llama 2 (chat)",
    ),
    ModelGroupSpec(
        name="llama3",
        template="llama3",
        tasks=CHAT_TASKS,
        architectures=("LlamaForCausalLM",),
        model_types=("llama",),
        hub_ids=_hubs(
            ("meta-llama/Meta-Llama-3-8B-Instruct", "meta-llama/Meta-Llama-3-70B-Instruct"),
            ("LLM-Research/Meta-Llama-3-8B-Instruct",),
        ),
        sizes=("8B", "70B"),
        lora_targets=ATTENTION_MLP,
        description="Meta Llama 3 (instruct)",
    ),
    ModelGroupSpec(
        name="qwen2",
        template="qwen2",
        tasks=CHAT_TASKS,
        architectures=("Qwen2ForCausalLM",),
        model_types=("qwen2",),
        hub_ids=_hubs(
            (
                "Qwen/Qwen2-0.5B-Instruct",
                "Qwen/Qwen2-1.5B-Instruct",
                "Qwen/Qwen2-7B-Instruct",
                "Qwen/Qwen2-72B-Instruct",
            ),
            ("qwen/Qwen2-7B-Instruct",),
        ),
        sizes=("0.5B", "1.5B", "7B", "72B"),
        lora_targets=ATTENTION_MLP,
        description="Qwen2 (instruct)",
    ),
    ModelGroupSpec(
        name="qwen2.5",
        template="qwen2.5",
        tasks=CHAT_TASKS,
        architectures=("Qwen2ForCausalLM",),
        model_types=("qwen2",),
        hub_ids=_hubs(
            (
                "Qwen/Qwen2.5-0.5B-Instruct",
                "Qwen/Qwen2.5-1.5B-Instruct",
                "Qwen/Qwen2.5-3B-Instruct",
                "Qwen/Qwen2.5-7B-Instruct",
                "Qwen/Qwen2.5-14B-Instruct",
                "Qwen/Qwen2.5-32B-Instruct",
                "Qwen/Qwen2.5-72B-Instruct",
            ),
            ("Qwen/Qwen2.5-7B-Instruct",),
        ),
        sizes=("0.5B", "1.5B", "3B", "7B", "14B", "32B", "72B"),
        lora_targets=ATTENTION_MLP,
        description="Qwen2.5 (instruct)",
    ),
    ModelGroupSpec(
        name="qwen3",
        template="qwen3",
        tasks=CHAT_TASKS,
        architectures=("Qwen3ForCausalLM",),
        model_types=("qwen3",),
        hub_ids=_hubs(
            (
                "Qwen/Qwen3-0.6B",
                "Qwen/Qwen3-1.7B",
                "Qwen/Qwen3-4B",
                "Qwen/Qwen3-8B",
                "Qwen/Qwen3-14B",
                "Qwen/Qwen3-32B",
            ),
            ("Qwen/Qwen3-8B",),
        ),
        sizes=("0.6B", "1.7B", "4B", "8B", "14B", "32B"),
        lora_targets=ATTENTION_MLP,
        description="Qwen3 (hybrid thinking)",
    ),
    ModelGroupSpec(
        name="mistral",
        template="mistral",
        tasks=CHAT_TASKS,
        architectures=("MistralForCausalLM", "MixtralForCausalLM"),
        model_types=("mistral", "mixtral"),
        hub_ids=_hubs(
            (
                "mistralai/Mistral-7B-Instruct-v0.1",
                "mistralai/Mistral-7B-Instruct-v0.2",
                "mistralai/Mixtral-8x7B-Instruct-v0.1",
            ),
            ("AI-ModelScope/Mistral-7B-Instruct-v0.2",),
        ),
        sizes=("7B", "8x7B"),
        lora_targets=ATTENTION_MLP,
        description="Mistral / Mixtral instruct (v0.1, v0.2)",
    ),
    ModelGroupSpec(
        name="glm4",
        template="glm4",
        tasks=CHAT_TASKS,
        architectures=("ChatGLMModel", "ChatGLMForConditionalGeneration"),
        model_types=("chatglm",),
        hub_ids=_hubs(("THUDM/glm-4-9b-chat",), ("ZhipuAI/glm-4-9b-chat",)),
        sizes=("9B",),
        lora_targets=("query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"),
        description="GLM-4 chat (remote code; needs --trust-remote-code)",
    ),
    ModelGroupSpec(
        name="gemma2",
        template="gemma2",
        tasks=CHAT_TASKS,
        architectures=("Gemma2ForCausalLM",),
        model_types=("gemma2",),
        hub_ids=_hubs(
            ("google/gemma-2-2b-it", "google/gemma-2-9b-it", "google/gemma-2-27b-it"), ("LLM-Research/gemma-2-9b-it",)
        ),
        sizes=("2B", "9B", "27B"),
        lora_targets=ATTENTION_MLP,
        description="Gemma 2 (instruction tuned)",
    ),
    ModelGroupSpec(
        name="internlm2",
        template="internlm2",
        tasks=CHAT_TASKS,
        architectures=("InternLM2ForCausalLM",),
        model_types=("internlm2",),
        hub_ids=_hubs(
            ("internlm/internlm2_5-7b-chat", "internlm/internlm2_5-20b-chat", "internlm/internlm2-chat-7b"),
            ("Shanghai_AI_Laboratory/internlm2_5-7b-chat",),
        ),
        sizes=("1.8B", "7B", "20B"),
        lora_targets=("wqkv", "wo", "w1", "w2", "w3"),
        description="InternLM2 / InternLM2.5 chat (remote code; needs --trust-remote-code)",
    ),
    ModelGroupSpec(
        name="baichuan2",
        template="baichuan2",
        tasks=CHAT_TASKS,
        architectures=("BaichuanForCausalLM",),
        model_types=("baichuan",),
        hub_ids=_hubs(
            ("baichuan-inc/Baichuan2-7B-Chat", "baichuan-inc/Baichuan2-13B-Chat"), ("baichuan-inc/Baichuan2-7B-Chat",)
        ),
        sizes=("7B", "13B"),
        lora_targets=("W_pack", "o_proj", "gate_proj", "up_proj", "down_proj"),
        description="Baichuan2 chat (remote code; needs --trust-remote-code)",
    ),
    ModelGroupSpec(
        name="deepseek",
        template="deepseek",
        tasks=CHAT_TASKS,
        architectures=("LlamaForCausalLM",),
        model_types=("llama",),
        hub_ids=_hubs(
            ("deepseek-ai/deepseek-llm-7b-chat", "deepseek-ai/deepseek-llm-67b-chat"),
            ("deepseek-ai/deepseek-llm-7b-chat",),
        ),
        sizes=("7B", "67B"),
        lora_targets=ATTENTION_MLP,
        description="DeepSeek LLM (chat)",
    ),
    ModelGroupSpec(
        name="phi3",
        template="phi3",
        tasks=CHAT_TASKS,
        architectures=("Phi3ForCausalLM",),
        model_types=("phi3",),
        hub_ids=_hubs(
            (
                "microsoft/Phi-3-mini-4k-instruct",
                "microsoft/Phi-3.5-mini-instruct",
                "microsoft/Phi-3-medium-4k-instruct",
            ),
            ("LLM-Research/Phi-3-mini-4k-instruct",),
        ),
        sizes=("3.8B", "14B"),
        lora_targets=("qkv_proj", "o_proj", "gate_up_proj", "down_proj"),
        description="Phi-3 / Phi-3.5 (instruct)",
    ),
    ModelGroupSpec(
        name="yi",
        template="yi",
        tasks=CHAT_TASKS,
        architectures=("LlamaForCausalLM",),
        model_types=("llama",),
        hub_ids=_hubs(
            ("01-ai/Yi-1.5-6B-Chat", "01-ai/Yi-1.5-9B-Chat", "01-ai/Yi-1.5-34B-Chat"), ("01ai/Yi-1.5-9B-Chat",)
        ),
        sizes=("6B", "9B", "34B"),
        lora_targets=ATTENTION_MLP,
        description="Yi / Yi-1.5 (chat)",
    ),
    ModelGroupSpec(
        name="bert",
        tasks=EMBEDDING_TASKS,
        architectures=("BertModel",),
        model_types=("bert",),
        hub_ids=_hubs(("google-bert/bert-base-uncased", "google-bert/bert-base-chinese")),
        sizes=("110M",),
        lora_targets=("query", "key", "value", "dense"),
        description="BERT encoders (mean-pooled embeddings)",
    ),
    ModelGroupSpec(
        name="minilm",
        tasks=EMBEDDING_TASKS,
        architectures=("BertModel",),
        model_types=("bert",),
        hub_ids=_hubs(("sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L12-v2")),
        sizes=("22M", "33M"),
        lora_targets=("query", "key", "value", "dense"),
        description="MiniLM sentence encoders",
    ),
    ModelGroupSpec(
        name="bge",
        tasks=EMBEDDING_TASKS,
        architectures=("BertModel", "XLMRobertaModel"),
        model_types=("bert", "xlm-roberta"),
        hub_ids=_hubs(
            ("BAAI/bge-small-en-v1.5", "BAAI/bge-base-en-v1.5", "BAAI/bge-large-zh-v1.5", "BAAI/bge-m3"),
            ("BAAI/bge-large-zh-v1.5", "BAAI/bge-m3"),
        ),
        sizes=("33M", "110M", "335M", "568M"),
        lora_targets=("query", "key", "value", "dense"),
        description="BAAI BGE embedding models",
    ),
)


@hookimpl
def openmind_register_templates(register):
    for spec in TEMPLATES:
        register(spec)


@hookimpl
def openmind_register_model_groups(register):
    for spec in GROUPS:
        register(spec)
