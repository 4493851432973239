"""Preparation in worker processes: identical output for 1, 2 and 4 workers, nothing pickled per
row (the tokenizer is inherited by the forked workers), bounded batches per worker."""

from __future__ import annotations

import pytest
from data_helpers import chat, data_args, write_jsonl

from openmind.data import workers as W

pytestmark = pytest.mark.skipif(not W.can_fork(), reason="worker processes are forked (Linux)")


def _rows():
    rows = [chat(i, turns=1 + i % 3, system="be brief" if i % 4 == 0 else None) for i in range(90)]
    rows[17] = {"messages": [{"role": "user", "content": "no answer"}]}  # rejected (skip)
    rows[40] = "{not json"  # a bad line
    rows[63] = chat(63, turns=30)  # longer than the cutoff: truncated
    return rows


def test_prepared_data_is_identical_for_1_2_and_4_workers(tmp_path, monkeypatch, llama2_tok, llama2_template):
    from openmind.data import prepare

    monkeypatch.setattr(W, "CHUNK_ROWS", 7)  # many chunks, uneven last one
    path = write_jsonl(tmp_path / "t.jsonl", _rows())
    results = {}
    for n in (1, 2, 4):
        args = data_args(
            dataset=[str(path)],
            preprocessing_num_workers=n,
            on_error="skip",
            cutoff_len=256,
            val_size=0.1,
            data_cache_dir=str(tmp_path / f"cache{n}"),
        )
        results[n] = prepare(args, llama2_tok, llama2_template)
    one = results[1]
    assert one.stats["rejected"] == 2 and one.stats["truncated"] >= 1
    for n in (2, 4):
        other = results[n]
        assert other.train.to_dict() == one.train.to_dict()
        assert other.eval.to_dict() == one.eval.to_dict()
        assert {k: v for k, v in other.stats.items() if "seconds" not in k and k != "rejects_file"} == {
            k: v for k, v in one.stats.items() if "seconds" not in k and k != "rejects_file"
        }
        assert other.train.features == one.train.features


def test_validation_only_load_is_identical_too(tmp_path, monkeypatch):
    from openmind.data.loading import load

    monkeypatch.setattr(W, "CHUNK_ROWS", 11)
    path = write_jsonl(tmp_path / "t.jsonl", _rows())
    one = load(data_args(dataset=[str(path)], on_error="skip"), keep_rejects=False)
    four = load(data_args(dataset=[str(path)], on_error="skip", preprocessing_num_workers=4), keep_rejects=False)
    assert four.dataset.to_dict() == one.dataset.to_dict()
    assert four.dataset.features == one.dataset.features
    assert [str(p) for p in four.report.problems] == [str(p) for p in one.report.problems]


def test_the_tokenizer_is_not_pickled_into_workers(tmp_path, monkeypatch, llama2_tok, llama2_template):
    from openmind.data import prepare
    from openmind.data.encoding import Encoder

    def refuse(self):
        raise AssertionError("the encoder was pickled")

    monkeypatch.setattr(Encoder, "__getstate__", refuse)
    monkeypatch.setattr(W, "CHUNK_ROWS", 5)
    path = write_jsonl(tmp_path / "t.jsonl", [chat(i) for i in range(30)])
    prepared = prepare(data_args(dataset=[str(path)], preprocessing_num_workers=2), llama2_tok, llama2_template)
    assert len(prepared.train) == 30


def test_each_worker_holds_one_batch_at_a_time():
    import datasets

    def sizes(batch, indices):
        return {"n": [len(indices)] * len(indices), "i": indices}

    ds = datasets.Dataset.from_dict({"x": list(range(103))})
    features = datasets.Features({"n": datasets.Value("int64"), "i": datasets.Value("int64")})
    out = W.map_batches(ds, sizes, fn_kwargs={}, workers=3, batch_size=8, chunk_rows=20, features=features)
    assert out["i"] == list(range(103))
    assert max(out["n"]) == 8


def test_chunk_sizes_depend_on_the_row_count_only():
    assert W.chunk_size(20_000) == 1000  # 20 chunks: 10 + 10 with two workers, 5 each with four
    assert W.chunk_size(50_000) == 1563
    assert W.chunk_size(10**7) == W.CHUNK_ROWS and W.chunk_size(10) == W.MIN_CHUNK_ROWS


def test_the_garbage_collector_is_paused_per_batch_and_restored(tmp_path):
    import gc

    from openmind.data.loading import load

    seen = []
    original = gc.disable

    path = write_jsonl(tmp_path / "t.jsonl", [chat(i) for i in range(5)])
    assert gc.isenabled()
    try:
        gc.disable = lambda: (seen.append(True), original())[1]
        load(data_args(dataset=[str(path)]), keep_rejects=False)
    finally:
        gc.disable = original
    assert seen and gc.isenabled()
