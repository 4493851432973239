"""Fuzz-style (hypothesis): whatever bytes a data file holds, the readers either load it or raise a
coded data/argument error — never OM-P004, never an uncoded exception, never a crash."""

from __future__ import annotations

import json
import uuid

import pytest
from data_helpers import data_args
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from openmind.core.errors import OpenMindError
from openmind.data.loading import load

_SETTINGS = settings(
    max_examples=25,
    derandomize=True,  # the same examples on every run (CI stays reproducible)
    deadline=None,
    # no shrinking: each example loads a dataset (~0.1 s), shrinking a failure took minutes
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20))
_json_value = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
_row = st.one_of(
    _json_value,
    st.fixed_dictionaries(
        {"instruction": _json_value, "output": _json_value},
        optional={"input": _json_value, "system": _json_value, "history": _json_value},
    ),
    st.fixed_dictionaries(
        {"messages": st.lists(st.fixed_dictionaries({"role": _json_value, "content": _json_value}), max_size=4)}
    ),
)
_noise = st.binary(max_size=300) | st.sampled_from(
    [b"\xff\xfe", b'{"a": "\xe9"}\n', '{"instruction": "\u4f60"}\n'.encode("gbk"), b"[" * 300, b'"' * 7, b"\x00"]
)


def _check(path, stage):
    try:
        load(data_args(dataset=[str(path)], on_error="skip"), stage=stage)
    except OpenMindError as exc:
        assert exc.code != "OM-P004", exc
        assert exc.code.startswith(("OM-D", "OM-A")), exc
        assert exc.location, exc  # every data error says where


def _file(tmp_path, suffix, body: bytes):
    path = tmp_path / f"{uuid.uuid4().hex}{suffix}"
    path.write_bytes(body)
    return path


@_SETTINGS
@given(rows=st.lists(_row, max_size=5), noise=st.lists(_noise, max_size=2), stage=st.sampled_from(["sft", "pt"]))
def test_jsonl_files(tmp_path, rows, noise, stage):
    lines = [json.dumps(r).encode() for r in rows] + list(noise)
    _check(_file(tmp_path, ".jsonl", b"\n".join(lines)), stage)


@_SETTINGS
@given(rows=st.lists(_row, max_size=5), cut=st.integers(0, 400))
def test_json_array_files(tmp_path, rows, cut):
    body = json.dumps(rows).encode()
    _check(_file(tmp_path, ".json", body[: cut or None]), "sft")


@_SETTINGS
@given(
    cells=st.lists(st.lists(st.text(max_size=12), min_size=1, max_size=4), max_size=6),
    noise=st.lists(_noise, max_size=2),
)
def test_csv_files(tmp_path, cells, noise):
    text = "instruction,output\n" + "\n".join(",".join(row) for row in cells)
    _check(_file(tmp_path, ".csv", text.encode("utf-8", "surrogatepass") + b"".join(noise)), "sft")


@_SETTINGS
@given(body=st.binary(max_size=400) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")))
@pytest.mark.parametrize("suffix", [".txt", ".jsonl", ".json", ".csv"])
def test_arbitrary_bytes(tmp_path, suffix, body):
    _check(_file(tmp_path, suffix, body), "pt" if suffix == ".txt" else "sft")
