"""Regenerate the checked-in LLaMA-Factory parity fixture used by openmind-data's tests.

    .venv/bin/python bench/regen_llamafactory_fixture.py          # needs .venv-lf (bench/setup_llamafactory_venv.sh)

LLaMA-Factory 0.9.5 prepares a few sharegpt rows with the real Llama-2 tokenizer and its
``llama2`` template; the rows and its ``input_ids``/``labels`` are written to
``packages/openmind-data/tests/fixtures/llamafactory_llama2_sft.json`` so the parity test runs in
CI without LLaMA-Factory installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent
FIXTURE = ROOT / "packages" / "openmind-data" / "tests" / "fixtures" / "llamafactory_llama2_sft.json"

ROWS = [
    {
        "conversations": [
            {"from": "human", "value": "Hello, who are you?"},
            {"from": "gpt", "value": "I am a helpful assistant."},
        ]
    },
    {
        "conversations": [
            {"from": "system", "value": "You answer in one short sentence."},
            {"from": "human", "value": "What is the capital of France?"},
            {"from": "gpt", "value": "Paris is the capital of France."},
        ]
    },
    {
        "conversations": [
            {"from": "human", "value": "Count to three."},
            {"from": "gpt", "value": "1, 2, 3."},
            {"from": "human", "value": "Now backwards."},
            {"from": "gpt", "value": "3, 2, 1."},
            {"from": "human", "value": "Thanks!"},
            {"from": "gpt", "value": "You're welcome!"},
        ]
    },
    {
        "conversations": [
            {"from": "human", "value": "Traduis « bonjour » en allemand, s'il te plaît."},
            {"from": "gpt", "value": "« Guten Tag » ou simplement « Hallo »."},
        ]
    },
    {
        "conversations": [
            {"from": "system", "value": "Be precise."},
            {"from": "human", "value": "Write a Python one-liner that sums a list `xs`."},
            {"from": "gpt", "value": "sum(xs)"},
            {"from": "human", "value": "And the mean?"},
            {"from": "gpt", "value": "sum(xs) / len(xs) # raises ZeroDivisionError on an empty list"},
        ]
    },
]


def main() -> int:
    sys.path.insert(0, str(HERE))
    import datasets
    from bench_data import lf_python
    from data_runners import write_rows

    from openmind.nlp.testing.assets import save_llama2_tokenizer

    python = lf_python()
    if python is None:
        print("no LLaMA-Factory venv: run bash bench/setup_llamafactory_venv.sh first", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows_dir = write_rows(work / "rows", ROWS)
        tok = save_llama2_tokenizer(work / "tok")
        cmd = [
            python,
            str(HERE / "data_runners.py"),
            "llamafactory",
            str(rows_dir),
            str(tok),
            str(work / "out"),
            str(work / "cache"),
            "1024",
            "1",
        ]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        out = datasets.load_from_disk(str(work / "out"))
        version = subprocess.run(
            [python, "-c", "import importlib.metadata as m; print(m.version('llamafactory'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        expected = [{"input_ids": r["input_ids"], "labels": r["labels"]} for r in out]
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "generated_by": "bench/regen_llamafactory_fixture.py",
        "llamafactory": version,
        "template": "llama2",
        "tokenizer": "Llama-2 (wordllama's l2_supercat_tokenizer_config.json)",
        "cutoff_len": 1024,
        "note": "LLaMA-Factory's llama2 template renders 'answer</s>'; the official Llama-2 chat template "
        "renders 'answer </s>' (one more token, 29871, before each EOS). See ENVIRONMENT.md.",
    }
    lines = ["{"] + [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in meta.items()]
    for key, items in (("rows", ROWS), ("expected", expected)):
        body = ",\n".join("  " + json.dumps(item, ensure_ascii=False) for item in items)
        lines.append(f' "{key}": [\n{body}\n ]' + ("," if key == "rows" else ""))
    lines.append("}")
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
