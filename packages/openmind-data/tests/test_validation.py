"""Bad input is reported with file, line, field and reason; --on-error skip counts and sets rows aside."""

import json

import pytest
from data_helpers import chat, data_args, write_jsonl

from openmind.core.errors import OpenMindError
from openmind.data.loading import load

GOOD = chat(0)


def _bad_file(tmp_path):
    return write_jsonl(
        tmp_path / "train.jsonl",
        [
            GOOD,  # line 1
            '{"messages": [{"role": "user", "content": "hi"}',  # line 2: malformed JSON
            {"conversation": []},  # line 3: missing field
            {"messages": [{"role": "user", "content": "hi"}, {"role": "bot", "content": "yo"}]},  # line 4: role
            {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "  "}]},  # line 5
            "",  # line 6: blank lines are not rows
            {"messages": [{"role": "assistant", "content": "x"}]},  # line 7: order
            chat(1),  # line 8
        ],
    )


def test_each_bad_row_is_located(tmp_path):
    path = _bad_file(tmp_path)
    loaded = load(data_args(dataset=[str(path)], on_error="skip"))
    got = [(p.line, p.field, p.reason) for p in loaded.report.problems]
    assert got == [
        (2, "", "invalid JSON: Expecting ',' delimiter (column 48)"),
        (3, "messages", "missing"),
        (4, "messages[1].role", "unknown role 'bot'; expected one of assistant, function_call, system, tool, user"),
        (5, "messages[1].content", "empty assistant turn"),
        (7, "messages[0].role", "an assistant turn must follow a user or tool turn, not the start"),
    ]
    assert all(p.source == str(path) for p in loaded.report.problems)
    assert loaded.report.problems[2].location == f"{path}:4 field 'messages[1].role'"
    r = loaded.report
    assert (r.read, r.kept, r.rejected) == (7, 2, 5)
    assert [m["content"] for m in loaded.dataset[1]["messages"]] == [m["content"] for m in chat(1)["messages"]]
    assert loaded.dataset["_row"] == [0, 6]
    # the side file keeps every rejected row with its problems and original record
    side = [json.loads(line) for line in open(r.rejects_file, encoding="utf-8")]
    assert [s["line"] for s in side] == [2, 3, 4, 5, 7]
    assert side[0]["record"] == '{"messages": [{"role": "user", "content": "hi"}'
    assert side[2]["record"]["messages"][1]["role"] == "bot"
    assert side[2]["problems"][0]["field"] == "messages[1].role"


def test_fail_stops_with_the_first_location(tmp_path):
    path = _bad_file(tmp_path)
    with pytest.raises(OpenMindError) as err:
        load(data_args(dataset=[str(path)]))
    assert err.value.code == "OM-D002"
    assert err.value.location == f"{path}:2"
    assert "4 more bad rows" in err.value.message


def test_wrong_types_and_fields(tmp_path):
    path = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}], "tools": "[oops"},
            {"messages": [{"role": "user", "content": 3}, {"role": "assistant", "content": "yo"}]},
            {
                "messages": [
                    {"role": "system", "content": "s"},
                    {"role": "user", "content": "a"},
                    {"role": "system", "content": "late"},
                    {"role": "assistant", "content": "b"},
                ]
            },
            {
                "messages": [
                    {"role": "user", "content": "a"},
                    {"role": "user", "content": "b"},
                    {"role": "assistant", "content": "c"},
                ]
            },
            {"messages": "hello"},
        ],
    )
    problems = load(data_args(dataset=[str(path)], on_error="skip"), allow_empty=True).report.problems
    got = [(p.line, p.field, p.reason.split(" (")[0]) for p in problems]
    assert got == [
        (1, "tools", "is not valid JSON"),
        (2, "messages[0].content", "must be a string, not int"),
        (3, "messages[2].role", "a system message may only come first"),
        (4, "messages[1].role", "two user turns in a row"),
        (5, "messages", "must be a list of messages, not str"),
    ]


