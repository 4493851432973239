"""Chat / text generation through mindformers (Ascend). Import-guarded: without mindformers or an
Ascend device, loading raises OM-MS006 with what to install; ``openmind list`` marks the backend
"needs Ascend". The framework-neutral parts (tokenizer, stop strings, streaming) are the native
pipeline's; only the model and its ``generate`` come from mindformers."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from openmind.core.pipelines.base import LoadOptions
from openmind.ms.errors import MS_MINDFORMERS
from openmind.ms.pipelines.generation import MindSporeCausalLM


def require_mindformers(what: str) -> Any:
    """Import mindformers on an Ascend machine, or raise OM-MS006 saying which part is missing."""
    from importlib.util import find_spec

    from openmind.ms import runtime

    if find_spec("mindformers") is None:
        raise MS_MINDFORMERS.error(f"{what} needs mindformers, which is not installed")
    if "Ascend" not in runtime.available_targets():
        raise MS_MINDFORMERS.error(
            f"{what} needs an Ascend NPU; MindSpore sees {', '.join(runtime.available_targets())}"
        )
    try:
        import mindformers
    except Exception as exc:  # noqa: BLE001 - any import failure is one coded error
        raise MS_MINDFORMERS.error(f"import mindformers failed: {type(exc).__name__}: {exc}") from exc
    return mindformers


class MindFormersCausalLM(MindSporeCausalLM):
    backend = "mindformers"

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> MindFormersCausalLM:  # pragma: no cover - Ascend only
        mindformers = require_mindformers("the mindformers chat pipeline")
        from openmind.ms import runtime
        from openmind.ms.mindformers.checkpoint import hf_to_ckpt
        from openmind.ms.mindformers.translate import model_config
        from openmind.ms.pipelines.loading import check_folder, load_tokenizer

        config = check_folder(model_dir, options)
        tokenizer = load_tokenizer(model_dir, options, padding_side="left")
        device = runtime.set_device(options.device if options.device != "auto" else "npu:0")
        work = Path(tempfile.mkdtemp(prefix="openmind-mf-"))
        ckpt = hf_to_ckpt(model_dir, work / "model.ckpt", dtype="float16")
        section = model_config(config, dtype=options.dtype)
        (work / "model.json").write_text(json.dumps(section), encoding="utf-8")
        mf_config = getattr(mindformers, section["model_config"]["type"])(
            **{k: v for k, v in section["model_config"].items() if k != "type"}
        )
        model = getattr(mindformers, section["arch"]["type"])(mf_config)
        import mindspore as ms

        ms.load_param_into_net(model, ms.load_checkpoint(str(ckpt)))
        return cls(model, tokenizer, task=options.task, model_dir=model_dir, device=device, dtype="float16")

    def __init__(self, model: Any, tokenizer: Any, *, task: str, model_dir: str, device: str, dtype: str) -> None:
        from types import SimpleNamespace

        from openmind.ms.models.config import LlamaConfig
        from openmind.ms.pipelines.loading import read_config

        # the native pipeline's bookkeeping (eos, pad, defaults, locks) around mindformers' model
        shim = SimpleNamespace(config=LlamaConfig.from_dict(read_config(model_dir)), _openmind_decoder=None)
        super().__init__(shim, tokenizer, task=task, model_dir=model_dir, device=device, dtype=dtype)
        self.mf_model = model

    def forward(self, features: dict, params: Any) -> dict:  # pragma: no cover - Ascend only
        decoding = self.decoding(params, features["eos_ids"])
        rows = features["rows"]
        outputs = self.mf_model.generate(
            rows,
            max_new_tokens=decoding.max_new_tokens,
            do_sample=decoding.do_sample,
            temperature=decoding.temperature,
            top_k=decoding.top_k,
            top_p=decoding.top_p,
            repetition_penalty=decoding.repetition_penalty,
        )
        eos = set(features["eos_ids"])
        tokens, ended = [], []
        for row, out in zip(rows, outputs, strict=True):
            new = [int(t) for t in list(out)[len(row) :]]
            cut = next((i for i, t in enumerate(new) if t in eos), None)
            tokens.append(new if cut is None else new[: cut + 1])
            ended.append(cut is not None)
        n = len(rows)
        from openmind.nlp.pipelines.stopping import StopText

        return {
            "tokens": tokens,
            "logprobs": [[(t, None, []) for t in row] for row in tokens],
            "ended": ended,
            "cancelled": [False] * n,
            "stopped_on_text": [False] * n,
            "texts": [StopText(features["text_stops"]) for _ in range(n)],
            "features": features,
        }
