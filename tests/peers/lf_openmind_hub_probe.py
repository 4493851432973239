"""Run inside the LLaMA-Factory venv (with this project's `openmind` installed there) by
``test_llamafactory_openmind_hub.py``: LLaMA-Factory's own code with ``USE_OPENMIND_HUB=1`` loads
a model and a dataset from the Modelers hub (a loopback test hub), i.e. through ``openmind.utils.hub.
snapshot_download`` and ``openmind.OmDataset.load_dataset``. Prints ``RESULT {json}``.

usage: python lf_openmind_hub_probe.py MODEL_ID DATASET_DIR OUT_DIR
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import types


def _torchaudio_without_extension() -> None:
    """PyPI's torchaudio is a CUDA build whose compiled extension cannot load here; LLaMA-Factory
    imports it for multimodal data only (ENVIRONMENT.md; as bench/data_runners.py)."""
    ext = types.ModuleType("torchaudio._extension")
    ext._IS_TORCHAUDIO_EXT_AVAILABLE = False
    ext._IS_ALIGN_AVAILABLE = False
    ext.fail_if_no_align = lambda f: f
    ext._check_cuda_version = lambda: None
    sys.modules.setdefault("torchaudio._extension", ext)


def main(model_id: str, dataset_dir: str, out_dir: str) -> dict:
    assert os.environ.get("USE_OPENMIND_HUB") == "1"
    _torchaudio_without_extension()
    import torch
    from llamafactory.data import get_dataset, get_template_and_fix_tokenizer
    from llamafactory.hparams import get_train_args
    from llamafactory.model import load_model, load_tokenizer

    import openmind

    model_args, data_args, training_args, finetuning_args, _ = get_train_args(
        {
            "stage": "sft",
            "do_train": True,
            "model_name_or_path": model_id,
            "dataset": "om_alpaca",
            "dataset_dir": dataset_dir,
            "template": "llama2",
            "finetuning_type": "lora",
            "cutoff_len": 64,
            "overwrite_cache": True,
            "output_dir": out_dir,
            "report_to": "none",
        }
    )
    tokenizer_module = load_tokenizer(model_args)  # USE_OPENMIND_HUB: openmind.utils.hub.snapshot_download
    tokenizer = tokenizer_module["tokenizer"]
    template = get_template_and_fix_tokenizer(tokenizer, data_args)
    dataset = get_dataset(template, model_args, data_args, training_args, stage="sft", **tokenizer_module)
    model = load_model(tokenizer, model_args, finetuning_args, is_trainable=False)
    train = dataset["train_dataset"]
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().to(torch.float32).numpy().tobytes())
    return {
        "openmind_version": openmind.__version__,
        "model_path": model_args.model_name_or_path,
        "model_class": type(model).__name__,
        "dtype": str(model.dtype).removeprefix("torch."),
        "weights_sha256": digest.hexdigest(),
        "rows": len(train),
        "first_input_ids": list(train[0]["input_ids"]),
        "first_labels": list(train[0]["labels"]),
    }


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(*sys.argv[1:4])), flush=True)
