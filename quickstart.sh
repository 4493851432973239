#!/usr/bin/env bash
# The README's first command: set up a venv with openmind (PyTorch, CPU) and run the quickstart:
# a real end-to-end run on an embedded default model and dataset.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# packages/openmind-core is the `openmind` distribution (it was `openmind-core`, the name of an
# unrelated project on PyPI): drop a stale install of the old name, which would own openmind/ too
.venv/bin/python -m pip uninstall -q -y openmind-core >/dev/null 2>&1 || true
.venv/bin/python -m pip install -q --disable-pip-version-check -c constraints/test.txt \
  -e packages/openmind-core -e packages/openmind-nlp -e packages/openmind-data -e packages/openmind-mm \
  -e packages/openmind-pt wordllama fastapi uvicorn openai tensorboard matplotlib
exec .venv/bin/openmind quickstart "$@"
