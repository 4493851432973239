"""Converters to the standard formats, format detection, column mapping, LLaMA-Factory's dataset_info.json."""

import json

import pytest
from data_helpers import data_args, write_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st

from openmind.data.converters import Converter, Mapping, detect
from openmind.data.formats import check_row, for_template


def _msgs(row):
    return [(m["role"], m["content"]) for m in row["messages"]]


def test_alpaca_with_system_and_history():
    conv = Converter(Mapping("alpaca", {"system": "system", "history": "history"}), "sft")
    row, problems = conv(
        {
            "instruction": "Add",
            "input": "1+1",
            "output": "2",
            "system": "Be brief.",
            "history": [["Hi", "Hello!"]],
        }
    )
    assert problems == []
    assert _msgs(row) == [
        ("system", "Be brief."),
        ("user", "Hi"),
        ("assistant", "Hello!"),
        ("user", "Add\n1+1"),
        ("assistant", "2"),
    ]
    assert check_row("sft", row) == []


def test_sharegpt_tags_function_call_and_observation():
    conv = Converter(Mapping("sharegpt", {"system": "system", "tools": "tools"}), "sft")
    row, problems = conv(
        {
            "conversations": [
                {"from": "human", "value": "Weather in Paris?"},
                {"from": "function_call", "value": json.dumps({"name": "weather", "arguments": {"city": "Paris"}})},
                {"from": "observation", "value": '{"temp": 21}'},
                {"from": "gpt", "value": "It is 21 degrees."},
            ],
            "system": "You are a bot.",
            "tools": json.dumps([{"name": "weather", "parameters": {}}]),
        }
    )
    assert problems == []
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert json.loads(row["messages"][2]["tool_calls"]) == [
        {"type": "function", "function": {"name": "weather", "arguments": {"city": "Paris"}}}
    ]
    assert for_template(row["messages"])[2]["tool_calls"][0]["function"]["name"] == "weather"
    assert json.loads(row["tools"]) == [{"name": "weather", "parameters": {}}]
    assert check_row("sft", row) == []


def test_sharegpt_custom_tags_and_unknown_role():
    mapping = Mapping(
        "sharegpt",
        {"messages": "turns"},
        {"role_tag": "speaker", "content_tag": "text", "user_tag": "u", "assistant_tag": "a"},
    )
    conv = Converter(mapping, "sft")
    row, problems = conv({"turns": [{"speaker": "u", "text": "hi"}, {"speaker": "a", "text": "hello"}]})
    assert problems == [] and _msgs(row) == [("user", "hi"), ("assistant", "hello")]
    _, problems = conv({"turns": [{"speaker": "u", "text": "hi"}, {"speaker": "bot", "text": "hello"}]})
    assert [(p.field, p.reason.split(";")[0]) for p in problems] == [("turns[1].speaker", "unknown role 'bot'")]


def test_preference_layouts():
    conv = Converter(Mapping("preference"), "preference")
    explicit, p1 = conv({"prompt": "2+2?", "chosen": "4", "rejected": "5"})
    trl_style, p2 = conv(
        {
            "prompt": [{"role": "user", "content": "2+2?"}],
            "chosen": [{"role": "assistant", "content": "4"}],
            "rejected": [{"role": "assistant", "content": "5"}],
        }
    )
    implicit, p3 = conv(
        {
            "chosen": [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}],
            "rejected": [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "5"}],
        }
    )
    assert p1 == p2 == p3 == []
    for row in (explicit, trl_style, implicit):
        assert _msgs(row) == [("user", "2+2?")] and (row["chosen"], row["rejected"]) == ("4", "5")
        assert check_row("preference", row) == []
    sharegpt = Converter(Mapping("sharegpt", ranking=True), "preference")
    row, problems = sharegpt(
        {
            "conversations": [{"from": "human", "value": "2+2?"}],
            "chosen": {"from": "gpt", "value": "4"},
            "rejected": {"from": "gpt", "value": "5"},
        }
    )
    assert problems == [] and (row["chosen"], row["rejected"]) == ("4", "5")
    alpaca = Converter(Mapping("alpaca", ranking=True), "preference")
    row, problems = alpaca({"instruction": "2+2?", "input": "", "chosen": "4", "rejected": "5"})
    assert problems == [] and _msgs(row) == [("user", "2+2?")]


def test_pretrain_from_text_and_from_alpaca_prompt():
    row, problems = Converter(Mapping("pretrain"), "pretrain")({"text": "Once upon a time."})
    assert problems == [] and row == {"text": "Once upon a time."}
    # LLaMA-Factory's pre-training datasets: alpaca with columns {prompt: text}
    row, problems = Converter(Mapping("alpaca", {"prompt": "text"}), "pretrain")({"text": "Once upon a time."})
    assert problems == [] and row == {"text": "Once upon a time."}


@pytest.mark.parametrize(
    "columns,expected",
    [
        (["conversations"], ("sharegpt", False)),
        (["conversations", "chosen", "rejected"], ("sharegpt", True)),
        (["messages"], ("openai", False)),
        (["instruction", "input", "output"], ("alpaca", False)),
        (["prompt", "chosen", "rejected"], ("preference", True)),
        (["text"], ("pretrain", False)),
        (["foo"], ("", False)),
    ],
)
def test_detect(columns, expected):
    assert detect(columns) == expected


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20).filter(str.strip)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_text, _text), min_size=1, max_size=5), st.one_of(st.none(), _text))
def test_sharegpt_roundtrip_keeps_every_turn(turns, system):
    """sharegpt -> standard keeps every turn, in order, with its text (nothing lost or duplicated)."""
    conversations = [{"from": "system", "value": system}] if system else []
    for q, a in turns:
        conversations += [{"from": "human", "value": q}, {"from": "gpt", "value": a}]
    row, problems = Converter(Mapping("sharegpt"), "sft")({"conversations": conversations})
    assert problems == []
    expected = ([("system", system)] if system else []) + [x for q, a in turns for x in (("user", q), ("assistant", a))]
    assert _msgs(row) == expected
    assert check_row("sft", row) == []
    # and the same conversation as alpaca (history + last turn) gives the same messages
    alpaca = {"instruction": turns[-1][0], "output": turns[-1][1], "history": [list(t) for t in turns[:-1]]}
    if system:
        alpaca["system"] = system
    row2, problems2 = Converter(Mapping("alpaca", {"system": "system", "history": "history"}), "sft")(alpaca)
    assert problems2 == [] and _msgs(row2) == expected


