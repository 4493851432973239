"""openmind.speedups.fill_layout: exactly the Python layout render, or None (never a different text).

The Python reference is what openmind-nlp's layout path does with the same cache: the texts cached
for the role sequence, the contents at their odd places, one join. openmind-nlp's tests render every
template revision both ways (tests/test_template_speedups.py in openmind-nlp).
"""

from __future__ import annotations

import gc
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import openmind.speedups as speedups

fill_layout = speedups.fill_layout


def test_the_compiled_module_is_built():
    # the test environments install it from source with a compiler: a missing module here is a
    # failed build, not the optional fallback
    assert speedups.AVAILABLE, "openmind.speedups._templates was not built"
    assert speedups.__version__.count(".") == 2


def reference(cache: dict, messages: list, needs_first_content: bool) -> str | None:
    roles = tuple(m["role"] for m in messages)
    texts = cache.get(roles)
    if texts is None:
        return None
    out = texts[:]
    out[1::2] = [m["content"] for m in messages]
    if needs_first_content and not out[1]:
        return None
    return "".join(out)


def layout(roles) -> list:
    """A cache entry as openmind-nlp makes it: texts at the even places, the odd ones for the contents."""
    out = [None] * (2 * len(roles) + 1)
    out[0::2] = [f"[{i}:{r}]" for i, r in enumerate(("bos", *roles))]
    return out


TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
ROLE = st.sampled_from(["system", "user", "assistant", "tool"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(ROLE, TEXT), min_size=1, max_size=9), st.booleans())
def test_equals_the_python_join(pairs, needs_first):
    messages = [{"role": r, "content": c} for r, c in pairs]
    cache = {tuple(r for r, _ in pairs): layout([r for r, _ in pairs])}
    expected = reference(cache, messages, needs_first)
    assert fill_layout(cache, messages, needs_first) == expected
    if needs_first and not pairs[0][1]:
        assert expected is None


def test_unicode_and_large_contents():
    messages = [
        {"role": "system", "content": "系统 \u2028 \x00 end"},
        {"role": "user", "content": "x" * 100_000 + "😀"},
        {"role": "assistant", "content": "é"},
    ]
    cache = {("system", "user", "assistant"): layout(["system", "user", "assistant"])}
    assert fill_layout(cache, messages, False) == reference(cache, messages, False)


@pytest.mark.parametrize("n", [1, 63, 64, 65, 300])  # contents held on the stack up to 64, then on the heap
def test_long_conversations_and_every_character_width(n):
    widths = ["ascii", "latin-1 é", "bmp 你好", "astral 😀", ""]
    roles = [("user", "assistant")[i % 2] for i in range(n)]
    messages = [{"role": r, "content": widths[i % len(widths)] * (i % 3)} for i, r in enumerate(roles)]
    cache = {tuple(roles): layout(roles)}
    assert fill_layout(cache, messages, False) == reference(cache, messages, False)
    # wide template texts around narrow contents
    wide = [t if t is None else t + "系统" for t in layout(roles)]
    narrow = [{"role": r, "content": "x"} for r in roles]
    assert fill_layout({tuple(roles): wide}, narrow, False) == reference({tuple(roles): wide}, narrow, False)


class Sub(str):
    pass


class DictSub(dict):
    pass


@pytest.mark.parametrize(
    "messages",
    [
        [],  # nothing to render: the Python path raises its own miss
        [{"role": "user"}],  # no content
        [{"content": "hi"}],  # no role
        [{"role": "user", "content": ["a", "list"]}],  # not text
        [{"role": "user", "content": None}],
        [{"role": "user", "content": Sub("hi")}],  # a str subclass: the Python path decides
        [{"role": Sub("user"), "content": "hi"}],
        [DictSub(role="user", content="hi")],  # a dict subclass may override __getitem__
        [("user", "hi")],  # not a dict
        [{"role": "nobody", "content": "hi"}],  # a role sequence not in the cache
    ],
)
def test_declines_what_is_not_the_plain_case(messages):
    cache = {("user",): layout(["user"]), (): [""]}
    assert fill_layout(cache, messages, False) is None


def test_declines_other_containers_and_bad_cache_entries():
    messages = [{"role": "user", "content": "hi"}]
    assert fill_layout({("user",): layout(["user"])}, tuple(messages), False) is None
    assert fill_layout({("user",): ("a", None, "b")}, messages, False) is None  # not a list
    assert fill_layout({("user",): ["a", None]}, messages, False) is None  # wrong length
    assert fill_layout({("user",): ["a", None, 3]}, messages, False) is None  # a text that is not str
    assert fill_layout(dict_sub := DictSub({("user",): layout(["user"])}), messages, False) is None
    assert isinstance(dict_sub, dict)
    assert fill_layout({("user",): ["a", None, "b"]}, messages, False) == "ahib"
    # the cached list is read, never written
    cached = ["a", None, "b"]
    fill_layout({("user",): cached}, messages, False)
    assert cached == ["a", None, "b"]


def test_needs_first_content():
    cache = {("system", "user"): ["<", None, "|", None, ">"]}
    empty_system = [{"role": "system", "content": ""}, {"role": "user", "content": "q"}]
    assert fill_layout(cache, empty_system, True) is None
    assert fill_layout(cache, empty_system, False) == "<|q>"
    assert fill_layout(cache, empty_system, 0) == "<|q>"


def test_argument_errors():
    with pytest.raises(TypeError):
        fill_layout({}, [])

    class Bad:
        def __bool__(self):
            raise RuntimeError("no truth value")

    with pytest.raises(RuntimeError):
        fill_layout({}, [{"role": "user", "content": "x"}], Bad())


def test_a_key_whose_eq_changes_the_list_is_safe():
    """A dict lookup can run Python code (a colliding key's __eq__); the messages may change under it."""
    messages: list = []

    class Evil:
        def __hash__(self):
            return hash("role")

        def __eq__(self, other):
            messages.clear()
            return False

    messages += [{Evil(): 1, "role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    cache = {("user", "user"): ["<", None, "|", None, ">"]}
    assert fill_layout(cache, messages, False) is None  # the list changed: declined, no crash
    assert messages == []


def test_no_reference_leaks():
    messages = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "world"}]
    cache = {("user", "assistant"): ["[", None, "|", None, "]"]}
    declined = [{"role": "user", "content": 1}]

    def run():
        for _ in range(2000):
            fill_layout(cache, messages, False)
            fill_layout(cache, declined, False)
            fill_layout(cache, [{"role": "system", "content": "x"}], False)

    run()
    gc.collect()
    before = sys.getrefcount(messages[0]["content"]), sys.getrefcount(cache[("user", "assistant")][0])
    total = sys.gettotalrefcount() if hasattr(sys, "gettotalrefcount") else None
    run()
    gc.collect()
    after = sys.getrefcount(messages[0]["content"]), sys.getrefcount(cache[("user", "assistant")][0])
    assert before == after
    if total is not None:
        assert abs(sys.gettotalrefcount() - total) < 100
