"""The prepared-data cache: reused when nothing changed, rebuilt when anything that matters did."""

from data_helpers import chat, data_args, write_jsonl


def test_cache_reuse_and_invalidation(tmp_path, llama2_tok, llama2_template):
    from openmind.data import prepare
    from openmind.nlp.templates import JinjaTemplate

    path = write_jsonl(tmp_path / "t.jsonl", [chat(i) for i in range(20)])
    args = data_args(dataset=[str(path)], cutoff_len=64)
    first = prepare(args, llama2_tok, llama2_template)
    again = prepare(args, llama2_tok, llama2_template)
    assert not first.from_cache and again.from_cache and again.cache_dir == first.cache_dir
    assert again.train["input_ids"] == first.train["input_ids"]
    assert again.stats["read"] == 20 and again.stats["kept"] == 20
    # a different argument, template or file content is another cache entry
    assert not prepare(data_args(dataset=[str(path)], cutoff_len=65), llama2_tok, llama2_template).from_cache
    assert not prepare(args, llama2_tok, JinjaTemplate.from_tokenizer(llama2_tok)).from_cache
    write_jsonl(path, [chat(i) for i in range(21)])
    changed = prepare(args, llama2_tok, llama2_template)
    assert not changed.from_cache and len(changed.train) == 21
    assert prepare(args, llama2_tok, llama2_template).from_cache
    args.overwrite_cache = True
    assert not prepare(args, llama2_tok, llama2_template).from_cache


def test_val_size_split_eval_dataset_and_workers(tmp_path, llama2_tok, llama2_template):
    from openmind.data import prepare

    path = write_jsonl(tmp_path / "t.jsonl", [chat(i) for i in range(40)])
    ev = write_jsonl(tmp_path / "e.jsonl", [chat(100 + i) for i in range(5)])
    split = prepare(data_args(dataset=[str(path)], val_size=0.25), llama2_tok, llama2_template)
    assert (len(split.train), len(split.eval)) == (30, 10)
    assert not set(map(tuple, split.train["input_ids"])) & set(map(tuple, split.eval["input_ids"]))
    two = prepare(
        data_args(dataset=[str(path)], eval_dataset=[str(ev)], preprocessing_num_workers=2), llama2_tok, llama2_template
    )
    one = prepare(data_args(dataset=[str(path)], eval_dataset=[str(ev)]), llama2_tok, llama2_template)
    assert two.train["input_ids"] == one.train["input_ids"] and two.train["labels"] == one.train["labels"]
    assert len(two.eval) == 5 and two.stats["read"] == 45


def test_truncation_counts_and_errors(tmp_path, llama2_tok, llama2_template):
    import pytest

    from openmind.core.errors import OpenMindError
    from openmind.data import prepare

    rows = [chat(i, turns=1) for i in range(4)] + [chat(9, turns=4)]
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    right = prepare(data_args(dataset=[str(path)], cutoff_len=48), llama2_tok, llama2_template)
    assert (right.stats["truncated"], right.stats["dropped"], len(right.train)) == (1, 0, 5)
    assert max(len(x) for x in right.train["input_ids"]) == 48
    drop = prepare(data_args(dataset=[str(path)], cutoff_len=48, truncation="drop"), llama2_tok, llama2_template)
    assert (drop.stats["dropped"], drop.stats["kept"], len(drop.train)) == (1, 4, 4)
    with pytest.raises(OpenMindError) as err:
        prepare(data_args(dataset=[str(path)], cutoff_len=48, truncation="error"), llama2_tok, llama2_template)
    assert err.value.code == "OM-D007" and err.value.location == f"{path}:5"


def test_pretrain_and_preference_stages(tmp_path, llama2_tok, llama2_template):
    from openmind.data import prepare

    texts = [" ".join(["word"] * 50), "Short text."]
    text = write_jsonl(tmp_path / "t.jsonl", [{"text": t} for t in texts])
    pt = prepare(data_args(dataset=[str(text)], cutoff_len=16, packing=True), llama2_tok, stage="pt")
    tokens = sum(len(x) for x in pt.train["input_ids"])
    assert tokens == sum(len(llama2_tok(t)["input_ids"]) + 1 for t in texts)  # bos..eos of both, nothing cut
    assert all(len(x) <= 16 for x in pt.train["input_ids"]) and pt.stats["truncated"] == 0
    pref = write_jsonl(tmp_path / "p.jsonl", [{"prompt": "2+2?", "chosen": "It is 4.", "rejected": "It is 5."}])
    dpo = prepare(data_args(dataset=[str(pref)]), llama2_tok, llama2_template, stage="dpo")
    row = dpo.train[0]
    assert set(dpo.train.column_names) == {"chosen_input_ids", "chosen_labels", "rejected_input_ids", "rejected_labels"}
    first = next(i for i, x in enumerate(row["chosen_labels"]) if x != -100)  # the prompt is not trained
    assert first > 0 and row["chosen_input_ids"][:first] == row["rejected_input_ids"][:first]
    # (trl's layout of these rows is tested with the adapter, in openmind-pt: tests/training/test_adapters.py)