def test_llamafactory_dataset_info_is_read_unchanged(tmp_path):
    from openmind.data import load_dataset

    write_jsonl(
        tmp_path / "alpaca_demo.jsonl",
        [
            {"instruction": "Say hi", "input": "", "output": "Hi!"},
            {"instruction": "Add", "input": "1+1", "output": "2"},
        ],
    )
    write_jsonl(
        tmp_path / "glaive.jsonl",
        [{"conv": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], "sys": "be nice"}],
    )
    write_jsonl(tmp_path / "c4.jsonl", [{"text": "Some web text."}])
    write_jsonl(
        tmp_path / "dpo.jsonl",
        [
            {
                "conversations": [{"from": "human", "value": "2+2?"}],
                "chosen": {"from": "gpt", "value": "4"},
                "rejected": {"from": "gpt", "value": "5"},
            }
        ],
    )
    info = {
        "alpaca_demo": {"file_name": "alpaca_demo.jsonl"},
        "glaive": {
            "file_name": "glaive.jsonl",
            "formatting": "sharegpt",
            "columns": {"messages": "conv", "system": "sys"},
            "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant"},
        },
        "c4_demo": {"file_name": "c4.jsonl", "columns": {"prompt": "text"}},
        "dpo_demo": {"file_name": "dpo.jsonl", "formatting": "sharegpt", "ranking": True},
    }
    (tmp_path / "dataset_info.json").write_text(json.dumps(info))
    ds = load_dataset(data_args(dataset=["alpaca_demo", "glaive"], dataset_dir=str(tmp_path)), quiet=True)
    assert [_msgs(r) for r in ds] == [
        [("user", "Say hi"), ("assistant", "Hi!")],
        [("user", "Add\n1+1"), ("assistant", "2")],
        [("system", "be nice"), ("user", "hi"), ("assistant", "hello")],
    ]
    assert ds["_file"] == [0, 0, 1]
    pt = load_dataset(data_args(dataset=["c4_demo"], dataset_dir=str(tmp_path)), stage="pt", quiet=True)
    assert pt["text"] == ["Some web text."]
    dpo = load_dataset(data_args(dataset=["dpo_demo"], dataset_dir=str(tmp_path)), stage="dpo", quiet=True)
    assert (dpo[0]["chosen"], dpo[0]["rejected"]) == ("4", "5")


def test_openmind_dataset_yaml_and_unknown_names(tmp_path):
    from openmind.core.errors import OpenMindError
    from openmind.data import load_dataset

    (tmp_path / "sub").mkdir()
    write_jsonl(tmp_path / "sub" / "a.jsonl", [{"q": "hi", "a": "hello"}])
    (tmp_path / "mine.dataset.yaml").write_text(
        "name: mine\nfile_name: sub/a.jsonl\nformatting: alpaca\ncolumns: {prompt: q, response: a}\n"
    )
    ds = load_dataset(data_args(dataset=["mine"], dataset_dir=str(tmp_path)), quiet=True)
    assert _msgs(ds[0]) == [("user", "hi"), ("assistant", "hello")]
    with pytest.raises(OpenMindError) as err:
        load_dataset(data_args(dataset=["mnie"], dataset_dir=str(tmp_path)))
    assert err.value.code == "OM-D003" and "'mine'" in err.value.hint
    (tmp_path / "bad.dataset.yaml").write_text("name: bad\nfile_name: x.jsonl\ncolums: {}\n")
    with pytest.raises(OpenMindError) as err:
        load_dataset(data_args(dataset=["mine"], dataset_dir=str(tmp_path)))
    assert err.value.code == "OM-D005" and "colums" in err.value.message and "columns" in err.value.message
    assert "bad.dataset.yaml" in err.value.location


def test_file_types_and_folders(tmp_path):
    import datasets

    from openmind.data import load_dataset

    rows = [{"instruction": f"q{i}", "input": "", "output": f"a{i}"} for i in range(4)]
    folder = tmp_path / "parts"
    folder.mkdir()
    write_jsonl(folder / "0.jsonl", rows[:2])
    write_jsonl(folder / "1.jsonl", rows[2:])
    (tmp_path / "x.json").write_text(json.dumps(rows))
    datasets.Dataset.from_list(rows).to_csv(str(tmp_path / "x.csv"))
    datasets.Dataset.from_list(rows).to_parquet(str(tmp_path / "x.parquet"))
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "saved"))
    expected = [[("user", f"q{i}"), ("assistant", f"a{i}")] for i in range(4)]
    for name in ("parts", "x.json", "x.csv", "x.parquet", "saved"):
        ds = load_dataset(data_args(dataset=[str(tmp_path / name)]), quiet=True)
        assert [_msgs(r) for r in ds] == expected, name
    ds = load_dataset(data_args(dataset=[str(tmp_path / "x.parquet")], max_samples=3), quiet=True)
    assert len(ds) == 3
