"""`openmind eval` on a real (tiny, random) Llama: the accuracy equals the one computed
independently from raw transformers log-likelihoods, item by item; the CLI writes the table,
JSON and Markdown."""

from __future__ import annotations

import csv
import json

import pytest

from openmind.nlp.eval.runner import TARGET_DELIMITER, evaluate, mc_context
from openmind.nlp.eval.tasks import LETTERS, load_task


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from openmind.pt.testing import tiny_llama

    return str(tiny_llama(tmp_path_factory.mktemp("eval") / "tiny-llama", seed=5))


@pytest.fixture(scope="module")
def mmlu(tmp_path_factory):
    root = tmp_path_factory.mktemp("tasks") / "mini_mmlu"
    rows = {
        "arithmetic": [
            [f"What is {i} + {i + 1}?", str(2 * i), str(2 * i + 1), str(2 * i + 2), str(i), "B"] for i in range(6)
        ],
        "geography": [
            ["Capital of France?", "Paris", "Rome", "Berlin", "Madrid", "A"],
            ["Capital of Italy?", "Paris", "Rome", "Berlin", "Madrid", "B"],
            ["Largest ocean?", "Atlantic", "Indian", "Arctic", "Pacific", "D"],
        ],
    }
    for subject, items in rows.items():
        for split, chunk in (("dev", items[:1]), ("test", items[1:])):
            path = root / split / f"{subject}_{split}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w", newline="") as fh:
                csv.writer(fh).writerows(chunk)
    return root


def raw_loglikelihood(model, tokenizer, context: str, continuation: str) -> float:
    """lm-eval's recipe with plain transformers: encode context+continuation, score the tail."""
    import torch

    whole = tokenizer(context + continuation)["input_ids"]
    ctx = tokenizer(context)["input_ids"]
    ids = torch.tensor([whole])
    with torch.no_grad():
        logprobs = torch.log_softmax(model(ids).logits[0].float(), dim=-1)
    return sum(float(logprobs[pos - 1, whole[pos]]) for pos in range(len(ctx), len(whole)))


def test_accuracy_matches_raw_transformers(tiny_model, mmlu):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from openmind import pipeline
    from openmind.nlp.eval.model import PipelineEvalModel

    task = load_task(str(mmlu))
    model = PipelineEvalModel(pipeline("chat", model=tiny_model, framework="pt", device="cpu"), batch_size=4)
    results = evaluate(model, [task], n_shot=1, batch_size=3, progress=False)

    raw = AutoModelForCausalLM.from_pretrained(tiny_model).eval()
    tok = AutoTokenizer.from_pretrained(tiny_model)
    correct = {}
    predictions = []
    for subject in task.subjects:
        correct[subject.name] = 0
        for item in subject.items:
            context = mc_context(task, subject, item, 1)
            lls = [raw_loglikelihood(raw, tok, context, TARGET_DELIMITER + LETTERS[i]) for i in range(4)]
            pred = max(range(4), key=lambda i: (lls[i], -i))
            predictions.append((LETTERS[pred], lls))
            correct[subject.name] += pred == item.answer
    samples = results["samples"]["mini_mmlu"]
    assert [s["prediction"] for s in samples] == [p for p, _ in predictions]
    for sample, (_, lls) in zip(samples, predictions):
        assert sample["loglikelihoods"] == pytest.approx(lls, abs=1e-3)
    t = results["tasks"]["mini_mmlu"]
    assert t["subjects"]["arithmetic"]["correct"] == correct["arithmetic"]
    assert t["subjects"]["geography"]["correct"] == correct["geography"]
    assert t["score"] == sum(correct.values()) / 7 and t["n"] == 7


def test_eval_cli_writes_table_json_markdown(tiny_model, mmlu, tmp_path, capsys):
    from openmind.core.cli.main import main

    out = tmp_path / "results"
    code = main(
        [
            "eval",
            "--model",
            tiny_model,
            "--tasks",
            str(mmlu),
            "--n-shot",
            "0",
            "--limit",
            "2",
            "--device",
            "cpu",
            "--eval-output-dir",
            str(out),
        ]
    )
    assert code == 0
    saved = json.loads((out / "results.json").read_text())
    task = saved["tasks"]["mini_mmlu"]
    assert task["n"] == 4 and set(task["subjects"]) == {"arithmetic", "geography"}
    assert saved["framework"] == "pt"
    printed = capsys.readouterr().out
    assert "mini_mmlu" in printed and "arithmetic" in printed and "acc" in printed
    assert "| mini_mmlu | (all) | acc |" in (out / "results.md").read_text()
    assert len((out / "samples_mini_mmlu.jsonl").read_text().splitlines()) == 4
