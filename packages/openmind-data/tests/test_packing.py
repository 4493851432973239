"""Packing: nothing lost or duplicated, samples reproduced exactly, no attention across samples."""

import datasets
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openmind.data import packing as P


def _dataset(samples):
    return datasets.Dataset.from_dict(
        {"input_ids": [s[0] for s in samples], "labels": [s[1] for s in samples]},
        features=datasets.Features(
            {
                "input_ids": datasets.Sequence(datasets.Value("int32")),
                "labels": datasets.Sequence(datasets.Value("int32")),
            }
        ),
    )


_sample = st.integers(1, 24).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 31999), min_size=n, max_size=n),
        st.lists(st.one_of(st.just(-100), st.integers(0, 31999)), min_size=n, max_size=n),
    )
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_sample, min_size=1, max_size=40), st.integers(24, 64))
def test_packing_keeps_every_sample_exactly_once(samples, capacity):
    packed = P.pack(_dataset(samples), capacity)
    rows = packed.to_list()
    unpacked = [(tuple(s["input_ids"]), tuple(s["labels"])) for r in rows for s in P.unpack(r)]
    original = [(tuple(a), tuple(b)) for a, b in samples]
    assert sorted(unpacked) == sorted(original)  # no sample lost, none duplicated, tokens and masks aligned
    for r in rows:
        assert len(r["input_ids"]) == len(r["labels"]) == len(r["position_ids"]) <= capacity
        for s in P.unpack(r):
            assert len(s["input_ids"]) > 0
    # positions restart at 0 for every sample and count up inside it
    for r in rows:
        pos = r["position_ids"]
        assert pos[0] == 0 and all(b == a + 1 or b == 0 for a, b in zip(pos, pos[1:]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 100), min_size=0, max_size=200), st.integers(100, 300))
def test_plan_is_a_partition_within_capacity(lengths, capacity):
    bins = P.plan(lengths, capacity)
    flat = sorted(i for b in bins for i in b)
    assert flat == list(range(len(lengths)))
    assert all(sum(lengths[i] for i in b) <= capacity for b in bins)
    # best-fit decreasing never needs more than 11/9 OPT + 1 bins; OPT >= total / capacity
    assert len(bins) <= 11 / 9 * (-(-sum(lengths) // capacity)) + 1 + 1e-9


def test_split_long_pretraining_text_keeps_all_tokens():
    ds = _dataset([(list(range(10)), list(range(10))), (list(range(100, 103)), list(range(100, 103)))])
    chunks = P.split_long(ds, 4).to_list()
    assert [c["input_ids"] for c in chunks] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9], [100, 101, 102]]


def test_padding_stats():
    stats = P.padding_stats([10, 20, 30, 40], 50, packed_lengths=[50, 50], batch_size=2)
    assert stats["tokens"] == 100
    assert stats["padding_waste_before_cutoff"] == 0.5
    assert stats["padding_waste_before_batch2"] == round(1 - 100 / (2 * 20 + 2 * 40), 4)
    assert stats["padding_waste_after"] == 0.0 and stats["packed_sequences"] == 2


def test_prepare_with_packing_reproduces_unpacked_samples(tmp_path, llama2_tok, llama2_template):
    from data_helpers import chat, data_args, write_jsonl

    from openmind.data import prepare

    path = write_jsonl(tmp_path / "t.jsonl", [chat(i, turns=1 + i % 3) for i in range(40)])
    plain = prepare(data_args(dataset=[str(path)], cutoff_len=128), llama2_tok, llama2_template)
    packed = prepare(data_args(dataset=[str(path)], cutoff_len=128, packing=True), llama2_tok, llama2_template)
    original = sorted((tuple(r["input_ids"]), tuple(r["labels"])) for r in plain.train)
    again = sorted((tuple(s["input_ids"]), tuple(s["labels"])) for r in packed.train for s in P.unpack(r))
    assert again == original
    assert len(packed.train) < len(plain.train)
    assert packed.stats["padding_waste_after"] < packed.stats["padding_waste_before_cutoff"]
    assert packed.stats["packed_sequences"] == len(packed.train)


torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=1000,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
    )
    return config, LlamaForCausalLM(config).eval()


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
@pytest.mark.parametrize("mode", ["position_ids", "4d", "padding_free"])
def test_packed_forward_equals_unpacked(tiny_llama, attn, mode):
    """Neat packing: each packed sample's logits and loss equal those of the sample alone."""
    from openmind.data.adapters import torch_collator

    config, model = tiny_llama
    model.config._attn_implementation = attn
    rng = np.random.default_rng(0)
    samples = [rng.integers(3, 1000, size=n).tolist() for n in (7, 12, 5, 9)]
    labels = [[-100] * 2 + s[2:] for s in samples]
    ds = P.pack(_dataset(list(zip(samples, labels))), 20)
    collate = torch_collator(None, mask="4d" if mode == "4d" else "position_ids", padding_free=mode == "padding_free")
    batch = collate(ds.to_list())
    with torch.no_grad():
        assert batch["use_cache"] is False  # a KV cache would switch off transformers' packed-sequence masks
        logits = model(**{k: v for k, v in batch.items() if k != "labels"}).logits
        alone = {tuple(s): model(input_ids=torch.tensor([s])).logits[0] for s in samples}
    flat_ids = batch["input_ids"].reshape(-1).tolist()
    flat_pos = batch["position_ids"].reshape(-1).tolist()
    flat_logits = logits.reshape(-1, logits.shape[-1])
    seen = 0
    i = 0
    while i < len(flat_ids):
        j = i + 1
        while j < len(flat_ids) and flat_pos[j] != 0:
            j += 1
        key = tuple(flat_ids[i:j])
        if key in alone:
            torch.testing.assert_close(flat_logits[i:j], alone[key], atol=1e-4, rtol=1e-4)
            seen += 1
        i = j
    assert seen == len(samples)
    # the loss of the packed batch equals the token-weighted loss of the samples alone
    with torch.no_grad():
        packed_loss = model(**batch).loss
        total, count = 0.0, 0
        for s, lab in zip(samples, labels):
            n = sum(1 for x in lab[1:] if x != -100)
            total += model(input_ids=torch.tensor([s]), labels=torch.tensor([lab])).loss * n
            count += n
    torch.testing.assert_close(packed_loss, total / count, atol=1e-4, rtol=1e-4)
