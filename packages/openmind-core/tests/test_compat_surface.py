"""openMind 1.0's Python surface: every top-level name imports lazily and does what it did."""

from __future__ import annotations

import importlib.util
import json
import logging as std_logging
import subprocess
import sys

import pytest

from openmind.core.errors import OpenMindError

#: every name openMind 1.0.0's ``openmind/__init__.py`` exported (its _import_structure)
OPENMIND1_TOP_LEVEL = [
    "get_framework",
    "is_ms_available",
    "is_torch_available",
    "is_torch_npu_available",
    "is_mindformers_available",
    "is_transformers_available",
    "is_diffusers_available",
    "is_mindone_available",
    "is_mindnlp_available",
    "is_tokenizers_available",
    "is_lmeval_available",
    "is_lmdeploy_available",
    "logging",
    "AutoConfig",
    "AutoFeatureExtractor",
    "AutoImageProcessor",
    "AutoModel",
    "AutoModelForCausalLM",
    "AutoModelForSequenceClassification",
    "AutoProcessor",
    "AutoTokenizer",
    "pipeline",
    "Trainer",
    "TrainingArguments",
    "PreTrainer",
    "PreTrainingArguments",
    "OmDataset",
    "__version__",
]
OPENMIND1_MODULES = ["openmind.utils", "openmind.utils.hub", "openmind.utils.logging", "openmind.metrics",
                     "openmind.trainers", "openmind.omdatasets"]  # fmt: skip
FRAMEWORKS = ("torch", "transformers", "datasets", "mindspore", "diffusers", "tokenizers")


def test_every_1_0_name_is_known_and_import_openmind_imports_no_framework():
    code = f"""
import sys, json, openmind
import openmind.utils, openmind.utils.hub, openmind.utils.logging, openmind.metrics, openmind.trainers, openmind.omdatasets
from openmind import (get_framework, is_ms_available, is_torch_available, is_torch_npu_available,
    is_mindformers_available, is_transformers_available, is_diffusers_available, is_mindone_available,
    is_mindnlp_available, is_tokenizers_available, is_lmeval_available, is_lmdeploy_available, logging, OmDataset,
    pipeline)
from openmind.utils.hub import OM_DATASETS_CACHE, snapshot_download
values = [f() for f in (is_ms_available, is_torch_available, is_torch_npu_available, is_mindformers_available,
    is_transformers_available, is_diffusers_available, is_mindone_available, is_mindnlp_available,
    is_tokenizers_available, is_lmeval_available, is_lmdeploy_available)]
print(json.dumps({{"loaded": [m for m in {FRAMEWORKS!r} if m in sys.modules], "values": values,
                  "dir": sorted(dir(openmind)), "framework": get_framework()}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["loaded"] == []  # no framework imported by any of it
    has = lambda m: importlib.util.find_spec(m) is not None  # noqa: E731
    assert data["values"] == [
        has("mindspore"),
        has("torch"),
        False,  # no Ascend NPU on this machine
        has("mindformers"),
        has("transformers"),
        has("diffusers"),
        has("mindone"),
        has("mindnlp"),
        has("tokenizers"),
        has("lm_eval"),
        has("lmdeploy"),
    ]
    assert set(OPENMIND1_TOP_LEVEL) <= set(data["dir"])
    assert data["framework"] == ("pt" if has("torch") else "ms" if has("mindspore") else "N/A")


def test_removed_names_raise_coded_errors_naming_the_replacement():
    import openmind

    for name in ("PreTrainer", "PreTrainingArguments"):
        with pytest.raises(ImportError) as info:
            getattr(openmind, name)
        assert isinstance(info.value, OpenMindError) and info.value.code == "OM-C001"
        assert "openmind.train(stage='pt'" in info.value.message or "stage='pt'" in info.value.message
    with pytest.raises(OpenMindError) as info:
        from openmind.metrics import Accuracy  # noqa: F401
    assert info.value.code == "OM-C001" and "evaluate" in info.value.hint
    with pytest.raises(AttributeError):
        openmind.not_a_name  # noqa: B018


def test_utils_logging_verbosity_helpers(caplog):
    from openmind import logging
    from openmind.utils import get_logger

    before = logging.get_verbosity()
    try:
        logging.set_verbosity_error()
        assert std_logging.getLogger("openmind").level == std_logging.ERROR == logging.get_verbosity()
        logging.set_verbosity_info()
        assert logging.get_verbosity() == logging.INFO
        logger = get_logger("my_script")
        assert logger.name == "openmind.my_script" and get_logger("openmind.core").name == "openmind.core"
        with caplog.at_level(std_logging.INFO, logger="openmind"):
            logger.info_rank0("hello from rank 0")
        assert "hello from rank 0" in caplog.text
    finally:
        logging.set_verbosity(before)


def test_hub_constants_and_local_snapshot(tmp_path, monkeypatch):
    from openmind.utils import hub

    assert hub.OM_DATASETS_CACHE.endswith("datasets") and hub.OM_HUB_CACHE.endswith("hub")
    assert hub.snapshot_download(str(tmp_path)) == str(tmp_path)  # a local folder is returned as is
    with pytest.raises(OpenMindError) as info:
        hub.snapshot_download("org/data", repo_type="dataset")
    assert info.value.code == "OM-C001"
