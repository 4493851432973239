"""The shared conformance suite (openmind.nlp.testing.conformance) on PyTorch, against raw transformers."""

from __future__ import annotations

import pytest
import torch

from openmind.nlp.testing import conformance as C


@pytest.fixture(scope="class", params=["llama2", "mistral"])
def chat_model_dir(request):
    return request.getfixturevalue(f"{request.param}_dir")


class _Reference:
    framework = "pt"

    @pytest.fixture(autouse=True)
    def _models(self, reference_models):
        self.models = reference_models

    def reference_greedy(self, model_dir, prompt_ids, max_new_tokens):
        model, _ = self.models(model_dir, "AutoModelForCausalLM")
        with torch.inference_mode():
            out = model.generate(torch.tensor([prompt_ids]), max_new_tokens=max_new_tokens, do_sample=False)
        return out[0, len(prompt_ids) :].tolist()

    def reference_apply_chat_template(self, model_dir, messages):
        _, tokenizer = self.models(model_dir, "AutoModelForCausalLM")
        ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        return list(ids["input_ids"] if hasattr(ids, "keys") else ids)

    def reference_logits(self, model_dir, text):
        model, tokenizer = self.models(model_dir, "AutoModelForSequenceClassification")
        with torch.inference_mode():
            return model(**tokenizer(text, return_tensors="pt")).logits[0].tolist()

    def reference_token_logits(self, model_dir, text):
        model, tokenizer = self.models(model_dir, "AutoModelForTokenClassification")
        enc = tokenizer(text, return_tensors="pt", return_offsets_mapping=True)
        spans = [tuple(s) for s in enc.pop("offset_mapping")[0].tolist()]
        with torch.inference_mode():
            return model(**enc).logits[0].tolist(), spans

    def reference_mask_logits(self, model_dir, text):
        model, tokenizer = self.models(model_dir, "AutoModelForMaskedLM")
        enc = tokenizer(text, return_tensors="pt")
        position = enc["input_ids"][0].tolist().index(tokenizer.mask_token_id)
        with torch.inference_mode():
            return model(**enc).logits[0, position].tolist()


class TestChat(_Reference, C.ChatConformance):
    pass


class TestTextGeneration(_Reference, C.TextGenerationConformance):
    @pytest.fixture(scope="class")
    def chat_model_dir(self, llama2_dir):
        return llama2_dir


class TestInstructionTasks(_Reference, C.InstructionConformance):
    @pytest.fixture(scope="class")
    def chat_model_dir(self, llama2_dir):
        return llama2_dir


class TestText2Emb(_Reference, C.Text2EmbConformance):
    pass


class TestTextClassification(_Reference, C.TextClassificationConformance):
    pass


class TestTokenClassification(_Reference, C.TokenClassificationConformance):
    pass


class TestFillMask(_Reference, C.FillMaskConformance):
    pass


class TestErrors(_Reference, C.ErrorConformance):
    @pytest.fixture(scope="class")
    def chat_model_dir(self, llama2_dir):
        return llama2_dir
