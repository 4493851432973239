#!/usr/bin/env bash
# Create the LLaMA-Factory comparison venv (benchmarks only; never an openmind dependency).
# usage: bash bench/setup_llamafactory_venv.sh [VENV]        (default: .venv-lf beside this repo's noxfile)
# LLaMA-Factory 0.9.5 pins torchaudio/torchvision releases that do not accept the CPU torch 2.13:
# install it --no-deps, then its other requirements with torch==2.13.0 pinned, then PyPI's torchaudio
# without dependencies (its compiled extension is kept from loading by bench/data_runners.py).
# See ENVIRONMENT.md ("LLaMA-Factory as a comparison peer"). Takes ~270 s and ~2.1 GB.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${1:-$ROOT/.venv-lf}"
python3.11 -m venv "$VENV"
PIP="$VENV/bin/pip"
"$PIP" install -q llamafactory==0.9.5 --no-deps
"$PIP" install -q torch==2.13.0 "accelerate>=1.3.0,<=1.11.0" "av>=10.0.0,<=16.0.0" "datasets>=2.16.0,<=4.0.0" einops \
  fastapi fire "gradio>=4.38.0,<=5.50.0" "matplotlib>=3.7.0" modelscope numpy omegaconf packaging pandas \
  "peft>=0.18.0,<=0.18.1" protobuf pydantic pyyaml safetensors scipy sentencepiece sse-starlette tiktoken \
  "torchdata>=0.10.0,<=0.11.0" "transformers>=4.55.0,<=5.6.0,!=4.52.0,!=4.57.0" "trl>=0.18.0,<=0.24.0" \
  "tyro<0.9.0" uvicorn
"$PIP" install -q --no-deps torchaudio
echo "LLaMA-Factory venv ready: $VENV"
