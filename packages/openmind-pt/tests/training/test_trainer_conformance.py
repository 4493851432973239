"""The PyTorch trainers held to the trainer conformance suite (openmind.nlp.testing.trainer_conformance)."""

from __future__ import annotations

import pytest

from openmind.nlp.testing.trainer_conformance import TrainerConformance


class TestTorchTrainerConformance(TrainerConformance):
    framework = "pt"
    # qlora needs CUDA + bitsandbytes: coded before step 1 on this CPU machine
    unsupported = (({"finetuning_type": "qlora", "device": "cpu"}, "OM-T005"),)

    @pytest.fixture
    def conformance_model_dir(self, tiny_dir):
        return tiny_dir

    @pytest.fixture
    def conformance_sft_file(self, sft_file):
        return sft_file
