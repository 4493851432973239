"""The Train form cannot drift from the CLI: it is generated from the argument groups of
`openmind train`, and what it writes is read back by core exactly as `openmind train CONFIG.yaml`."""

from __future__ import annotations

import dataclasses

import pytest

from openmind.core import args as A
from openmind.core.errors import OpenMindError
from openmind.webui import forms as F
from openmind.webui.app import Page
from openmind.webui.help_zh import HELP_ZH
from openmind.webui.i18n import LANGUAGES, STRINGS, t

#: the groups the issue names for the Train form
TRAIN_GROUPS = ("model", "template", "data", "finetuning", "training")


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    page = Page(tmp_path_factory.mktemp("root"))
    page.demo = page.build()
    return page


def test_element_ids_are_unique(page):
    # a generated field must never take the id of a button (the `resume` field vs the Resume button)
    ids = [b.elem_id for b in page.demo.blocks.values() if getattr(b, "elem_id", None)]
    assert len(ids) > 150
    assert sorted(i for i in set(ids) if ids.count(i) > 1) == []


def test_train_groups_are_the_train_verbs(page):
    from openmind.core.plugins import get_registry

    assert F.train_groups() == TRAIN_GROUPS == tuple(get_registry().command("train").load().groups)


def test_every_field_of_the_training_groups_is_in_the_train_form(page):
    expected = [f.name for g in TRAIN_GROUPS for f in dataclasses.fields(A.GROUPS[g])]
    assert list(page.train_inputs) == expected
    for group in TRAIN_GROUPS:
        for f in dataclasses.fields(A.GROUPS[group]):
            comp = page.train_inputs[f.name]
            assert comp.label == f.name
            assert comp.info == f.metadata.get("help")
            assert comp.elem_id == "om-train-" + f.name.replace("_", "-")
            choices = A.choices_of(f)
            if choices:
                assert [c[1] if isinstance(c, tuple) else c for c in comp.choices] == list(choices)


def test_untouched_form_writes_nothing_but_what_was_changed(page):
    form = F.fields(TRAIN_GROUPS)
    values = [F.initial(f) for f in form]
    assert F.collect(form, values) == {}
    by_name = {f.name: i for i, f in enumerate(form)}
    values[by_name["lora_rank"]] = 16
    values[by_name["dataset"]] = "a.jsonl, b.jsonl"
    values[by_name["max_samples"]] = "100"
    values[by_name["packing"]] = True
    values[by_name["learning_rate"]] = 0.001
    nested = F.collect(form, values)
    assert nested == {
        "data": {"dataset": ["a.jsonl", "b.jsonl"], "packing": True, "max_samples": 100},
        "finetuning": {"lora_rank": 16},
        "training": {"learning_rate": 0.001},
    }


def test_the_yaml_it_writes_resolves_like_the_cli(tmp_path):
    form = F.fields(TRAIN_GROUPS)
    values = {f.name: F.initial(f) for f in form}
    values.update(model="./tiny", dataset="train.jsonl", stage="dpo", cutoff_len=256)
    values["lora_target"] = "q_proj,v_proj"
    values["save_total_limit"] = "2"
    nested = F.collect(form, [values[f.name] for f in form])
    path = tmp_path / "config.yaml"
    path.write_text(F.to_yaml(nested))
    from_page = F.check(TRAIN_GROUPS, nested).to_dict()
    from_cli = A.parse(TRAIN_GROUPS, config=str(path)).to_dict()
    assert from_page == from_cli
    assert from_cli["finetuning"]["lora_target"] == ["q_proj", "v_proj"]
    assert from_cli["training"]["save_total_limit"] == 2


def test_a_bad_value_is_refused_with_the_field_named():
    form = F.fields(TRAIN_GROUPS)
    values = [F.initial(f) for f in form]
    values[[f.name for f in form].index("lora_alpha")] = "sixteen"
    with pytest.raises(OpenMindError) as info:
        F.collect(form, values, where="Train")
    assert info.value.code == "OM-A002"
    assert "lora_alpha" in str(info.value) and info.value.location == "Train field lora_alpha"


def test_every_text_has_both_languages_and_every_label_is_translated(page):
    for key, (en, zh) in STRINGS.items():
        assert en.strip() and zh.strip() and en != zh, key
    assert set(LANGUAGES) == {"en", "zh"}
    keys = [key for _, key, _ in page.labels]
    assert len(keys) > 60
    assert all(key in STRINGS for key in keys)
    updates = page.relabel("zh")
    assert len(updates) == len(page.labels) + len(page.field_inputs) == len(page.translated())
    for (_, key, attr), update in zip(page.labels, updates[: len(page.labels)], strict=True):
        assert update[attr] == t(key, "zh")
    # the generated inputs keep their keys as labels; their help follows the language
    field_updates = updates[len(page.labels) :]
    for (comp, field), update in zip(page.field_inputs, field_updates, strict=True):
        assert comp.label == field.name
        assert update["info"] == HELP_ZH[field.name] != field.help
    assert [u["info"] for u in page.relabel("en")[len(page.labels) :]] == [f.help for _, f in page.field_inputs]


def test_chinese_help_is_keyed_by_real_fields():
    every = {f.name for group in A.GROUPS for f in dataclasses.fields(A.GROUPS[group])}
    assert set(HELP_ZH) <= every, set(HELP_ZH) - every
