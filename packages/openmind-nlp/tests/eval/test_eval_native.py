"""Evaluation without a framework: task layouts, located errors, scorers, the runner with known
log-likelihoods, reports."""

from __future__ import annotations

import json

import pytest

from openmind.core.errors import OpenMindError
from openmind.nlp.eval import report
from openmind.nlp.eval.runner import evaluate, mc_context
from openmind.nlp.eval.scorers import exact_match, pick_choice, regex_match, rouge
from openmind.nlp.eval.tasks import load_task


def write_csv(path, rows, header=None):
    import csv

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        if header:
            w.writerow(header)
        w.writerows(rows)


@pytest.fixture
def mmlu(tmp_path):
    root = tmp_path / "mmlu"
    write_csv(root / "data/dev/algebra_dev.csv", [["1+1?", "1", "2", "3", "4", "B"], ["2+2?", "4", "5", "6", "7", "A"]])
    write_csv(
        root / "data/test/algebra_test.csv", [["3+3?", "5", "6", "7", "8", "B"], ["1+2?", "3", "4", "5", "6", "A"]]
    )
    write_csv(root / "data/test/history_test.csv", [["Year of X?", "1066", "1492", "1789", "1914", "C"]])
    return root


def test_mmlu_layout(mmlu):
    task = load_task(str(mmlu))
    assert task.layout == "mmlu" and task.language == "en"
    assert [(s.name, len(s.items), len(s.shots)) for s in task.subjects] == [("algebra", 2, 2), ("history", 1, 0)]
    algebra = task.subjects[0]
    assert algebra.items[0].answer == 1 and algebra.items[0].choices == ["5", "6", "7", "8"]
    context = mc_context(task, algebra, algebra.items[0], n_shot=1)
    assert context == (
        "The following are multiple choice questions (with answers) about algebra.\n\n"
        "1+1?\nA. 1\nB. 2\nC. 3\nD. 4\nAnswer: B\n\n3+3?\nA. 5\nB. 6\nC. 7\nD. 8\nAnswer:"
    )


def test_ceval_layout_uses_val_when_test_has_no_answers(tmp_path):
    root = tmp_path / "ceval"
    header = ["id", "question", "A", "B", "C", "D", "answer", "explanation"]
    write_csv(root / "dev/law_dev.csv", [["0", "法律题", "甲", "乙", "丙", "丁", "A", "因为"]], header)
    write_csv(root / "val/law_val.csv", [["0", "问题一", "甲", "乙", "丙", "丁", "D", ""]], header)
    write_csv(root / "test/law_test.csv", [["0", "问题二", "甲", "乙", "丙", "丁", "", ""]], header[:-1] + [""])
    task = load_task(str(root))
    assert task.layout == "ceval" and task.language == "zh"
    law = task.subjects[0]
    assert law.items[0].question == "问题一" and law.items[0].answer == 3
    assert mc_context(task, law, law.items[0], 1).startswith(
        "以下是中国关于law的单项选择题，请选出其中的正确答案。\n\n法律题\nA. 甲"
    )
    assert mc_context(task, law, law.items[0], 1).endswith("问题一\nA. 甲\nB. 乙\nC. 丙\nD. 丁\n答案：")


def test_cmmlu_layout(tmp_path):
    root = tmp_path / "cmmlu"
    header = ["", "Question", "A", "B", "C", "D", "Answer"]
    write_csv(root / "dev/arts.csv", [["0", "艺术?", "a", "b", "c", "d", "C"]], header)
    write_csv(
        root / "test/arts.csv", [["0", "问?", "a", "b", "c", "d", "B"], ["1", "再问?", "a", "b", "c", "d", "D"]], header
    )
    task = load_task("cmmlu", task_dir=tmp_path)
    assert task.layout == "cmmlu" and [i.answer for i in task.subjects[0].items] == [1, 3]


def test_bad_rows_are_located(tmp_path):
    write_csv(tmp_path / "t/test/a_test.csv", [["q", "1", "2", "3", "4", "B"], ["q2", "1", "2", "3", "4", "E"]])
    with pytest.raises(OpenMindError) as info:
        load_task(str(tmp_path / "t"))
    assert info.value.code == "OM-E002" and info.value.location.endswith("a_test.csv:2 column answer")
    (tmp_path / "g.jsonl").write_text('{"input": "x", "target": "y"}\n{"input": "x"}\n')
    with pytest.raises(OpenMindError) as info:
        load_task(str(tmp_path / "g.jsonl"))
    assert info.value.code == "OM-E002" and info.value.location.endswith("g.jsonl:2 field target")
    (tmp_path / "bad.yaml").write_text("name: x\ntype: generation\ndata: g.jsonl\nmetric: bleu\n")
    with pytest.raises(OpenMindError) as info:
        load_task(str(tmp_path / "bad.yaml"))
    assert info.value.code == "OM-E003" and "bleu" in info.value.message
    with pytest.raises(OpenMindError) as info:
        load_task("no-such-task")
    assert info.value.code == "OM-E001"


