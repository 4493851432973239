"""End to end against the real CLI: `openmind deploy` in a subprocess on loopback, driven by the
real openai client, curl and lm-eval's own OpenAI-compatible client (local-completions), whose
log-likelihood results match `openmind eval` on the same model and items."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest

KEY = "sk-e2e"
SUBJECT = "arithmetic"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from openmind.pt.testing import tiny_llama

    return str(tiny_llama(tmp_path_factory.mktemp("e2e") / "tiny", seed=11))


@pytest.fixture(scope="module")
def deployed(tiny_model, tmp_path_factory):
    port = free_port()
    log = tmp_path_factory.mktemp("deploy") / "server.log"
    exe = Path(sys.executable).with_name("openmind")
    cmd = [
        str(exe),
        "deploy",
        "--model",
        tiny_model,
        "--port",
        str(port),
        "--api-key",
        KEY,
        "--device",
        "cpu",
        "--served-model-name",
        "tiny",
        "--max-n",
        "2",
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "server did not start: " + log.read_text()
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def client(url, key=KEY):
    return openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0, timeout=60)


def test_openai_client_chat_stream_completions_auth(deployed):
    c = client(deployed)
    assert [m.id for m in c.models.list().data] == ["tiny"]
    messages = [{"role": "user", "content": "Say something"}]
    whole = c.chat.completions.create(model="tiny", messages=messages, max_tokens=8, temperature=0)
    assert whole.usage.completion_tokens == 8
    streamed = "".join(
        ch.choices[0].delta.content or ""
        for ch in c.chat.completions.create(model="tiny", messages=messages, max_tokens=8, temperature=0, stream=True)
        if ch.choices
    )
    assert streamed == whole.choices[0].message.content
    comp = c.completions.create(
        model="tiny", prompt="One two three", max_tokens=3, logprobs=2, echo=True, temperature=0
    )
    lp = comp.choices[0].logprobs
    assert lp.token_logprobs[0] is None and all(x < 0 for x in lp.token_logprobs[1:])
    assert len(lp.tokens) == comp.usage.prompt_tokens + 3
    with pytest.raises(openai.AuthenticationError):
        client(deployed, "wrong").chat.completions.create(model="tiny", messages=messages)
    with pytest.raises(openai.BadRequestError):
        c.chat.completions.create(model="tiny", messages=messages, n=3)


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl(deployed):
    def curl(*args):
        out = subprocess.run(["curl", "-s", "-w", "\n%{http_code}", *args], capture_output=True, text=True, timeout=60)
        body, _, code = out.stdout.rpartition("\n")
        return int(code), body

    code, body = curl(deployed + "/health")
    assert code == 200 and json.loads(body)["status"] == "ok"
    auth = ["-H", f"Authorization: Bearer {KEY}", "-H", "Content-Type: application/json"]
    code, body = curl(
        deployed + "/v1/chat/completions",
        *auth,
        "-d",
        '{"model": "tiny", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4}',
    )
    assert code == 200 and json.loads(body)["usage"]["completion_tokens"] == 4
    code, body = curl(deployed + "/v1/chat/completions", *auth, "-d", '{"model": "tiny", "messages": ')
    assert code == 400 and "malformed JSON" in json.loads(body)["error"]["message"]
    code, body = curl(deployed + "/v1/chat/completions", *auth, "-d", '{"messages": [{"role": "user", "content": 5}]}')
    assert code == 400 and json.loads(body)["error"]["param"].startswith("messages.0.content")
    code, body = curl(deployed + "/v1/models")
    assert code == 401 and json.loads(body)["error"]["code"] == "invalid_api_key"
    code, body = curl(
        "-N",
        deployed + "/v1/chat/completions",
        *auth,
        "-d",
        '{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3, "stream": true}',
    )
    events = [line for line in body.splitlines() if line.startswith("data: ")]
    assert code == 200 and events[-1] == "data: [DONE]" and len(events) >= 3


ITEMS = [
    {
        "question": f"What is {a} + {b}?",
        "choices": [str(a + b - 1), str(a + b), str(a + b + 1), str(a * b)],
        "answer": 1,
    }
    for a, b in [(1, 2), (3, 4), (5, 6), (2, 9), (7, 7), (4, 8)]
]


def write_tasks(folder: Path) -> tuple[Path, Path]:
    """The same items as an MMLU-layout folder (openmind eval) and an lm-eval YAML task."""
    import csv

    test = folder / "mini" / "test" / f"{SUBJECT}_test.csv"
    test.parent.mkdir(parents=True)
    with open(test, "w", newline="") as fh:
        csv.writer(fh).writerows([[i["question"], *i["choices"], "ABCD"[i["answer"]]] for i in ITEMS])
    data = folder / "items.jsonl"
    data.write_text("\n".join(json.dumps(i) for i in ITEMS))
    lm_dir = folder / "lm_tasks"
    lm_dir.mkdir()
    (lm_dir / "om_mini.yaml").write_text(
        "task: om_mini\n"
        "dataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    test: {data}\n"
        "test_split: test\n"
        "output_type: multiple_choice\n"
        f'description: "The following are multiple choice questions (with answers) about {SUBJECT}.\\n\\n"\n'
        'doc_to_text: "{{question.strip()}}\\nA. {{choices[0]}}\\nB. {{choices[1]}}\\nC. {{choices[2]}}\\nD. {{choices[3]}}\\nAnswer:"\n'
        'doc_to_choice: ["A", "B", "C", "D"]\n'
        "doc_to_target: answer\n"
        'target_delimiter: " "\n'
        "metric_list:\n  - metric: acc\n    aggregation: mean\n    higher_is_better: true\n"
    )
    return folder / "mini", lm_dir


@pytest.mark.slow
def test_lm_eval_local_completions_matches_openmind_eval(deployed, tiny_model, tmp_path, monkeypatch):
    lm_eval = pytest.importorskip("lm_eval")  # the integration session installs it
    from lm_eval.tasks import TaskManager

    from openmind.core.cli.main import main

    mini, lm_dir = write_tasks(tmp_path)
    out = tmp_path / "native"
    assert (
        main(
            [
                "eval",
                "--model",
                tiny_model,
                "--tasks",
                str(mini),
                "--n-shot",
                "0",
                "--device",
                "cpu",
                "--eval-output-dir",
                str(out),
            ]
        )
        == 0
    )
    native = [json.loads(line) for line in (out / "samples_mini.jsonl").read_text().splitlines()]
    native_acc = json.loads((out / "results.json").read_text())["tasks"]["mini"]["score"]

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    raw = lm_eval.simple_evaluate(
        model="local-completions",
        model_args=(
            f"base_url={deployed}/v1/completions,model=tiny,tokenizer={tiny_model},"
            "tokenizer_backend=huggingface,add_bos_token=True,num_concurrent=1,max_retries=1,batch_size=4"
        ),
        tasks=["om_mini"],
        num_fewshot=0,
        task_manager=TaskManager(include_path=str(lm_dir)),
        log_samples=True,
    )
    samples = sorted(raw["samples"]["om_mini"], key=lambda s: s["doc_id"])
    assert len(samples) == len(native) == len(ITEMS)
    for theirs, ours in zip(samples, native):
        lls = [float(r[0]) for r in theirs["filtered_resps"]]
        assert lls == pytest.approx(ours["loglikelihoods"], abs=1e-3)
    assert raw["results"]["om_mini"]["acc,none"] == pytest.approx(native_acc)


@pytest.mark.slow
def test_eval_lm_eval_backend_in_process(tiny_model, tmp_path):
    pytest.importorskip("lm_eval")
    from openmind.core.cli.main import main

    mini, lm_dir = write_tasks(tmp_path)
    out = tmp_path / "harness"
    assert (
        main(
            [
                "eval",
                "--model",
                tiny_model,
                "--tasks",
                "om_mini",
                "--task-dir",
                str(lm_dir),
                "--n-shot",
                "0",
                "--eval-backend",
                "lm-eval",
                "--device",
                "cpu",
                "--eval-output-dir",
                str(out),
            ]
        )
        == 0
    )
    harness = json.loads((out / "results.json").read_text())["tasks"]["om_mini"]
    assert (
        main(
            [
                "eval",
                "--model",
                tiny_model,
                "--tasks",
                str(mini),
                "--n-shot",
                "0",
                "--device",
                "cpu",
                "--eval-output-dir",
                str(tmp_path / "native"),
            ]
        )
        == 0
    )
    native = json.loads((tmp_path / "native" / "results.json").read_text())["tasks"]["mini"]
    assert harness["metric"] == "acc" and harness["n"] == len(ITEMS)
    assert harness["score"] == pytest.approx(native["score"])
