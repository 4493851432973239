"""Model groups: registration meta, config.json matching, template resolution."""

from __future__ import annotations

import json

import pytest

from openmind.core.errors import OpenMindError
from openmind.core.plugins import get_registry
from openmind.core.specs import ModelGroupSpec, TemplateSpec
from openmind.nlp.templates import (
    JinjaTemplate,
    NativeTemplate,
    match_model_dir,
    match_model_group,
    resolve_template,
)
from openmind.nlp.templates.plugin import TEMPLATES

REQUIRED = {
    "llama2", "llama3", "qwen2", "qwen2.5", "qwen3", "mistral", "glm4", "gemma2", "internlm2",
    "baichuan2", "deepseek", "phi3", "yi", "bert", "minilm", "bge", "llama3.1", "deepseek-r1", "gemma3", "internlm3",
}  # fmt: skip


def test_groups_and_templates_are_registered_one_to_one():
    registry = get_registry()
    groups = {g.name: g for g in registry.all(ModelGroupSpec) if g.component.distribution == "openmind-nlp"}
    assert set(groups) == REQUIRED
    templates = {t.name for t in registry.all(TemplateSpec) if t.component.distribution == "openmind-nlp"}
    chat = [g for g in groups.values() if g.template]
    assert {g.template for g in chat} <= templates  # a group's default template is registered
    # every registered template is some group's default, a revision of a group's family or a named variant
    nlp_templates = [t for t in registry.all(TemplateSpec) if t.component.distribution == "openmind-nlp"]
    named_only = {"yi", "qwen3_vl_nothink"}  # formats by name (LLaMA-Factory's `yi`, a VL model's text part)
    assert all(t.revisions or t.options or t.name in {g.template for g in chat} | named_only for t in nlp_templates)
    for g in groups.values():
        assert g.architectures and g.model_types and g.hub_ids.get("huggingface") and g.sizes and g.lora_targets
        assert set(g.frameworks) == {"pt", "ms"}
        if g.template:
            assert set(g.tasks) == {"chat", "text-generation", "summarization", "translation"}
        else:
            assert g.tasks == ("text2emb",)
    assert not [p for p in registry.problems if "openmind-nlp" in str(p.component)]


@pytest.mark.parametrize("spec", TEMPLATES, ids=lambda t: t.name)
def test_template_specs_load_native_renderers(spec):
    from openmind.nlp.templates.resolve import instantiate

    template = instantiate(spec)
    assert isinstance(template, NativeTemplate) and template.name == spec.name
    assert tuple(template.stop_words) == spec.stop_words and spec.stop_words  # written once, on the spec
    assert "stop_words" not in type(template).__dict__  # ... never again on the class


LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}
QWEN2 = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}
BERT = {"architectures": ["BertModel"], "model_type": "bert"}


@pytest.mark.parametrize(
    ("config", "tokenizer_config", "group"),
    [
        ({**LLAMA, "vocab_size": 32000}, None, "llama2"),
        ({**LLAMA, "vocab_size": 128256}, None, "llama3"),
        ({**LLAMA, "vocab_size": 102400}, None, "deepseek"),
        ({**LLAMA, "vocab_size": 64000}, None, "yi"),
        (LLAMA, {"chat_template": "{{ '<|start_header_id|>' }}"}, "llama3"),
        (LLAMA, {"name_or_path": "meta-llama/Llama-2-7b-chat-hf"}, "llama2"),
        ({**QWEN2, "vocab_size": 152064}, {"chat_template": "You are Qwen, created by Alibaba Cloud."}, "qwen2.5"),
        ({**QWEN2, "vocab_size": 152064}, {"chat_template": "system\nYou are a helpful assistant.<|im_end|>"}, "qwen2"),
        ({**QWEN2, "_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct"}, None, "qwen2.5"),
        ({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}, None, "qwen3"),
        ({"architectures": ["MistralForCausalLM"], "model_type": "mistral"}, None, "mistral"),
        ({"architectures": ["MixtralForCausalLM"], "model_type": "mixtral"}, None, "mistral"),
        ({"architectures": ["ChatGLMModel"], "model_type": "chatglm"}, None, "glm4"),
        ({"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2"}, None, "gemma2"),
        ({"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3"}, None, "gemma3"),
        ({"architectures": ["InternLM2ForCausalLM"], "model_type": "internlm2"}, None, "internlm2"),
        ({"architectures": ["InternLM3ForCausalLM"], "model_type": "internlm3"}, None, "internlm3"),
        ({"architectures": ["BaichuanForCausalLM"], "model_type": "baichuan"}, None, "baichuan2"),
        ({"architectures": ["Phi3ForCausalLM"], "model_type": "phi3"}, None, "phi3"),
        ({"model_type": "phi3"}, None, "phi3"),
        (BERT, None, "bert"),
        ({**BERT, "_name_or_path": "BAAI/bge-small-en-v1.5"}, None, "bge"),
        ({"architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta"}, None, "bge"),
    ],
)
def test_match(config, tokenizer_config, group):
    assert match_model_group(config, tokenizer_config=tokenizer_config).name == group


