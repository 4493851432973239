"""KTO, ORPO, SimPO and GRPO through trl on openmind's data: each moves its metric on a synthetic
task in a short CPU run, with the margin / reward measured independently of trl's own logs."""

from __future__ import annotations

import json

import pytest
from conftest import quick
from test_export_pref import _margin

import openmind
from openmind.core.errors import OpenMindError


def _rows(pref_file, n=24):
    return [json.loads(line) for line in pref_file.read_text().splitlines()][:n]


@pytest.fixture(scope="module")
def kto_folder(pref_file, tmp_path_factory):
    """LLaMA-Factory's KTO layout: sharegpt-style ``messages`` + a boolean column mapped as
    ``kto_tag`` in dataset_info.json (one row per answer, desirable or not)."""
    folder = tmp_path_factory.mktemp("kto")
    rows = []
    for r in _rows(pref_file, 96):
        for answer, good in ((r["chosen"], True), (r["rejected"], False)):
            rows.append({"messages": [*r["messages"], {"role": "assistant", "content": answer}], "tag": good})
    (folder / "kto.json").write_text(json.dumps(rows))
    info = {
        "kto_demo": {
            "file_name": "kto.json",
            "formatting": "sharegpt",
            "columns": {"messages": "messages", "kto_tag": "tag"},
            "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant"},
        }
    }
    (folder / "dataset_info.json").write_text(json.dumps(info))
    return folder


@pytest.mark.parametrize("stage", ["orpo", "simpo"])
def test_orpo_and_simpo_raise_the_chosen_rejected_margin(tiny_dir, pref_file, tmp_path, stage):
    rows = _rows(pref_file)
    before = _margin(tiny_dir, tiny_dir, None, rows)
    out = tmp_path / stage
    result = openmind.train(
        None,
        stage=stage,
        model=str(tiny_dir),
        dataset=[str(pref_file)],
        finetuning_type="lora",
        pref_beta=0.1 if stage == "orpo" else 2.0,
        output_dir=str(out),
        **quick(max_steps=8, learning_rate=1e-2),
    )
    after = _margin(tiny_dir, tiny_dir, out, rows)
    assert result.stage == stage and (out / "adapter_config.json").is_file()
    assert after > before + 1.0, (before, after)
    margins = [h["rewards/margins"] for h in result.history if "rewards/margins" in h]
    assert len(margins) == 8 and margins[-1] > margins[0]  # trl's own (beta-scaled) reward margin
    assert result.tokens > 0


def test_kto_reads_the_kto_tag_and_raises_the_margin(tiny_dir, pref_file, kto_folder, tmp_path):
    rows = _rows(pref_file)
    before = _margin(tiny_dir, tiny_dir, None, rows)
    out = tmp_path / "kto"
    result = openmind.train(
        None,
        stage="kto",
        model=str(tiny_dir),
        dataset=["kto_demo"],
        dataset_dir=str(kto_folder),
        finetuning_type="lora",
        output_dir=str(out),
        **quick(max_steps=8, learning_rate=1e-2),
    )
    after = _margin(tiny_dir, tiny_dir, out, rows)
    assert after > before + 1.0, (before, after)
    assert result.metrics["data"]["kept"] == 192
    margins = [h["rewards/margins"] for h in result.history if "rewards/margins" in h]
    assert margins and max(margins[-3:]) > margins[0]


def test_kto_data_keeps_the_label_and_splits_prompt_from_answer(tiny_dir, kto_folder):
    from transformers import AutoTokenizer

    from openmind.core.args import parse
    from openmind.data.training import prepare_for_training
    from openmind.nlp.training.base import TrainPlan
    from openmind.pt.training.adapters import trl_unpaired
    from openmind.pt.training.model import load_tokenizer_and_template

    ns = parse(
        ("model", "template", "data", "finetuning", "training"),
        overrides={"model": str(tiny_dir), "dataset": ["kto_demo"], "dataset_dir": str(kto_folder), "stage": "kto"},
    )
    loaded = load_tokenizer_and_template(ns, "kto", None)
    plan = TrainPlan.from_args(ns, "kto")
    prepared = prepare_for_training(plan, loaded.tokenizer, loaded.template, quiet=True)
    rows = trl_unpaired(prepared.train)
    assert sorted(set(rows["label"])) == [False, True] and sum(rows["label"]) == 96
    tok = AutoTokenizer.from_pretrained(tiny_dir)
    first = json.loads((kto_folder / "kto.json").read_text())[0]
    full = tok.apply_chat_template(first["messages"], tokenize=False)
    prompt = tok.apply_chat_template(first["messages"][:-1], tokenize=False, add_generation_prompt=True)
    # the official template's tokens, cut where the answer starts
    row = next(r for r in rows if tok.decode(r["completion_ids"]).strip().startswith(first["messages"][-1]["content"]))
    assert row["prompt_ids"] + row["completion_ids"] == tok(full, add_special_tokens=False)["input_ids"]
    assert row["prompt_ids"] == tok(prompt, add_special_tokens=False)["input_ids"]


def test_kto_rejects_a_row_without_a_usable_tag(tiny_dir, tmp_path):
    bad = tmp_path / "bad.jsonl"
    rows = [
        {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], "label": True},
        {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "c"}], "label": "maybe"},
    ]
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(OpenMindError) as info:
        openmind.train(
            None, stage="kto", model=str(tiny_dir), dataset=[str(bad)], output_dir=str(tmp_path / "o"), **quick()
        )
    assert info.value.code.startswith("OM-D") and "kto_tag" in info.value.message
    assert "bad.jsonl" in f"{info.value.location} {info.value}"


def test_kto_refuses_pairs_with_a_hint(tiny_dir, pref_file, tmp_path):
    with pytest.raises(OpenMindError) as info:
        openmind.train(
            None, stage="kto", model=str(tiny_dir), dataset=[str(pref_file)], output_dir=str(tmp_path / "o"), **quick()
        )
    assert info.value.code == "OM-D005" or "kto_tag" in str(info.value)


# ---- rewards -----------------------------------------------------------------------------------


def test_builtin_rewards_and_resolution():
    from openmind.pt.training.rewards import resolve_rewards

    exact, rx, length = resolve_rewards(["exact_match", r"regex:^\d+$", "length:4"])
    assert exact(["p", "p"], [" 12 ", "13"], answer=["12", "12"]) == [1.0, 0.0]
    assert rx(["p", "p"], ["42", "4x"]) == [1.0, 0.0]
    assert length(["p", "p"], ["abcd", "ab"]) == [0.0, -0.5]
    custom = resolve_rewards(["openmind.pt.training.rewards:length"])[0]
    assert custom is not None

    def mine(prompts, completions, **_):
        return [1.0] * len(completions)

    assert resolve_rewards([mine]) == [mine]
    for bad, words in (
        (["nope"], "unknown reward"),
        (["regex"], "needs a parameter"),
        (["regex:("], "invalid"),
        (["exact_match:x"], "takes no parameter"),
        (["no.such.module:f"], "cannot import"),
        ([], "at least one"),
    ):
        with pytest.raises(OpenMindError) as info:
            resolve_rewards(bad)
        assert info.value.code == "OM-T013" and words in info.value.message, (bad, info.value.message)
