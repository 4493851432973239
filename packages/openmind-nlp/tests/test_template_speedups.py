"""openmind-speedups' C layout render inside the native templates (issue 17's speed rows).

A template instance renders a role sequence through its Python layout path the first time (which
caches the layout) and through ``openmind.speedups.fill_layout`` from then on. Both must give the
official template's text, for every stored revision that has a layout, over the revision matrix;
input the C side declines (content that is not text, unknown roles, an empty Phi-3.5 system
message) goes on to the Python paths and their coded errors, exactly as without the speedups.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import pytest
from test_template_revisions import DATE, MATRIX, NATIVE, official

from openmind.core.errors import OpenMindError
from openmind.nlp.templates import load_template

speedups = pytest.importorskip("openmind.speedups")

LAYOUT_STEMS = sorted(stem for stem, name in NATIVE.items() if load_template(name).layout is not None)


class Counting:
    """fill_layout, counting the calls it rendered (not None)."""

    def __init__(self):
        self.rendered = 0

    def __call__(self, *args):
        out = speedups.fill_layout(*args)
        self.rendered += out is not None
        return out


def outcome(template, messages, **kwargs):
    try:
        return template.render(copy.deepcopy(messages), **kwargs)
    except OpenMindError as exc:
        return exc.code


def test_layout_families_are_covered_and_the_module_is_built():
    assert speedups.AVAILABLE
    # the families of the bench's render rows that Python alone cannot take past 10x
    for stem in (
        "deepseek",
        "internlm2",
        "internlm2.5",
        "internlm3",
        "mistral-v7",
        "phi3",
        "phi3-mini",
        "phi4",
        "yi1.5",
    ):
        assert stem in LAYOUT_STEMS, stem
        assert load_template(NATIVE[stem])._fill is speedups.fill_layout


@pytest.mark.parametrize("generation", [False, True], ids=["no-gen", "gen"])
@pytest.mark.parametrize("stem", LAYOUT_STEMS)
def test_c_render_equals_python_and_official(stem, generation):
    native, pure = load_template(NATIVE[stem]), load_template(NATIVE[stem])
    pure._fill = None
    counting = native._fill = Counting()
    jinja = official(stem)
    kwargs = {"add_generation_prompt": generation, **DATE}
    for case, messages in sorted(MATRIX.items()):
        expected = outcome(jinja, messages, **kwargs)
        first, second = outcome(native, messages, **kwargs), outcome(native, messages, **kwargs)
        assert first == second == outcome(pure, messages, **kwargs), case
        if isinstance(expected, str) and expected.startswith("OM-"):
            assert isinstance(first, str) and first.startswith("OM-"), case
        else:
            assert second == expected, case
    assert counting.rendered > 0, "the C path never rendered: the layout cache is not reached"


@pytest.mark.parametrize("stem", ["phi4", "internlm2", "yi1.5", "deepseek", "mistral-v7"])
def test_declined_input_keeps_the_python_outcome(stem):
    native, pure = load_template(NATIVE[stem]), load_template(NATIVE[stem])
    pure._fill = None
    base = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yes"}]
    native.render(base)  # the layout of (user, assistant) is cached: the C side is asked first below
    bad = [
        [{"role": "user", "content": 5}, {"role": "assistant", "content": "yes"}],
        [{"role": "user", "content": ["a"]}, {"role": "assistant", "content": "yes"}],
        [{"role": "user"}, {"role": "assistant", "content": "yes"}],
        [{"role": "wizard", "content": "hi"}, {"role": "assistant", "content": "yes"}],
        [{"role": "user", "content": "hi"}, {"role": "user", "content": "again"}],
        [],
    ]
    for messages in bad:
        assert outcome(native, messages) == outcome(pure, messages), messages


def test_phi35_empty_system_message_leaves_the_c_path():
    """Phi-3.5 leaves out an empty system message: the layout holds only for a non-empty first content."""
    native, pure = load_template("phi3-mini"), load_template("phi3-mini")
    pure._fill = None
    for content in ("Be brief.", "", "Be brief.", ""):
        messages = [{"role": "system", "content": content}, {"role": "user", "content": "hi"}]
        assert native.render(messages) == pure.render(messages) == official("phi3-mini").render(messages)


def test_openmind_no_speedups_switches_it_off():
    code = "from openmind.nlp.templates import load_template; print(load_template('phi4')._fill)"
    env = {**os.environ, "OPENMIND_NO_SPEEDUPS": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None"
