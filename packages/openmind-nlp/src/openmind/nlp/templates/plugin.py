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

#: official chat_template revisions (sha256 of the normalised text, see openmind.core.templates);
#: each is stored with its source under packages/openmind-nlp/tests/data/chat_templates/
R = {
    "llama2": "e8d5b5a546d3f19df16a5320c614fab05bdc4edd50e850f1afd947b503ea41cf",
    "llama3": "ba03a121d097859c7b5b9cd03af99aafe95275210d2876f642ad9929a150f122",
    "llama3.1": "93c0e9aa3629bbd77e68dbc0f5621f6e6b23aa8d74b932595cdb8d64684526d7",
    "llama3.2": "d82792f95932f1c9cef5c4bd992f171225e3bf8c7b609b4557c9e1ec96be819f",
    "qwen2": "793202280c0910ab26bc6eb57c8212c2417324c6d8c4efd0d10d59092ab3e3eb",
    "qwen2.5": "55b2f4a26ac9ee719330a61a0c39d9e538b0e9322212f048326318cff4f8674a",
    "qwen3": "87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5",
    "mistral-2023": "26a59556925c987317ce5291811ba3b7f32ec4c647c400c6cc7e3a9993007ba7",
    "mistral-v1": "bbc58aad99454df60138be9530c9601a0adfe3d8932cda975e1f10b2410ddc51",
    "mistral-v3": "cafb64e0e9e5fd2503054b3479593fae39cbdfd52338ce8af9bb4664a8eb05bd",
    "mistral-v3-tekken": "e7deee034838db2bfc7487788a3013d8a307ab69f72f3c54a85f06fd76007d4e",
    "mistral-v7": "3c4ad5fa60dd8c7ccdf82fa4225864c903e107728fcaf859fa6052cb80c92ee9",
    "glm4": "27288f957f8364c990a2ce13bf5f8bf86921c4bce467ce698c76dcc69466d821",
    "chatglm3": "e4496f930bf7b7bc7e7cf8232e90fd43ab4a9d8eb9c77f6ec98f5beb5c5cbeaa",
    "gemma2": "ecd6ae513fe103f0eb62e8ab5bfa8d0fe45c1074fa398b089c93a7e70c15cfd6",
    "internlm2": "3ce2fe9753f9a77a601f55dfcab7cd46fbc91324aae0f78ca38d194a4eaef8d5",
    "deepseek": "8aeba567270fa9a8d5372caf4b04affea947c4421d96adc01e3ff94021b0ae8e",
    "deepseek-r1": "dd2675619a64a449cdcdd2b93e605a0a50764cee41e344f244752bc93643936c",
    "phi3.5": "78d976a442bcde2f0be15aafbb8e3050e1104f86732266f68403251b89982a90",
    "phi4": "a41fb8727c4f1e722e53cb1ea935038a1177b8bdf09387f3b048f9da5255ef3e",
    "phi3-mini": "93d7bfd74b1ee92c7380c3762a35793967cc30bf341cc51ddea5a74bea687f27",
    "yi1.5": "d46a86f116c926da86c9232a071e325115772dcf7a55e6881c09c6b43e864dc7",
    "gemma3": "8d9e3a3c114fb2053ec500184677af4f7e5f8ec2582443cd535834e68b3ade29",
    "internlm3": "49aa7cb516942cc5a17d45ed2939828e3b5e4188dc487a3c4b64a570e5b5111f",
    "llama4": "579516553b357b16ac3f31372f4fda04daf895d0f9361c49169cbb86a751b6ab",
    "llama4-transformers": "9bcc2b35f15730186459ff95c30804d7b97eeb97360b71b432f5564aab789f04",
}
LLAMA3_STOP = ("<|eot_id|>", "<|end_of_text|>")
LLAMA31_STOP = ("<|eot_id|>", "<|eom_id|>", "<|end_of_text|>")
CHATML_STOP = ("<|im_end|>", "<|endoftext|>")
DEEPSEEK_STOP = ("<｜end▁of▁sentence｜>",)

