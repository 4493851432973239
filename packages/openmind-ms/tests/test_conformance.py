"""The shared conformance suite (openmind.nlp.testing.conformance) on MindSpore.

References are the backend's own calls without openmind's pipeline: the native model's greedy
decoder (:func:`openmind.ms.generation.generate`) and forward passes, and the tokenizer's
``apply_chat_template``. Equality with PyTorch is in ``test_interop.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from openmind.nlp.testing import conformance as C


@pytest.fixture(scope="class", params=["llama2", "mistral"])
def chat_model_dir(request):
    return request.getfixturevalue(f"{request.param}_dir")


class _Reference:
    framework = "ms"

    @pytest.fixture(autouse=True)
    def _models(self, native_models):
        self.models = native_models

    def reference_greedy(self, model_dir, prompt_ids, max_new_tokens):
        from openmind.ms import generation

        model = self.models(model_dir, "causal-lm")
        params = generation.GenerationParams(max_new_tokens=max_new_tokens, eos_token_ids=model.config.eos_token_ids)
        return generation.generate(model, [list(prompt_ids)], params).tokens[0]

    def reference_apply_chat_template(self, model_dir, messages):
        from transformers import AutoTokenizer

        ids = AutoTokenizer.from_pretrained(str(model_dir)).apply_chat_template(
            messages, add_generation_prompt=True, tokenize=True
        )
        return list(ids["input_ids"] if hasattr(ids, "keys") else ids)

    def reference_logits(self, model_dir, text):
        from mindspore import Tensor
        from transformers import AutoTokenizer

        from openmind.ms.models.bert import BertModel

        model = self.models(model_dir, "sequence-classification")
        enc = AutoTokenizer.from_pretrained(str(model_dir))(text)
        ids = np.array([enc["input_ids"]], np.int32)
        types = np.array([enc["token_type_ids"]], np.int32)
        positions = np.arange(ids.shape[1], dtype=np.int32)[None]
        mask = BertModel.extended_mask(np.ones_like(ids))
        return model(Tensor(ids), Tensor(types), Tensor(positions), Tensor(mask)).asnumpy()[0].tolist()

    def reference_mask_logits(self, model_dir, text):
        from mindspore import Tensor
        from transformers import AutoTokenizer

        from openmind.ms.models.bert import BertModel

        model = self.models(model_dir, "masked-lm")
        tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        enc = tokenizer(text)
        ids = np.array([enc["input_ids"]], np.int32)
        types = np.array([enc["token_type_ids"]], np.int32)
        positions = np.arange(ids.shape[1], dtype=np.int32)[None]
        mask = BertModel.extended_mask(np.ones_like(ids))
        logits = model(Tensor(ids), Tensor(types), Tensor(positions), Tensor(mask)).asnumpy()[0]
        return logits[enc["input_ids"].index(tokenizer.mask_token_id)].tolist()


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


class TestFillMask(_Reference, C.FillMaskConformance):
    pass


class TestErrors(_Reference, C.ErrorConformance):
    @pytest.fixture(scope="class")
    def chat_model_dir(self, llama2_dir):
        return llama2_dir