def test_ambiguous_llama_lists_candidates_and_how_to_choose():
    with pytest.raises(OpenMindError) as info:
        match_model_group({**LLAMA, "vocab_size": 32}, where="m/config.json")
    err = info.value
    assert err.code == "OM-M202" and err.location == "m/config.json"
    for name in ("llama2", "llama3", "deepseek", "yi"):
        assert name in err.message and name in err.hint
    assert "--model-group" in err.hint and "--template" in err.hint


def test_ambiguous_qwen2_without_evidence():
    with pytest.raises(OpenMindError) as info:
        match_model_group(QWEN2)
    assert info.value.code == "OM-M202" and "qwen2, qwen2.5" in info.value.message


def test_unknown_architecture():
    with pytest.raises(OpenMindError) as info:
        match_model_group({"architectures": ["FalconForCausalLM"], "model_type": "falcon"})
    err = info.value
    assert err.code == "OM-M201" and "FalconForCausalLM" in err.message and "llama2" in err.message
    assert "--model-group" in err.hint and "--template" in err.hint


def test_unreadable_config(tmp_path):
    (tmp_path / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(OpenMindError) as info:
        match_model_dir(tmp_path)
    assert info.value.code == "OM-M204" and info.value.location.endswith("config.json")


def test_real_minilm_folder_matches_minilm():
    from openmind.nlp.testing.assets import minilm_path

    assert match_model_dir(minilm_path()).name == "minilm"


# ---- resolve_template ---------------------------------------------------------------------------


@pytest.fixture
def llama2_folder(tmp_path):
    pytest.importorskip("transformers")
    from openmind.nlp.testing.assets import save_llama2_tokenizer

    folder = tmp_path / "tiny-llama2"
    save_llama2_tokenizer(folder)
    (folder / "config.json").write_text(json.dumps({**LLAMA, "vocab_size": 32000}), encoding="utf-8")
    return folder


def test_resolve_order(llama2_folder, tmp_path):
    assert resolve_template("qwen3").name == "qwen3"
    assert resolve_template(model_group="gemma2").name == "gemma2"
    assert resolve_template(model_dir=llama2_folder).name == "llama2"  # matched group's native template
    assert resolve_template("qwen2", model_dir=llama2_folder).name == "qwen2"  # an explicit name wins
    own = resolve_template("jinja", model_dir=llama2_folder)
    assert isinstance(own, JinjaTemplate) and own.special_tokens["eos_token"] == "</s>"
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    assert own.render(messages) == resolve_template(model_dir=llama2_folder).render(messages)


def test_resolve_uses_the_folders_own_template_whatever_the_architecture(llama2_folder):
    config = json.loads((llama2_folder / "config.json").read_text())
    (llama2_folder / "config.json").write_text(
        json.dumps({**config, "architectures": ["MysteryForCausalLM"], "model_type": "mystery"})
    )
    template = resolve_template(model_dir=llama2_folder)
    # the folder's template is the official Llama-2 one: its native renderer, chosen by revision
    assert template.name == "llama2" and template.revision == "Llama-2-chat"
    assert "official Llama-2-chat chat_template" in template.notice
    assert template.render([{"role": "user", "content": "Hi"}]) == "<s>[INST] Hi [/INST]"


def test_no_template_anywhere_is_tp001(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["MysteryForCausalLM"]}), encoding="utf-8")
    with pytest.raises(OpenMindError) as info:
        resolve_template(model_dir=tmp_path)
    err = info.value
    assert err.code == "OM-TP001" and "OM-M201" in err.message and "--template" in err.hint
    with pytest.raises(OpenMindError) as info:
        resolve_template(model_group="bert")
    assert info.value.code == "OM-TP001" and "'bert' has no template" in info.value.message


def test_unknown_names_suggest():
    with pytest.raises(OpenMindError) as info:
        resolve_template("qwen25")
    assert info.value.code == "OM-TP004" and "qwen2.5" in info.value.message
    with pytest.raises(OpenMindError) as info:
        resolve_template(model_group="lama2")
    assert info.value.code == "OM-M203" and "llama2" in info.value.message


def test_cli_lists_models_and_templates(capsys):
    from openmind.core.cli.main import main

    assert main(["list", "models"]) == 0
    out = capsys.readouterr().out
    for name in ("qwen2.5", "glm4", "minilm"):
        assert name in out
    assert main(["list", "templates"]) == 0
    out = capsys.readouterr().out
    assert "baichuan2" in out and "<|im_end|>" in out