def test_scorers():
    assert pick_choice([-3.0, -1.0, -1.0, -2.0]) == 1  # first of ties, like lm-eval's argmax
    assert exact_match("  The Answer. ", ["answer"]) == 1.0 and exact_match("answers", ["answer"]) == 0.0
    assert regex_match("so the answer is 42.", ["42"], r"answer is (-?\d+)") == 1.0
    assert regex_match("so the answer is 41.", ["42"], r"answer is (-?\d+)") == 0.0
    assert regex_match("no number", ["42"], r"answer is (-?\d+)") == 0.0
    r = rouge("the cat sat on the mat", ["the cat sat on a mat"])
    # rouge-score's own numbers: 5 of 6 unigrams match each way; LCS 5
    assert r["rouge1"] == pytest.approx(5 / 6) and r["rougeL"] == pytest.approx(5 / 6)
    assert rouge("今天天气很好", ["今天天气不错"])["rouge1"] == pytest.approx(4 / 6)
    assert rouge("完全不同", ["毫无关系"])["rougeL"] == 0.0


class KnownModel:
    """Log-likelihoods known in advance: the right letter scores -1, others -2 - position, except
    for questions marked "(wrong)", where the model prefers option D."""

    name = "known"

    def __init__(self, task):
        self.answers = {}
        for subject in task.subjects:
            for item in subject.items:
                self.answers[item.question if hasattr(item, "question") else item.input] = item
        self.calls = 0

    def loglikelihood(self, requests):
        self.calls += 1
        out = []
        for context, continuation in requests:
            question = context.split("\n\n")[-1].split("\nA. ")[0]
            item = self.answers[question]
            letter = "ABCD".index(continuation.strip())
            preferred = 3 if "(wrong)" in question else item.answer
            out.append((-1.0 if letter == preferred else -2.0 - letter, letter == preferred))
        return out

    def generate(self, prompts, *, max_tokens, stop):
        return [p.split("\n")[-1].upper() if isinstance(p, str) else "?" for p in prompts]


def test_runner_accuracy_is_exact_with_known_loglikelihoods(tmp_path):
    rows = [[f"q{i}{' (wrong)' if i % 4 == 0 else ''}", "a", "b", "c", "d", "ABC"[i % 3]] for i in range(12)]
    write_csv(tmp_path / "mc/test/s1_test.csv", rows[:8])
    write_csv(tmp_path / "mc/test/s2_test.csv", rows[8:])
    task = load_task(str(tmp_path / "mc"))
    model = KnownModel(task)
    results = evaluate(model, [task], n_shot=0, batch_size=3, progress=False)
    t = results["tasks"]["mc"]
    # wrong on q0, q4, q8 (marked) -> 9 / 12; s1: q0,q4 wrong of 8; s2: q8 wrong of 4
    assert t["score"] == 9 / 12 and t["n"] == 12
    assert t["subjects"]["s1"] == {"score": 6 / 8, "n": 8, "correct": 6}
    assert t["subjects"]["s2"] == {"score": 3 / 4, "n": 4, "correct": 3}
    assert t["macro"] == (6 / 8 + 3 / 4) / 2
    assert model.calls == 3 + 2  # batches of 3 items per subject
    limited = evaluate(KnownModel(task), [task], n_shot=0, limit=2, progress=False)["tasks"]["mc"]
    assert limited["n"] == 4 and limited["subjects"]["s1"]["correct"] == 1  # q0 wrong, q1 right


def test_generation_task_and_reports(tmp_path):
    (tmp_path / "g.jsonl").write_text(
        "\n".join(json.dumps(r) for r in [{"input": "say abc", "target": "SAY ABC"}, {"input": "x", "target": "y"}])
    )
    (tmp_path / "g.yaml").write_text("name: shout\ntype: generation\ndata: g.jsonl\nmetric: exact_match\n")
    task = load_task(str(tmp_path / "g.yaml"))
    results = evaluate(KnownModel(task), [task], n_shot=0, progress=False)
    assert results["tasks"]["shout"]["score"] == 0.5
    paths = report.write(results, tmp_path / "out")
    saved = json.loads(paths["json"].read_text())
    assert saved["tasks"]["shout"]["score"] == 0.5 and "samples" not in saved
    assert "| shout | (all) | exact_match | 0.5 | 2 |" in paths["markdown"].read_text()
    samples = [json.loads(line) for line in paths["samples:shout"].read_text().splitlines()]
    assert samples[0]["prediction"] == "SAY ABC" and samples[0]["score"] == 1.0
    assert "shout" in report.table(results)
