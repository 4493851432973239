import pytest

from openmind.core import args as A


def test_yaml_and_flags_feed_the_same_fields(tmp_path):
    cfg = tmp_path / "sft.yaml"
    cfg.write_text("model: ./m\nlearning_rate: 1.0e-4\nfinetuning:\n  lora_rank: 4\ndataset: a,b\n")
    ns = A.parse(
        ["model", "data", "finetuning", "training"],
        config=cfg,
        overrides=["--lora-rank", "16", "--packing", "--num_train_epochs=2"],
    )
    assert ns.model.model == "./m"
    assert ns.training.learning_rate == 1e-4
    assert ns.finetuning.lora_rank == 16  # flags win over the file
    assert ns.data.packing is True
    assert ns.data.dataset == ["a", "b"]
    assert ns.training.num_train_epochs == 2.0
    assert {"model", "learning_rate", "lora_rank", "packing", "dataset", "num_train_epochs"} <= ns.explicit


def test_unknown_key_suggests(tmp_path):
    with pytest.raises(A.ArgumentError if hasattr(A, "ArgumentError") else Exception) as info:
        A.parse(["training"], overrides=["--learning-rat", "1"])
    assert info.value.code == "OM-A001"
    assert "learning_rate" in info.value.hint


def test_key_of_another_group_names_the_group():
    with pytest.raises(Exception) as info:
        A.parse(["model"], overrides={"lora_rank": 4})
    assert info.value.code == "OM-A001" and "finetuning" in info.value.message


@pytest.mark.parametrize(
    "key,value",
    [("lora_rank", "four"), ("packing", "maybe"), ("stage", "rlhf"), ("learning_rate", "fast"), ("lora_rank", "2.5")],
)
def test_bad_values(key, value):
    with pytest.raises(Exception) as info:
        A.parse(["data", "finetuning", "training"], overrides={key: value})
    assert info.value.code == "OM-A002" and key in info.value.message


def test_bad_yaml_reports_line(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("model: a\n  nested: [\n")
    with pytest.raises(Exception) as info:
        A.parse(["model"], config=cfg)
    assert info.value.code == "OM-A003" and str(cfg) in info.value.location


def test_non_mapping_file(tmp_path):
    cfg = tmp_path / "list.yaml"
    cfg.write_text("- a\n- b\n")
    with pytest.raises(Exception) as info:
        A.parse(["model"], config=cfg)
    assert info.value.code == "OM-A003"


def test_save_and_reload_run_folder(tmp_path):
    ns = A.parse(["model", "training"], overrides={"model": "m", "seed": 7})
    A.save(ns, tmp_path)
    base = A.load_run(tmp_path)
    again = A.parse(["model", "generation"], base=base, overrides={"max_new_tokens": 3})
    assert again.model.model == "m" and again.generation.max_new_tokens == 3
    assert A.load_run(tmp_path / "nope") is None


def test_optional_and_none():
    ns = A.parse(["model", "training"], overrides={"model_group": "none", "save_total_limit": "3"})
    assert ns.model.model_group is None and ns.training.save_total_limit == 3


def test_keys_unique_across_groups():
    index = A._key_index()
    assert len(index) == sum(len(c.__dataclass_fields__) for c in A.GROUPS.values())
