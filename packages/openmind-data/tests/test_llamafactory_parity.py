"""Same rows, tokenizer and template: openmind's input_ids/labels equal LLaMA-Factory's.

The expected ids come from LLaMA-Factory 0.9.5 itself (``bench/regen_llamafactory_fixture.py``;
LLaMA-Factory is never installed in openmind's environments). Its ``llama2`` template renders
``answer</s>`` where the official Llama-2 chat template renders ``answer </s>``: openmind follows
the official template, so it has exactly one more token (29871, trained) before each EOS and is
otherwise identical.
"""

import json
from pathlib import Path

from data_helpers import data_args, write_jsonl

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "llamafactory_llama2_sft.json").read_text(encoding="utf-8"))
SPACE, EOS = 29871, 2


def test_prepared_ids_and_labels_equal_llamafactory(tmp_path, llama2_tok, llama2_template):
    from openmind.data import prepare

    path = write_jsonl(tmp_path / "rows.jsonl", FIXTURE["rows"])
    data = prepare(data_args(dataset=[str(path)], cutoff_len=FIXTURE["cutoff_len"]), llama2_tok, llama2_template)
    assert len(data.train) == len(FIXTURE["expected"])
    for ours, theirs, row in zip(data.train, FIXTURE["expected"], FIXTURE["rows"]):
        ids, labels = ours["input_ids"], ours["labels"]
        # the documented difference, and only it: one trained 29871 before every EOS
        spaces = [k for k in range(len(ids) - 1) if ids[k] == SPACE and ids[k + 1] == EOS]
        answers = sum(1 for m in row["conversations"] if m["from"] == "gpt")
        assert len(spaces) == answers == ids.count(EOS)
        assert all(labels[k] == SPACE and labels[k + 1] == EOS for k in spaces)
        keep = [k for k in range(len(ids)) if k not in set(spaces)]
        assert [ids[k] for k in keep] == theirs["input_ids"]
        assert [labels[k] for k in keep] == theirs["labels"]
