#!/usr/bin/env bash
# The GPU rows of issue 20 (bench/bench_gpu.py) on a machine lent by the `device` tool: its image has
# CUDA PyTorch (python3 = /opt/torch/.venv/bin/python3) but none of openmind's packages, and no index.
#
#   bash bench/gpu_check.sh --prepare    # here: openmind's wheels + what the image lacks -> .gpu-wheels/
#   run(command="bash bench/gpu_check.sh", carry=[".gpu-wheels"], timeout_s=540)    # there: one call
#
# There it installs the carried wheels without dependencies (the image already has torch, transformers,
# accelerate, peft, numpy, pyarrow, jinja2, httpx, uvloop, aiohttp), runs `bench/run.py gpu` and copies
# bench/results.md and the log to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
WHEELS=.gpu-wheels
if [ "${1:-}" = "--prepare" ]; then
  rm -rf "$WHEELS" && mkdir -p "$WHEELS" || exit 1
  for pkg in core nlp data pt; do
    uv build -q --wheel --out-dir "$WHEELS" "packages/openmind-$pkg" || exit 1
  done
  # the image's Python is 3.12 on x86-64; the versions of constraints/test.txt, and what `pip install --dry-run
  # --report` adds to a venv holding the image's packages (opentelemetry-api for fastapi, toml for wordllama)
  python3 -m pip download -q --no-deps --python-version 3.12 --only-binary=:all: \
    --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    -d "$WHEELS" fastapi==0.165.0 opentelemetry-api==1.45.2 starlette==1.10.0 uvicorn==0.54.0 httptools==0.9.0 \
    pydantic==2.14.4 pydantic-core==2.50.5 annotated-types typing-inspection datasets==5.2.0 dill multiprocess \
    wordllama toml || exit 1
  du -sh "$WHEELS"
  exit 0
fi
[ -d "$WHEELS" ] || { echo "no $WHEELS: run 'bash bench/gpu_check.sh --prepare' first and carry it" >&2; exit 2; }
PY=${PYTHON:-python3}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
nvidia-smi -L 2>&1 | head -2
$PY -m pip install -q --no-deps --no-index "$WHEELS"/*.whl || exit 1
$PY -c "import torch, transformers; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'transformers', transformers.__version__)"
PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false $PY bench/run.py gpu 2>&1 | tee "$OUT/gpu.log"
rc=${PIPESTATUS[0]}
cp bench/results.md "$OUT/results.md"
exit "$rc"
