"""`openmind chat RUN_DIR` chats with what the run trained, not with the base model it started from."""

import os
import subprocess
import sys
from pathlib import Path

import yaml


def test_chat_on_a_full_run_folder_uses_its_weights(tmp_path):
    import openmind
    from openmind.pt.testing import tiny_llama

    base = tiny_llama(tmp_path / "base", seed=0)
    run = tiny_llama(tmp_path / "run", seed=1)  # stands for fully fine-tuned weights
    (run / "openmind_args.yaml").write_text(yaml.safe_dump({"model": {"model": str(base)}}))
    prompt = "Reverse 12345"
    want = openmind.pipeline("chat", model=str(run), max_new_tokens=6)(prompt)["content"].strip()
    base_answer = openmind.pipeline("chat", model=str(base), max_new_tokens=6)(prompt)["content"].strip()
    assert want != base_answer  # the two models differ, so the check below can fail
    exe = Path(sys.executable).with_name("openmind")
    out = subprocess.run(
        [str(exe), "chat", str(run), "--max-new-tokens", "6"],
        input=f"{prompt}\n/exit\n",
        capture_output=True,
        text=True,
        env=dict(os.environ, OMP_NUM_THREADS="1", OPENMIND_CACHE=str(tmp_path / "cache")),
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].strip() == want
