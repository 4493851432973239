"""Issue 22: bad data files fail with a coded, located error (never OM-P004, never a crash), and
LLaMA-Factory's ``wiki_demo.txt`` / ``mllm_demo`` behave as documented.

The LLaMA-Factory files under ``fixtures/llamafactory`` are excerpts of llamafactory 0.9.5's
``data/`` folder (Apache-2.0, see SOURCE.md and LICENSE there).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from data_helpers import chat, data_args, write_jsonl

from openmind.core.cli import main
from openmind.core.errors import OpenMindError
from openmind.data.loading import load

LF = Path(__file__).parent / "fixtures" / "llamafactory"


def _error(path, stage="sft", **kw) -> OpenMindError:
    with pytest.raises(OpenMindError) as info:
        load(data_args(dataset=[str(path)], **kw), stage=stage)
    assert info.value.code != "OM-P004"
    return info.value


# ---- encodings ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("codec", "text", "guess"),
    [("gbk", "你好，世界", "GBK/GB18030"), ("latin-1", "café crème", "latin-1")],
)
@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv", ".txt"])
def test_a_file_that_is_not_utf8_is_located(tmp_path, codec, text, guess, suffix):
    path = tmp_path / f"data{suffix}"
    good = {"instruction": "hello", "output": "world"}
    bad = {"instruction": text, "output": "x"}
    if suffix == ".jsonl":
        body = (json.dumps(good) + "\n").encode() + (json.dumps(bad, ensure_ascii=False) + "\n").encode(codec)
        line = 2
    elif suffix == ".json":
        body = ("[\n" + json.dumps(good) + ",\n" + json.dumps(bad, ensure_ascii=False) + "\n]\n").encode(codec)
        line = 3
    elif suffix == ".csv":
        body = f"instruction,output\nhello,world\n{text},x\n".encode(codec)
        line = 3
    else:
        body = f"hello world\n{text}\n".encode(codec)
        line = 2
    path.write_bytes(body)
    err = _error(path, stage="pt" if suffix == ".txt" else "sft")
    assert err.code == "OM-D013" and err.location == f"{path}:{line}"
    assert guess in err.message and "iconv" in err.hint


# ---- structure ---------------------------------------------------------------------------
def test_json_lines_nested_100k_deep(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(chat(0)) + "\n" + '{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    err = _error(path)
    assert err.code == "OM-D002" and err.location == f"{path}:2" and "deeper than" in err.message


def test_json_array_nested_100k_deep(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    err = _error(path)
    assert err.code == "OM-D002" and "deeper than" in err.message and err.location.startswith(str(path))


def test_brackets_inside_strings_are_not_nesting(tmp_path):
    row = {"instruction": "[" * 5000 + "{" * 5000, "output": '\\"]' * 10}
    path = write_jsonl(tmp_path / "ok.jsonl", [row])
    assert load(data_args(dataset=[str(path)]), stage="sft").report.kept == 1


def test_csv_quote_that_swallows_the_next_rows(tmp_path):
    path = tmp_path / "broken.csv"
    path.write_text('instruction,output\nfine,row\n"broken quote,here\nnext,row\n"last",one\n')
    err = _error(path)
    assert err.code == "OM-D002" and err.location == f"{path}:3"


def test_csv_quote_merging_lines_into_too_few_fields(tmp_path):
    path = tmp_path / "merged.csv"
    path.write_text('instruction,output\nfine,row\n"opened here\nclosed",two,three\nok,row\n')
    err = _error(path)
    assert err.code == "OM-D002" and err.location == f"{path}:3" and "merging those lines" in err.message


def test_csv_unclosed_quote_at_the_end(tmp_path):
    path = tmp_path / "eof.csv"
    path.write_text('instruction,output\nfine,row\n"never closed,x\nmore,text\n')
    err = _error(path)
    assert err.code == "OM-D002" and err.location == f"{path}:3"


def test_legitimate_multiline_csv_fields_still_load(tmp_path):
    path = tmp_path / "multi.csv"
    path.write_text('instruction,output\n"two\nlines",fine\nplain,row\n')
    loaded = load(data_args(dataset=[str(path)]), stage="sft")
    assert loaded.report.kept == 2 and loaded.dataset[0]["messages"][0]["content"] == "two\nlines"


def test_empty_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    assert _error(path).code in ("OM-D006", "OM-D008")


# ---- LLaMA-Factory's data/ ---------------------------------------------------------------
def test_wiki_demo_txt_is_pretraining_text():
    loaded = load(data_args(dataset=["wiki_demo"], dataset_dir=str(LF)), stage="pt")
    lines = [line for line in (LF / "wiki_demo.txt").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert loaded.dataset["text"] == lines and loaded.report.kept == len(lines) > 0
    # a .txt file given directly, blank lines skipped
    direct = load(data_args(dataset=[str(LF / "wiki_demo.txt")]), stage="pt")
    assert direct.dataset["text"] == lines


def test_wiki_demo_txt_for_sft_is_a_coded_error():
    err = _error(LF / "wiki_demo.txt", stage="sft")
    assert err.code == "OM-D012" and "--stage pt" in err.message


def test_mllm_demo_names_the_multimodal_path(tmp_path, capsys):
    from openmind.nlp.testing.assets import save_llama2_tokenizer

    with pytest.raises(OpenMindError) as info:
        load(data_args(dataset=["mllm_demo"], dataset_dir=str(LF)), stage="sft")
    assert info.value.code == "OM-D012" and "mm-sft" in info.value.hint
    loaded = load(data_args(dataset=["mllm_demo"], dataset_dir=str(LF)), stage="mm-sft")
    assert loaded.report.kept == 2
    tok = save_llama2_tokenizer(tmp_path / "tok")
    argv = ["data", "prepare", "--dataset", "mllm_demo", "--dataset-dir", str(LF), "--model", str(tok)]
    assert main([*argv, "--template", "llama2", "--data-cache-dir", str(tmp_path / "c")]) != 0
    assert "OM-D012" in capsys.readouterr().err
    # --stage mm-sft with a text model: the model folder is named as the thing to change
    assert main([*argv, "--stage", "mm-sft", "--data-cache-dir", str(tmp_path / "c")]) != 0
    err = capsys.readouterr().err
    assert "OM-D015" in err and "vision-language model" in err
    # with a vision-language model it prepares: test_multimodal.py


def test_hub_entry_offline_fails_at_once(tmp_path, monkeypatch):
    (tmp_path / "dataset_info.json").write_text(json.dumps({"remote": {"hf_hub_url": "someone/some-dataset"}}))
    monkeypatch.setenv("OPENMIND_OFFLINE", "1")
    start = time.perf_counter()
    with pytest.raises(OpenMindError) as info:
        load(data_args(dataset=["remote"], dataset_dir=str(tmp_path)), stage="sft")
    assert time.perf_counter() - start < 2
    assert info.value.code == "OM-D009" and "OPENMIND_OFFLINE" in info.value.message


# ---- preparation -------------------------------------------------------------------------
def _prepare_argv(tmp_path, dataset, *extra):
    from openmind.nlp.testing.assets import save_llama2_tokenizer

    tok = save_llama2_tokenizer(tmp_path / "tok")
    return ["--dataset", str(dataset), "--model", str(tok), "--data-cache-dir", str(tmp_path / "c"), *extra]


def test_prepare_refuses_val_size_that_is_neither(tmp_path, capsys):
    data = write_jsonl(tmp_path / "d.jsonl", [chat(i) for i in range(6)])
    argv = _prepare_argv(tmp_path, data, "--template", "llama2", "--val-size", "2.5")
    assert main(["data", "prepare", *argv]) != 0
    err = capsys.readouterr().err
    assert "OM-A002" in err and "val_size" in err
    assert not (tmp_path / "c").exists() or not any((tmp_path / "c").rglob("*.arrow"))


def test_prepare_refuses_a_template_the_tokenizer_lacks(tmp_path, capsys):
    data = write_jsonl(tmp_path / "d.jsonl", [chat(i) for i in range(3)])
    assert main(["data", "prepare", *_prepare_argv(tmp_path, data, "--template", "qwen2")]) != 0
    err = capsys.readouterr().err
    assert "OM-T002" in err and "<|im_end|>" in err


def test_preview_says_dropped_for_a_dropped_preference_row(tmp_path, capsys):
    short = {
        "messages": [{"role": "user", "content": "hi"}],
        "chosen": {"role": "assistant", "content": "yes"},
        "rejected": {"role": "assistant", "content": "no"},
    }
    long = dict(short, chosen={"role": "assistant", "content": "word " * 200})
    data = write_jsonl(tmp_path / "pref.jsonl", [long, short])
    argv = _prepare_argv(tmp_path, data, "--template", "llama2", "--cutoff-len", "64", "--truncation", "drop")
    assert main(["data", "preview", *argv, "--stage", "dpo", "-n", "2"]) == 0
    out = capsys.readouterr().out
    assert f"{data}:1: dropped (longer than cutoff_len=64 with truncation=drop" in out
    assert "0 tokens, 0 trained" not in out
    assert f"{data}:2 [chosen]:" in out
    assert main(["data", "preview", *argv, "--stage", "dpo", "-n", "2", "--json"]) == 0
    items = json.loads(capsys.readouterr().out)
    assert items[0]["dropped"].startswith("longer than cutoff_len=64") and items[0]["tokens"] > 64


def test_padding_waste_is_never_negative():
    from openmind.data.packing import padding_stats

    stats = padding_stats([100, 300, 50], capacity=64, packed_lengths=[300, 150])
    assert stats["padding_waste_before_cutoff"] == round(1 - 450 / (100 + 300 + 64), 4) >= 0
    assert stats["padding_waste_after"] == 0.0
    # unchanged where every sample fits
    assert padding_stats([10, 20], capacity=40)["padding_waste_before_cutoff"] == round(1 - 30 / 80, 4)


# ---- huge rows -----------------------------------------------------------------------------
@pytest.mark.parametrize("truncation", ["right", "left", "drop"])
@pytest.mark.parametrize("stage", ["sft", "pt"])
def test_long_rows_are_cut_before_tokenising_with_identical_results(llama2_tok, llama2_template, truncation, stage):
    from openmind.data.encoding import Encoder, encode_rows

    long = " ".join(f"word{i} and {i * 7}" for i in range(40_000))  # ~600k characters
    if stage == "pt":
        rows = [{"text": long}, {"text": "short text"}]
    else:
        rows = [
            {"messages": [{"role": "user", "content": long}, {"role": "assistant", "content": "fine"}]},
            {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": long}]},
            {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]},
        ]

    def encode(bounded: bool):
        enc = Encoder(llama2_tok, llama2_template, stage=stage, cutoff_len=64, truncation=truncation)
        if not bounded:
            enc.char_limit = lambda: None
        return enc, encode_rows(enc, [dict(r) for r in rows])

    enc, cut = encode(True)
    assert enc.char_limit() is not None and enc.char_limit() < len(long) // 10
    _, whole = encode(False)
    for a, b in zip(cut, whole, strict=True):
        for key in ("input_ids", "labels", "_status"):
            assert a[key] == b[key], key


def test_a_10mb_row_is_prepared_in_bounded_memory(tmp_path):
    """Peak memory of `prepare` on a file with one 10 MB row: 1.1 GB before the cut, ~0.3 GB after."""
    import subprocess
    import sys

    script = f"""
import json, resource, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from data_helpers import data_args
from openmind.nlp.testing.assets import llama2_tokenizer
from openmind.nlp.templates import load_template
from openmind.data.preparation import prepare
tok, tpl = llama2_tokenizer(), load_template("llama2")
path = {str(tmp_path / "big.jsonl")!r}
words = ("lorem ipsum dolor sit amet " * 400_000)[:10_000_000]
with open(path, "w") as f:
    f.write(json.dumps({{"messages": [{{"role": "user", "content": "hi"}}, {{"role": "assistant", "content": "yo"}}]}}) + "\\n")
    f.write(json.dumps({{"messages": [{{"role": "user", "content": "hi"}}, {{"role": "assistant", "content": words}}]}}) + "\\n")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
p = prepare(data_args(dataset=[path], cutoff_len=1024, data_cache_dir={str(tmp_path / "c")!r}), tok, tpl, quiet=True)
print(json.dumps({{"before": before, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "truncated": p.stats["truncated"]}}))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["truncated"] == 1
    assert (got["peak"] - got["before"]) / 1024 < 400, got  # MiB above the process before prepare