TEMPLATES = (
    TemplateSpec(
        name="llama2",
        impl=f"{M}.llama:Llama2Template",
        stop_words=("</s>",),
        revisions=(("Llama-2-chat", R["llama2"]),),
        description="Llama-2-chat: [INST] <<SYS>> ... [/INST] answer </s>",
    ),
    TemplateSpec(
        name="llama3",
        impl=f"{M}.llama:Llama3Template",
        stop_words=LLAMA3_STOP,
        revisions=(("Meta-Llama-3-Instruct", R["llama3"]),),
        description="Llama-3-Instruct (3.0) header/eot format",
    ),
    TemplateSpec(
        name="llama3.1",
        impl=f"{M}.llama:Llama31Template",
        stop_words=LLAMA31_STOP,
        revisions=(("Llama-3.1/3.3-Instruct", R["llama3.1"]),),
        description="Llama 3.1/3.3 Instruct: cutoff/date system header, tools, ipython role",
    ),
    TemplateSpec(
        name="llama3.2",
        impl=f"{M}.llama:Llama32Template",
        stop_words=LLAMA31_STOP,
        revisions=(("Llama-3.2-Instruct", R["llama3.2"]),),
        description="Llama 3.2 Instruct: 3.1's format with today's date (date_string=...)",
    ),
    TemplateSpec(
        name="llama4",
        impl=f"{M}.llama:Llama4Template",
        stop_words=("<|eot|>", "<|eom|>", "<|end_of_text|>"),
        revisions=(
            ("Llama-4-Instruct", R["llama4"]),
            ("Llama-4-Instruct (transformers Llama4Processor default)", R["llama4-transformers"]),
        ),
        description="Llama 4 Instruct, text part: <|header_start|>role<|header_end|> turns, tools, ipython",
    ),
    TemplateSpec(
        name="qwen2",
        impl=f"{M}.chatml:Qwen2Template",
        stop_words=CHATML_STOP,
        revisions=(("Qwen2-Instruct", R["qwen2"]),),
        aliases=("qwen2_vl",),
        description="Qwen2-Instruct ChatML, default system prompt (LLaMA-Factory qwen2_vl: its text part)",
    ),
    TemplateSpec(
        name="qwen2.5",
        impl=f"{M}.chatml:Qwen25Template",
        stop_words=CHATML_STOP,
        revisions=(("Qwen2.5-Instruct", R["qwen2.5"]),),
        aliases=("qwen",),
        description="Qwen2.5-Instruct ChatML with tools (LLaMA-Factory: qwen)",
    ),
    TemplateSpec(
        name="qwen3",
        impl=f"{M}.chatml:Qwen3Template",
        stop_words=CHATML_STOP,
        revisions=(("Qwen3", R["qwen3"]),),
        description="Qwen3 ChatML with tools and thinking (enable_thinking)",
    ),
    TemplateSpec(
        name="qwen3_nothink",
        impl=f"{M}.chatml:Qwen3Template",
        stop_words=CHATML_STOP,
        options={"enable_thinking": False},
        description="Qwen3 with thinking off (enable_thinking=False; LLaMA-Factory's name)",
    ),
    TemplateSpec(
        name="qwen3_vl_nothink",
        impl=f"{M}.chatml:Qwen3VLTextTemplate",
        stop_words=CHATML_STOP,
        description="Qwen3-VL-Instruct, text part: Qwen3's ChatML and tools without thinking (LLaMA-Factory's name)",
    ),
    TemplateSpec(
        name="mistral",
        impl=f"{M}.mistral:MistralTemplate",
        stop_words=("</s>",),
        revisions=(("Mistral-Instruct-v0.1/v0.2 (2023 text)", R["mistral-2023"]),),
        description="Mistral-Instruct v0.1/v0.2, Mixtral-Instruct, 2023 text: [INST] ... [/INST]answer</s>",
    ),
    TemplateSpec(
        name="mistral-v1",
        impl=f"{M}.mistral:MistralV1Template",
        stop_words=("</s>",),
        revisions=(("Mistral-Instruct-v0.1/v0.2, Mixtral-8x7B (current text)", R["mistral-v1"]),),
        description="Mistral v1 tokenizer, current text: <s> [INST] system\n\nuser [/INST] answer</s>",
    ),
    TemplateSpec(
        name="mistral-v3",
        impl=f"{M}.mistral:MistralV3Template",
        stop_words=("</s>",),
        revisions=(("Mistral-7B-Instruct-v0.3, Mistral-Large-2407", R["mistral-v3"]),),
        description="Mistral v3: [AVAILABLE_TOOLS], [TOOL_CALLS], [TOOL_RESULTS]; system before the last user turn",
    ),
    TemplateSpec(
        name="mistral-v3-tekken",
        impl=f"{M}.mistral:MistralV3TekkenTemplate",
        stop_words=("</s>",),
        revisions=(("Mistral-Nemo-Instruct-2407", R["mistral-v3-tekken"]),),
        description="Mistral v3-tekken (Nemo): v3 without spaces after the markers",
    ),
    TemplateSpec(
        name="mistral-v7",
        impl=f"{M}.mistral:MistralV7Template",
        stop_words=("</s>",),
        revisions=(("Mistral-Large-Instruct-2411", R["mistral-v7"]),),
        description="Mistral v7: [SYSTEM_PROMPT] ... [/SYSTEM_PROMPT][INST] ...[/INST] answer</s>",
    ),
    TemplateSpec(
        name="glm4",
        impl=f"{M}.glm:GLM4Template",
        stop_words=("<|user|>", "<|observation|>", "<|endoftext|>"),
        revisions=(("glm-4-9b-chat", R["glm4"]),),
        description="GLM-4-chat: [gMASK]<sop><|role|>metadata\ncontent, function tools",
    ),
    TemplateSpec(
        name="chatglm3",
        impl=f"{M}.glm:ChatGLM3Template",
        stop_words=("<|user|>", "<|observation|>", "</s>"),
        revisions=(("chatglm3-6b", R["chatglm3"]),),
        description="ChatGLM3-6B: [gMASK]sop<|role|>\n content",
    ),
    TemplateSpec(
        name="gemma2",
        impl=f"{M}.gemma:Gemma2Template",
        stop_words=("<end_of_turn>", "<eos>"),
        revisions=(("gemma-2-it", R["gemma2"]),),
        aliases=("gemma",),
        description="Gemma-2-it turns (no system role)",
    ),
    TemplateSpec(
        name="gemma3",
        impl=f"{M}.gemma:Gemma3Template",
        stop_words=("<end_of_turn>", "<eos>"),
        revisions=(("gemma-3-it", R["gemma3"]),),
        description="Gemma-3-it turns, text part (a system message leads the first turn; LLaMA-Factory: gemma3)",
    ),
    TemplateSpec(
        name="internlm2",
        impl=f"{M}.chatml:InternLM2Template",
        stop_words=("<|im_end|>", "</s>"),
        revisions=(("internlm2-chat-7b", R["internlm2"]),),
        aliases=("intern2",),
        description="InternLM2-chat: <s> + ChatML (LLaMA-Factory: intern2)",
    ),
    TemplateSpec(
        name="internlm3",
        impl=f"{M}.chatml:InternLM3Template",
        stop_words=("<|im_end|>", "</s>"),
        # InternLM2.5-chat publishes the very same text
        revisions=(("internlm2_5-chat/internlm3-8b-instruct", R["internlm3"]),),
        aliases=("internlm2.5",),
        description="InternLM2.5-chat and InternLM3-Instruct: <s> + ChatML",
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
        stop_words=DEEPSEEK_STOP,
        revisions=(("deepseek-llm-chat/DeepSeek-V2-Chat", R["deepseek"]),),
        description="DeepSeek LLM / V2 chat: User: ...\n\nAssistant: ...",
    ),
    TemplateSpec(
        name="deepseek-r1",
        impl=f"{M}.deepseek:DeepSeekR1Template",
        stop_words=DEEPSEEK_STOP,
        revisions=(("DeepSeek-R1-Distill-Llama", R["deepseek-r1"]),),
        aliases=("deepseekr1",),
        description="DeepSeek-R1 distills: <｜User｜>...<｜Assistant｜>, generation prompt opens <think>",
    ),
    TemplateSpec(
        name="deepseek3",
        impl=f"{M}.deepseek:DeepSeekR1Template",
        stop_words=DEEPSEEK_STOP,
        options={"thinking": False},
        description="DeepSeek-V3 style: deepseek-r1 without the <think> generation prompt (LLaMA-Factory's name)",
    ),
    TemplateSpec(
        name="phi3",
        impl=f"{M}.phi:Phi3Template",
        stop_words=("<|end|>", "<|endoftext|>"),
        revisions=(("Phi-3.5-mini-instruct", R["phi3.5"]),),
        aliases=("phi",),
        description="Phi-3/3.5-instruct <|user|>/<|assistant|>/<|end|> (LLaMA-Factory: phi)",
    ),
    TemplateSpec(
        name="phi3-mini",
        impl=f"{M}.phi:Phi3MiniTemplate",
        stop_words=("<|end|>", "<|endoftext|>"),
        revisions=(("Phi-3-mini-4k-instruct", R["phi3-mini"]),),
        description="Phi-3-mini-4k-instruct: Phi-3.5's format keeping an empty system message",
    ),
    TemplateSpec(
        name="phi4",
        impl=f"{M}.phi:Phi4Template",
        stop_words=("<|im_end|>", "<|endoftext|>"),
        revisions=(("phi-4", R["phi4"]),),
        description="Phi-4: <|im_start|>role<|im_sep|>content<|im_end|> (LLaMA-Factory: phi4)",
    ),
    TemplateSpec(
        name="yi1.5",
        impl=f"{M}.chatml:Yi15Template",
        stop_words=("<|im_end|>", "<|endoftext|>"),
        revisions=(("Yi-1.5-Chat", R["yi1.5"]),),
        description="Yi-1.5-Chat: system text first, then user turns each followed by the assistant header",
    ),
    TemplateSpec(
        name="yi",
        impl=f"{M}.chatml:YiTemplate",
        stop_words=CHATML_STOP,
        description="Yi ChatML with a system turn (documented format; LLaMA-Factory: yi); Yi-1.5 folders use yi1.5",
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
        template_markers=("[INST]", "<<SYS>>"),
        vocab_sizes=(32000,),
        name_pattern=r"llama-?2",
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
        template_markers=("<|start_header_id|>",),
        template_excludes=("Cutting Knowledge Date",),
        vocab_sizes=(128256,),
        name_pattern=r"llama-?3(?!\.\d)",
        generic=True,
        description="Meta Llama 3 (instruct)",
    ),
    ModelGroupSpec(
        name="llama3.1",
        template="llama3.1",
        tasks=CHAT_TASKS,
        architectures=("LlamaForCausalLM",),
        model_types=("llama",),
        hub_ids=_hubs(
            (
                "meta-llama/Llama-3.1-8B-Instruct",
                "meta-llama/Llama-3.1-70B-Instruct",
                "meta-llama/Llama-3.2-1B-Instruct",
                "meta-llama/Llama-3.2-3B-Instruct",
                "meta-llama/Llama-3.3-70B-Instruct",
            ),
            ("LLM-Research/Meta-Llama-3.1-8B-Instruct",),
        ),
        sizes=("1B", "3B", "8B", "70B"),
        lora_targets=ATTENTION_MLP,
        template_markers=("Cutting Knowledge Date",),
        vocab_sizes=(128256,),
        name_pattern=r"llama-?3\.[123]",
        description="Meta Llama 3.1 / 3.2 / 3.3 (instruct; the folder's template picks 3.1/3.3 or 3.2)",
    ),
    ModelGroupSpec(
        name="deepseek-r1",
        template="deepseek-r1",
        tasks=CHAT_TASKS,
        architectures=("LlamaForCausalLM", "Qwen2ForCausalLM"),
        model_types=("llama", "qwen2"),
        hub_ids=_hubs(
            (
                "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
                "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
                "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B",
                "deepseek-ai/DeepSeek-R1-Distill-Llama-8B",
                "deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
            ),
        ),
        sizes=("1.5B", "7B", "8B", "14B", "70B"),
        lora_targets=ATTENTION_MLP,
        template_markers=("<｜Assistant｜>",),
        vocab_sizes=(128256, 151936, 152064),
        name_pattern=r"deepseek-r1-distill",
        description="DeepSeek-R1 distills (Llama and Qwen2 architectures; thinking)",
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
        template_markers=("You are a helpful assistant.",),
        template_excludes=("You are Qwen", "<｜Assistant｜>"),
        vocab_sizes=(151936, 152064),
        name_pattern=r"qwen2(?![.\d])",
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
        template_markers=("You are Qwen, created by Alibaba Cloud",),
        vocab_sizes=(151936, 152064),
        name_pattern=r"qwen2\.5",
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
        template="mistral-v1",
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
        description="Mistral / Mixtral instruct (v0.1-v0.3, Nemo, Large; the folder's template picks the revision)",
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
        name="gemma3",
        template="gemma3",
        tasks=CHAT_TASKS,
        architectures=("Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"),
        model_types=("gemma3_text", "gemma3"),
        hub_ids=_hubs(
            ("google/gemma-3-1b-it", "google/gemma-3-4b-it", "google/gemma-3-12b-it", "google/gemma-3-27b-it"),
            ("LLM-Research/gemma-3-4b-it",),
        ),
        sizes=("1B", "4B", "12B", "27B"),
        lora_targets=ATTENTION_MLP,
        description="Gemma 3 (instruction tuned; text)",
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
        name_pattern=r"internlm2",
        description="InternLM2 / InternLM2.5 chat (remote code; needs --trust-remote-code)",
    ),
    ModelGroupSpec(
        name="internlm3",
        template="internlm3",
        tasks=CHAT_TASKS,
        architectures=("InternLM3ForCausalLM",),
        model_types=("internlm3",),
        hub_ids=_hubs(("internlm/internlm3-8b-instruct",), ("Shanghai_AI_Laboratory/internlm3-8b-instruct",)),
        sizes=("8B",),
        lora_targets=ATTENTION_MLP,
        description="InternLM3 instruct (remote code; needs --trust-remote-code)",
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
        template_markers=("'Assistant: '", "\\n\\nAssistant:"),
        vocab_sizes=(102400,),
        name_pattern=r"deepseek(?!-r1)",
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
        template="yi1.5",
        tasks=CHAT_TASKS,
        architectures=("LlamaForCausalLM",),
        model_types=("llama",),
        hub_ids=_hubs(
            ("01-ai/Yi-1.5-6B-Chat", "01-ai/Yi-1.5-9B-Chat", "01-ai/Yi-1.5-34B-Chat"), ("01ai/Yi-1.5-9B-Chat",)
        ),
        sizes=("6B", "9B", "34B"),
        lora_targets=ATTENTION_MLP,
        template_markers=("<|im_start|>",),
        vocab_sizes=(64000,),
        name_pattern=r"(^|[/_-])yi([/_-]|$)",
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
        generic=True,
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
        name_pattern=r"minilm",
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
        name_pattern=r"bge",
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