def test_preference_and_pretrain_checks(tmp_path):
    pref = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {"prompt": "2+2?", "chosen": "4", "rejected": "5"},
            {"prompt": "2+2?", "chosen": "4"},
            {"prompt": "2+2?", "chosen": "4", "rejected": "4"},
            {"prompt": "2+2?", "chosen": "", "rejected": "5"},
        ],
    )
    loaded = load(data_args(dataset=[str(pref)], on_error="skip"), stage="dpo")
    assert [(p.line, p.field, p.reason) for p in loaded.report.problems] == [
        (2, "rejected", "missing"),
        (3, "rejected", "chosen and rejected answers are identical"),
        (4, "chosen", "empty chosen answer"),
    ]
    text = write_jsonl(tmp_path / "t.jsonl", [{"text": "ok"}, {"text": ""}, {"text": None}])
    loaded = load(data_args(dataset=[str(text)], on_error="skip"), stage="pt")
    assert [(p.line, p.field, p.reason) for p in loaded.report.problems] == [
        (2, "text", "empty text"),
        (3, "text", "missing"),
    ]


def test_image_placeholders_without_images(tmp_path):
    def row(text, images):
        return {
            "messages": [{"role": "user", "content": text}, {"role": "assistant", "content": "a cat"}],
            "images": images,
        }

    from PIL import Image

    Image.new("RGB", (8, 8)).save(tmp_path / "cat.png")  # media files are checked too (test_multimodal.py)
    path = write_jsonl(
        tmp_path / "mm.jsonl",
        [
            row("<image>What is this?", ["cat.png"]),
            row("<image><image>Compare", ["cat.png"]),
            row("What is this?", ["cat.png"]),
            row("<image>What is this?", []),
        ],
    )
    loaded = load(data_args(dataset=[str(path)], on_error="skip"), stage="mm-sft")
    assert [(p.line, p.field, p.reason) for p in loaded.report.problems] == [
        (2, "images", "2 <image> placeholder(s) in the messages but 1 images"),
        (3, "images", "1 images but only 0 <image> placeholder(s) in the messages"),
        (4, "images", "1 <image> placeholder(s) in the messages but 0 images"),
    ]
    assert loaded.dataset[0]["images"] == ["cat.png"]
    # multimodal rows are refused (once, not per row) by text-only sft
    with pytest.raises(OpenMindError) as err:
        load(data_args(dataset=[str(path)]), stage="sft")
    assert err.value.code == "OM-D012" and "images" in err.value.message


def test_missing_columns_and_unknown_format(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", [{"instruction": "q", "answer": "a"}])
    with pytest.raises(OpenMindError) as err:
        load(data_args(dataset=[str(path)]))
    assert err.value.code == "OM-D010" and "'output'" in err.value.message and "answer" in err.value.message
    path = write_jsonl(tmp_path / "b.jsonl", [{"foo": 1}])
    with pytest.raises(OpenMindError) as err:
        load(data_args(dataset=[str(path)]))
    assert err.value.code == "OM-D006" and "foo" in err.value.message
    (tmp_path / "c.docx").write_text("x")  # (.txt is read as text rows since issue 22)
    with pytest.raises(OpenMindError) as err:
        load(data_args(dataset=[str(tmp_path / "c.docx")]))
    assert err.value.code == "OM-D004"
    broken = tmp_path / "d.json"
    broken.write_text('[{"instruction": "q", "output": "a"},\n {"instruction": }]')
    with pytest.raises(OpenMindError) as err:
        load(data_args(dataset=[str(broken)]))
    assert err.value.code == "OM-D002" and err.value.location == f"{broken}:2"


def test_everything_rejected_is_an_error_with_totals(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", [{"messages": [{"role": "user", "content": "hi"}]}])
    with pytest.raises(OpenMindError) as err:
        load(data_args(dataset=[str(path)], on_error="skip"))
    assert err.value.code == "OM-D008" and "read 1, kept 0, rejected 1" in err.value.message
