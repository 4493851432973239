"""The MindSpore trainer held to the trainer conformance suite (openmind.nlp.testing.trainer_conformance)."""

from __future__ import annotations

import pytest

from openmind.nlp.testing.synthetic import reversal_rows, write_jsonl
from openmind.nlp.testing.trainer_conformance import TrainerConformance


@pytest.fixture(autouse=True)
def _fresh_plugins(monkeypatch, tmp_path):
    from openmind.core.plugins import reset

    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path / "cache"))
    reset()
    yield
    reset()


class TestMindSporeTrainerConformance(TrainerConformance):
    framework = "ms"
    cli_env = {"OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false", "GLOG_v": "3"}
    # the native MindSpore trainer trains pt, sft and dpo (sigmoid) with full, freeze or LoRA finetuning
    unsupported = (
        ({"stage": "dpo", "pref_loss": "ipo"}, "OM-T008"),  # dpo: sigmoid only
        ({"finetuning_type": "qlora"}, "OM-T008"),
        ({"finetuning_type": "freeze", "freeze_trainable_layers": 3}, "OM-T008"),  # the model has 2 layers
    )

    @pytest.fixture(scope="class")
    def conformance_model_dir(self, tmp_path_factory):
        from openmind.pt.testing import tiny_llama

        return tiny_llama(
            tmp_path_factory.mktemp("tiny") / "model", hidden_size=64, layers=2, heads=4, intermediate_size=256
        )

    @pytest.fixture(scope="class")
    def conformance_sft_file(self, tmp_path_factory):
        return write_jsonl(tmp_path_factory.mktemp("data") / "sft.jsonl", reversal_rows(96, seed=0))
