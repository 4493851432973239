"""LLaMA-Factory's openMind hub mode against this project: its real package (0.9.5, in its own venv
built by ``bench/setup_llamafactory_venv.sh``, never a dependency of ours) with ``USE_OPENMIND_HUB=1``
loads a model (``openmind.utils.hub.snapshot_download``) and a dataset (``openmind.OmDataset``)
through this project's hub layer from a loopback Modelers hub, and gets the same weights and rows.

Slow (building the venv takes ~5 min and 2.1 GB; it is kept in ``.venv-lf`` or ``$OPENMIND_LF_VENV``
and reused): run by ``nox -s llamafactory_hub``, which is not in the default set. Skipped only when
the LLaMA-Factory venv cannot be built, and then the reason is printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HUB_TESTS = ROOT / "packages" / "openmind-core" / "tests" / "hub"
VENV = Path(os.environ.get("OPENMIND_LF_VENV") or ROOT / ".venv-lf")

pytest.importorskip("torch")
trustme = pytest.importorskip("trustme")


def _has_llamafactory(python: Path) -> bool:
    if not python.exists():
        return False
    probe = subprocess.run([str(python), "-c", "import llamafactory.hparams"], capture_output=True, timeout=600)
    return probe.returncode == 0


@pytest.fixture(scope="module")
def lf_python():
    python = VENV / "bin" / "python"
    if not _has_llamafactory(python):
        build = subprocess.run(
            ["bash", str(ROOT / "bench" / "setup_llamafactory_venv.sh"), str(VENV)],
            capture_output=True,
            text=True,
            timeout=3600,
        )
        if build.returncode != 0 or not _has_llamafactory(python):
            reason = f"the LLaMA-Factory venv cannot be built ({VENV}): " + (build.stderr or build.stdout)[-2000:]
            print(reason, file=sys.stderr)
            pytest.skip(reason)
    # this project's `openmind` distribution (packages/openmind-core) and the Modelers client, into that venv
    pip = [str(python), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "--no-deps", "-e", str(ROOT / "packages" / "openmind-core")], check=True, timeout=1200)
    subprocess.run(
        [*pip, "openmind-hub>=0.9", "requests>=2.28", "pluggy>=1.3", "pyyaml>=6", "packaging>=23", "tqdm>=4.60"],
        check=True,
        timeout=1200,
    )
    return python


@pytest.fixture
def modelers_hub(tmp_path):
    """A loopback Modelers hub over TLS (openmind-hub insists on https) with a test certificate."""
    import ssl

    sys.path.insert(0, str(HUB_TESTS))
    try:
        from server import HubServer, HubState
    finally:
        sys.path.remove(str(HUB_TESTS))
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert.configure_cert(context)
    state = HubState()
    server = HubServer(state, tls=context).start()
    yield state, server.url, ca_file
    server.stop()


def _weights_digest(folder: Path, dtype: str) -> str:
    import hashlib

    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=getattr(torch, dtype.removeprefix("torch.")))
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().to(torch.float32).numpy().tobytes())
    return digest.hexdigest()


def test_llamafactory_loads_model_and_dataset_through_openmind_hub(lf_python, modelers_hub, tmp_path):
    from transformers import AutoTokenizer

    from openmind.pt.testing import tiny_llama

    state, url, ca_file = modelers_hub
    model = Path(tiny_llama(tmp_path / "tiny-llama", tokenizer="llama2"))
    state.add_repo("org/tiny-llama", {p.relative_to(model).as_posix(): p for p in model.rglob("*") if p.is_file()})
    rows = [
        {"instruction": "Translate to French", "input": "Good morning", "output": "Bonjour"},
        {"instruction": "What is 2+2?", "input": "", "output": "4"},
        {"instruction": "Name a colour", "input": "", "output": "Blue"},
    ]
    data_file = tmp_path / "alpaca_demo.json"
    data_file.write_text(json.dumps(rows), encoding="utf-8")
    state.add_repo("org/alpaca_demo", {"alpaca_demo.json": data_file})
    dataset_dir = tmp_path / "data"
    dataset_dir.mkdir()
    (dataset_dir / "dataset_info.json").write_text(json.dumps({"om_alpaca": {"om_hub_url": "org/alpaca_demo"}}))
    env = {
        **os.environ,
        "USE_OPENMIND_HUB": "1",
        "OPENMIND_HUB_ENDPOINT": url,
        "REQUESTS_CA_BUNDLE": str(ca_file),
        "OPENMIND_CACHE": str(tmp_path / "om-cache"),
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_DATASETS_CACHE": str(tmp_path / "hf-datasets"),
        "HOME": str(tmp_path / "home"),
        "HF_HUB_OFFLINE": "1",  # nothing may come from Hugging Face: the openMind hub mode serves all
    }
    env.pop("OPENMIND_OFFLINE", None)
    env.pop("OPENMIND_HUB", None)
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [str(lf_python), str(Path(__file__).with_name("lf_openmind_hub_probe.py")), "org/tiny-llama", str(dataset_dir),
         str(tmp_path / "out")],
        capture_output=True, text=True, env=env, timeout=1800,
    )  # fmt: skip
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert done.returncode == 0 and line, done.stderr[-4000:]
    result = json.loads(line[len("RESULT ") :])
    # the model came through openmind's hub layer (its cache), with the very weights served
    assert str(tmp_path / "om-cache") in result["model_path"] and result["model_class"] == "LlamaForCausalLM"
    assert result["weights_sha256"] == _weights_digest(model, result.get("dtype", "float32"))
    assert int(result["openmind_version"].split(".")[0]) >= 2  # LLaMA-Factory checks openmind>=0.8.0
    # and the dataset: every row, tokenised by LLaMA-Factory's llama2 template
    assert result["rows"] == len(rows)
    tokenizer = AutoTokenizer.from_pretrained(str(model))
    prompt = tokenizer.decode(result["first_input_ids"], skip_special_tokens=True)
    answer = tokenizer.decode([t for t in result["first_labels"] if t != -100], skip_special_tokens=True)
    assert "Translate to French" in prompt and "Good morning" in prompt and answer.strip() == "Bonjour"
    paths = [str(entry) for entry in state.log]
    assert any("tiny-llama" in p for p in paths) and any("alpaca_demo" in p for p in paths)
