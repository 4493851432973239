"""LLaMA-Factory's OpenAI-style API server for ``bench_serve.py`` (run in the ``.venv-lf`` venv).

    .venv-lf/bin/python bench/serve_runners.py MODEL_DIR PORT

Starts ``llamafactory-cli api`` in-process (Hugging Face engine, ``llama2`` template, its default
``MAX_CONCURRENT=1``) after keeping torchaudio's CUDA extension from loading (ENVIRONMENT.md).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

if __name__ == "__main__":
    from data_runners import _torchaudio_without_extension

    model, port = sys.argv[1:3]
    _torchaudio_without_extension()
    os.environ["API_PORT"] = port
    os.environ["API_HOST"] = "127.0.0.1"
    sys.argv = [sys.argv[0], "--model_name_or_path", model, "--template", "llama2", "--infer_backend", "huggingface"]
    from llamafactory.api.app import run_api

    run_api()
