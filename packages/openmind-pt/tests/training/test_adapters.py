"""The torch adapters (moved from openmind-data to openmind-pt): the collator pads and masks, and neat
packing keeps samples apart: each packed sample's logits and loss equal those of the sample alone."""

import datasets
import numpy as np
import pytest

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
    from openmind.pt.training.adapters import torch_collator

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


def test_torch_collator_pads_and_masks():
    torch = pytest.importorskip("torch")
    from openmind.pt.training.adapters import torch_collator

    class Tok:
        pad_token_id = None
        eos_token_id = 2
        padding_side = "right"

    batch = torch_collator(Tok(), pad_to_multiple_of=4)(
        [{"input_ids": [1, 5, 6], "labels": [-100, 5, 6]}, {"input_ids": [1, 7], "labels": [-100, 7]}]
    )
    assert batch["input_ids"].tolist() == [[1, 5, 6, 2], [1, 7, 2, 2]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1, 0], [1, 1, 0, 0]]
    assert batch["labels"].tolist() == [[-100, 5, 6, -100], [-100, 7, -100, -100]]
    assert batch["input_ids"].dtype == torch.long
    pairs = torch_collator(Tok())(
        [
            {
                "chosen_input_ids": [1, 2],
                "chosen_labels": [-100, 2],
                "rejected_input_ids": [1, 3, 2],
                "rejected_labels": [-100, 3, 2],
            }
        ]
    )
    assert pairs["input_ids"].tolist() == [[1, 2, 2], [1, 3, 2]]
    assert pairs["labels"].tolist() == [[-100, 2, -100], [-100, 3, 2]]
    packed = torch_collator(Tok(), padding_free=True)(
        [
            {"input_ids": [1, 5, 1, 6], "labels": [1, 5, 1, 6], "position_ids": [0, 1, 0, 1]},
            {"input_ids": [1, 7], "labels": [1, 7], "position_ids": [0, 1]},
        ]
    )
    assert packed["input_ids"].tolist() == [[1, 5, 1, 6, 1, 7]]
    assert packed["labels"].tolist() == [[-100, 5, -100, 6, -100, 7]]  # no loss across sample boundaries
    assert packed["position_ids"].tolist() == [[0, 1, 0, 1, 0, 1]]


def test_old_import_path_still_resolves():
    from openmind.data import adapters
    from openmind.pt.training import adapters as moved

    assert adapters.torch_collator is moved.torch_collator and adapters.trl_preference is moved.trl_preference


def test_trl_preference_layout(tmp_path):
    """Prepared preference rows -> trl's columns: the shared prompt, then each answer (moved from openmind-data)."""
    import json

    from openmind.core.args import DataArguments
    from openmind.data import prepare
    from openmind.nlp.templates import load_template
    from openmind.nlp.testing.assets import llama2_tokenizer
    from openmind.pt.training.adapters import trl_preference

    tok, template = llama2_tokenizer(), load_template("llama2")
    pref = tmp_path / "p.jsonl"
    pref.write_text(json.dumps({"prompt": "2+2?", "chosen": "It is 4.", "rejected": "It is 5."}) + "\n")
    args = DataArguments(dataset=[str(pref)], data_cache_dir=str(tmp_path / "cache"))
    row = prepare(args, tok, template, stage="dpo").train[0]
    trl = trl_preference(prepare(args, tok, template, stage="dpo").train, "dpo")[0]
    assert trl["prompt_ids"] + trl["chosen_ids"] == row["chosen_input_ids"]
    assert trl["prompt_ids"] + trl["rejected_ids"] == row["rejected_input_ids"]
    assert tok.decode(trl["chosen_ids"]) == "It is 4. </s>"
    rm = trl_preference(prepare(args, tok, template, stage="rm").train, "rm")
    assert rm[0]["chosen_ids"] == row["chosen_input_ids"]
