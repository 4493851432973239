"""The static-cache decode fast path gives exactly ``model.generate``'s tokens (three architectures,
greedy and seeded sampling), falls back to ``generate`` for what it does not cover, and the
pipeline uses it."""

from __future__ import annotations

import logging

import pytest
import torch

from openmind.pt.pipelines.fastpath import StaticDecoder

PROMPTS = [
    "Hello there, how are you today?",
    "Write one line about the sea.",
    "Q: what is two plus two, and why does it matter so much to people who count things? A:",
]


def _save(folder, arch: str):
    """A tiny random model of ``arch`` with a real tokenizer (Llama-2's, or Mistral's SentencePiece v1)."""
    import transformers

    from openmind.nlp.testing import assets

    common = dict(
        vocab_size=32000,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=1,
        eos_token_id=2,
        tie_word_embeddings=False,
    )
    if arch == "llama":
        assets.save_llama2_tokenizer(folder)
        config = transformers.LlamaConfig(**common)
        cls = transformers.LlamaForCausalLM
    elif arch == "qwen2":
        assets.save_llama2_tokenizer(folder)
        # transformers loads this folder's tokenizer as a Qwen2Tokenizer, which adds <|endoftext|> (id 32000)
        config = transformers.Qwen2Config(**{**common, "vocab_size": 32064})
        cls = transformers.Qwen2ForCausalLM
    elif arch == "mistral":
        assets.save_mistral_tokenizer(folder)
        config = transformers.MistralConfig(**common, sliding_window=None)
        cls = transformers.MistralForCausalLM
    else:
        raise ValueError(arch)
    torch.manual_seed(7)
    model = cls(config)
    model.generation_config.pad_token_id = 2
    model.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module", params=["llama", "qwen2", "mistral"])
def loaded(request, tmp_path_factory):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = _save(tmp_path_factory.mktemp(f"tiny-{request.param}"), request.param)
    tokenizer = AutoTokenizer.from_pretrained(folder, padding_side="left")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    enc = tokenizer(PROMPTS, return_tensors="pt", padding=True)
    return request.param, folder, model, enc


def _both(model, enc, seed: int | None = None, **kwargs):
    decoder = StaticDecoder(model)
    cfg = decoder.config_for(kwargs)
    assert decoder.reason(cfg, logprobs=False) is None
    with torch.inference_mode():
        if seed is not None:
            torch.manual_seed(seed)
        reference = model.generate(**enc, **kwargs)
        if seed is not None:
            torch.manual_seed(seed)
        fast = decoder.generate(enc["input_ids"], enc["attention_mask"], cfg)
        if seed is not None:
            torch.manual_seed(seed)
        again = decoder.generate(enc["input_ids"], enc["attention_mask"], cfg)  # the cache is reused
    return reference, fast, again


def test_greedy_tokens_equal_generate(loaded):
    _, _, model, enc = loaded
    reference, fast, again = _both(model, enc, max_new_tokens=40, do_sample=False, pad_token_id=2)
    assert fast.tolist() == reference.tolist()
    assert again.tolist() == reference.tolist()
    # a batch of one (no padding) and each row alone
    for row in range(len(PROMPTS)):
        ids = enc["input_ids"][row : row + 1, enc["attention_mask"][row].argmax() :]
        one = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        reference, fast, _ = _both(model, one, max_new_tokens=12, do_sample=False, pad_token_id=2)
        assert fast.tolist() == reference.tolist()


def _steps(decoder, model, enc, steps: int = 12):
    """Greedy decode steps of ``decoder``'s step function after a prefill: the logits of each step."""
    ids, mask = enc["input_ids"], enc["attention_mask"]
    batch, width = ids.shape
    valid = torch.zeros((batch, 128), dtype=torch.bool)
    valid[:, :width] = mask.bool()
    positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
    step, out = decoder.step_fn(), []
    with torch.inference_mode():
        cache = decoder.cache(batch, 128)
        logits = model(input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache, use_cache=True).logits
        position = positions[:, -1:]
        for t in range(steps):
            chosen = logits[:, -1].argmax(-1)
            valid[:, width + t] = True
            position = position + 1
            logits = step(chosen[:, None], decoder.step_mask(valid), position, cache)
            out.append(logits.clone())
    return torch.cat(out, dim=1), [int(layer.cumulative_length) for layer in cache.layers]


def test_traced_step_equals_the_module_step_bit_for_bit(loaded, monkeypatch):
    """The traced step runs the modules' own operations: the same logits to the last bit (not
    only the same tokens) as the lean step that calls the modules, and the cache's own state
    (running lengths) advanced the same way."""
    arch, _, model, enc = loaded
    traced = StaticDecoder(model)
    assert traced.trace_reason is None
    fast, lengths = _steps(traced, model, enc)
    assert traced._traced, "the step was not traced"
    assert traced.trace_reason is None
    monkeypatch.setenv("OPENMIND_FAST_DECODE", "lean")
    lean = StaticDecoder(model)
    slow, lengths_lean = _steps(lean, model, enc)
    assert not lean._traced
    assert torch.equal(fast, slow), arch
    assert lengths == lengths_lean


@pytest.mark.parametrize("frozen", [False, True])
def test_traced_prefill_equals_the_forward_bit_for_bit(loaded, frozen):
    """The prompt's forward through the traced function (the mask from transformers'
    create_causal_mask, as the model makes it) gives the model forward's logits and cache to the
    last bit: a left-padded batch (a 4-D mask) and a single unpadded row, with the weights as
    loaded (Parameters requiring grad) and frozen (torch's matmul takes another path for the head's
    strided input then: 1 ulp apart, so the traced function must follow it)."""
    arch, _, model, enc = loaded
    first = enc["attention_mask"][0].argmax()
    single = {"input_ids": enc["input_ids"][:1, first:], "attention_mask": enc["attention_mask"][:1, first:]}
    if frozen:
        model.requires_grad_(False)
    try:
        for inputs in (enc, single):
            ids, mask = inputs["input_ids"], inputs["attention_mask"]
            positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
            traced = StaticDecoder(model)
            with torch.inference_mode():
                cache = traced.cache(ids.shape[0], 128)
                fast = traced.prefill(ids, mask, positions, cache)
                fast_cache = [
                    (layer.keys.clone(), layer.values.clone(), int(layer.cumulative_length)) for layer in cache.layers
                ]
                reference_cache = StaticDecoder(model).cache(ids.shape[0], 128)
                reference = model(
                    input_ids=ids,
                    attention_mask=mask,
                    position_ids=positions,
                    cache=reference_cache,
                    use_cache=True,
                    logits_to_keep=1,
                ).logits
            assert any(key[1] == ids.shape[1] for key in traced._traced), "the prefill was not traced"
            assert torch.equal(fast, reference), (arch, ids.shape)
            for (k, v, n), layer in zip(fast_cache, reference_cache.layers):
                assert torch.equal(k, layer.keys) and torch.equal(v, layer.values)
                assert n == int(layer.cumulative_length)
    finally:
        model.requires_grad_(True)


def test_prefill_masks_are_reused_only_for_the_same_layout(loaded):
    """The prefill's mask is kept per prompt layout (shape, padding, positions): the same layout
    reuses it, a batch of the same shape padded elsewhere gets its own, and both prefill exactly as
    the model's forward."""
    _, _, model, enc = loaded
    ids, mask = enc["input_ids"], enc["attention_mask"]
    flipped_ids, flipped_mask = ids.flip(0), mask.flip(0)  # the same shape, the padding on other rows
    assert not torch.equal(mask, flipped_mask)
    decoder = StaticDecoder(model)
    for ids_, mask_, entries in ((ids, mask, 1), (ids, mask, 1), (flipped_ids, flipped_mask, 2)):
        positions = (mask_.cumsum(-1) - 1).masked_fill(mask_ == 0, 0)
        with torch.inference_mode():
            fast = decoder.prefill(ids_, mask_, positions, decoder.cache(ids_.shape[0], 128))
            reference = model(
                input_ids=ids_,
                attention_mask=mask_,
                position_ids=positions,
                cache=StaticDecoder(model).cache(ids_.shape[0], 128),
                use_cache=True,
                logits_to_keep=1,
            ).logits
        assert torch.equal(fast, reference)
        assert len(decoder._masks) == entries


def test_traced_step_sees_weights_changed_in_place(loaded):
    """Recordings share the model's weight storage: an in-place update (training in the same
    process, a merged adapter) changes what the next call computes, without re-tracing."""
    _, _, model, enc = loaded
    decoder = StaticDecoder(model)
    before, _ = _steps(decoder, model, enc, steps=3)
    weight = model.lm_head.weight
    saved = weight.detach().clone()
    try:
        with torch.no_grad():
            weight.mul_(-1)
        after, _ = _steps(decoder, model, enc, steps=3)
        assert len(decoder._traced) == 1  # the same recording
        assert not torch.equal(before, after)
        fresh, _ = _steps(StaticDecoder(model), model, enc, steps=3)
        assert torch.equal(after, fresh)
    finally:
        with torch.no_grad():
            weight.copy_(saved)


def test_patched_layers_are_not_traced(loaded):
    """A module whose forward is not the library's own (a hub kernel, a patch) is not rewritten:
    the module-calling step runs it, and the reason is kept."""
    _, _, model, enc = loaded
    norm = model.model.norm
    norm.forward = type(norm).forward.__get__(norm)  # an instance-level forward: someone patched it
    try:
        decoder = StaticDecoder(model)
        _steps(decoder, model, enc, steps=2)
        assert not decoder._traced
        assert "library's own forward" in decoder.trace_reason
    finally:
        del norm.forward


def test_a_rotary_function_other_than_the_librarys_is_not_rewritten(loaded, monkeypatch):
    """The traced step writes apply_rotary_pos_emb's operations out (its split point a constant);
    where the model's module has another function there (a hub kernel, another formula), the
    module-calling step runs that one and the reason is kept."""
    import importlib

    _, _, model, enc = loaded
    home = importlib.import_module(type(model).__module__)
    original = home.apply_rotary_pos_emb

    def other(q, k, cos, sin, unsqueeze_dim=1):
        q, k = original(q, k, cos, sin, unsqueeze_dim)
        return q * 0.5, k

    monkeypatch.setattr(home, "apply_rotary_pos_emb", other)
    decoder = StaticDecoder(model)
    _steps(decoder, model, enc, steps=2)
    assert not decoder._traced
    assert "apply_rotary_pos_emb" in decoder.trace_reason
    monkeypatch.setattr(home, "apply_rotary_pos_emb", original)
    decoder = StaticDecoder(model)
    _steps(decoder, model, enc, steps=2)
    assert decoder._traced and decoder.trace_reason is None


def test_eos_stops_rows_like_generate(loaded):
    _, _, model, enc = loaded
    free, _, _ = _both(model, enc, max_new_tokens=16, do_sample=False, pad_token_id=2)
    width = enc["input_ids"].shape[1]
    # make the 5th token of row 0 and the 9th of row 1 end their rows: the others keep going
    eos = [int(free[0, width + 4]), int(free[1, width + 8])]
    reference, fast, _ = _both(model, enc, max_new_tokens=16, do_sample=False, eos_token_id=eos, pad_token_id=0)
    assert fast.tolist() == reference.tolist()
    assert (reference[0, width + 5 :] == 0).all()
    # one end-of-sequence id (compared as a scalar on the fast path): row 0 ends, row 1 keeps going
    reference, fast, _ = _both(model, enc, max_new_tokens=16, do_sample=False, eos_token_id=eos[0], pad_token_id=0)
    assert fast.tolist() == reference.tolist()
    assert (reference[0, width + 5 :] == 0).all() and reference.shape[1] == width + 16


def test_seeded_sampling_draws_the_same_tokens(loaded):
    _, _, model, enc = loaded
    kwargs = dict(max_new_tokens=24, do_sample=True, temperature=0.7, top_k=40, top_p=0.9, pad_token_id=2)
    reference, fast, again = _both(model, enc, seed=11, **kwargs)
    assert fast.tolist() == reference.tolist() == again.tolist()
    other, _, _ = _both(model, enc, seed=12, **kwargs)
    assert other.tolist() != reference.tolist()  # the seed matters: the test can fail


def test_repetition_penalty_and_min_p(loaded):
    _, _, model, enc = loaded
    reference, fast, _ = _both(model, enc, max_new_tokens=20, do_sample=False, repetition_penalty=1.3, pad_token_id=2)
    assert fast.tolist() == reference.tolist()
    kwargs = dict(max_new_tokens=20, do_sample=True, min_p=0.05, pad_token_id=2)
    reference, fast, _ = _both(model, enc, seed=3, **kwargs)
    assert fast.tolist() == reference.tolist()


def test_merged_generation_config_is_reused_until_something_changes(loaded):
    _, _, model, _ = loaded
    decoder = StaticDecoder(model)
    first = decoder.config_for({"max_new_tokens": 4, "eos_token_id": [2]})
    assert decoder.config_for({"max_new_tokens": 4, "eos_token_id": [2]}) is first
    assert decoder.config_for({"max_new_tokens": 5, "eos_token_id": [2]}).max_new_tokens == 5
    saved = model.generation_config.repetition_penalty
    try:  # the model's own generation_config edited in place: merged again
        model.generation_config.repetition_penalty = 1.7
        again = decoder.config_for({"max_new_tokens": 4, "eos_token_id": [2]})
        assert again is not first and again.repetition_penalty == 1.7
    finally:
        model.generation_config.repetition_penalty = saved


def test_argmax_is_torch_argmax_including_ties_and_nan():
    from openmind.pt.pipelines.fastpath import argmax

    torch.manual_seed(0)
    scores = torch.randn(6, 32000)
    scores[1, 7] = scores[1, 9000] = scores[1].max() + 1  # a tie: the first index wins
    scores[2, 3] = float("nan")  # a NaN is the largest value
    scores[3, 5] = scores[3, 17] = float("nan")
    scores[4] = float("-inf")
    scores[5, 11] = -0.0
    scores[5, 12] = 0.0
    scores[5, 13:] = -1.0
    scores[5, :11] = -1.0
    for rows in (scores, scores[:1], scores.to(torch.float64), scores.to(torch.bfloat16)):
        assert argmax(rows).tolist() == torch.argmax(rows, dim=-1).tolist()
        assert argmax(rows).dtype == torch.argmax(rows, dim=-1).dtype


def test_uncovered_options_fall_back_with_a_reason(loaded):
    _, _, model, _ = loaded
    decoder = StaticDecoder(model)
    assert decoder.reason(decoder.config_for({"num_beams": 2, "max_new_tokens": 4}), logprobs=False) == "beam search"
    assert decoder.reason(decoder.config_for({"max_new_tokens": 4}), logprobs=True) == "logprobs requested"
    reason = decoder.reason(decoder.config_for({"max_new_tokens": 4, "no_repeat_ngram_size": 2}), logprobs=False)
    assert reason == "generation option no_repeat_ngram_size=2"


def test_models_it_does_not_cover(tmp_path, monkeypatch):
    import transformers

    config = transformers.MistralConfig(
        vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2
    )
    config.sliding_window = 16
    assert "sliding" in StaticDecoder(transformers.MistralForCausalLM(config)).model_reason
    llama = transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2
        )
    )
    assert StaticDecoder(llama).model_reason is None
    monkeypatch.setenv("OPENMIND_FAST_DECODE", "0")
    assert StaticDecoder(llama).model_reason == "disabled by OPENMIND_FAST_DECODE=0"


def test_pipeline_uses_the_fast_path_and_logs_fallbacks_once(loaded, monkeypatch, caplog):
    from openmind import pipeline
    from openmind.pt.pipelines import fastpath

    arch, folder, model, _ = loaded
    chat = pipeline("text-generation", model=str(folder), max_new_tokens=12, temperature=0)
    backend = chat.backend
    calls = []
    original = StaticDecoder.generate

    def spy(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(StaticDecoder, "generate", spy)
    outs = chat(PROMPTS, batch_size=3)
    assert len(calls) == 1
    # the same texts through model.generate
    monkeypatch.setattr(fastpath, "_logged", set())
    with caplog.at_level(logging.INFO, logger="openmind.pt.fastpath"):
        monkeypatch.setattr(backend, "_decoder", None)
        monkeypatch.setenv("OPENMIND_FAST_DECODE", "0")
        slow = chat(PROMPTS, batch_size=3)
        chat(PROMPTS[:1])
    assert len(calls) == 1
    assert [o for o in outs] == [o for o in slow]
    fallbacks = [r for r in caplog.records if "fast path not used" in r.getMessage()]
    assert len(fallbacks) == 1 and "OPENMIND_FAST_DECODE=0" in fallbacks[0].getMessage()


def test_pipeline_stop_strings_and_streaming_on_the_fast_path(llama2_dir, monkeypatch):
    from openmind import pipeline

    def run():
        chat = pipeline("text-generation", model=str(llama2_dir), max_new_tokens=20, temperature=0)
        free = chat.backend.generate([chat.backend.encode(PROMPTS[0])], chat.defaults)[0].text
        stop = free[len(free) // 2 : len(free) // 2 + 3]
        pieces: list[str] = []
        params = type(chat.defaults)(max_new_tokens=20, temperature=0, stop=(stop,))
        got = chat.backend.generate([chat.backend.encode(PROMPTS[0])], params, on_text=lambda i, t: pieces.append(t))[0]
        return free, got.text, got.finish_reason, "".join(pieces)

    fast = run()
    monkeypatch.setenv("OPENMIND_FAST_DECODE", "0")
    assert run() == fast
    free, text, reason, streamed = fast
    assert reason == "stop" and len(text) < len(free) and streamed == text


def test_lean_step_is_used_and_gives_the_full_forwards_tokens(loaded, monkeypatch):
    """The three architectures decode through their modules directly (the tests above hold it to
    generate's tokens); ``OPENMIND_FAST_DECODE=full`` runs the whole forward and gives the same."""
    _, _, model, enc = loaded
    assert StaticDecoder(model).lean()
    kwargs = dict(max_new_tokens=24, do_sample=False, pad_token_id=2)
    _, lean, _ = _both(model, enc, **kwargs)
    monkeypatch.setenv("OPENMIND_FAST_DECODE", "full")
    assert not StaticDecoder(model).lean()
    reference, full, _ = _both(model, enc, **kwargs)
    assert lean.tolist() == full.tolist() == reference.tolist()


def test_other_architectures_take_the_whole_forward():
    import transformers

    config = transformers.GemmaConfig(
        vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, head_dim=16
    )
    assert not StaticDecoder(transformers.GemmaForCausalLM(config)).lean()  # it scales its embeddings


def test_row_watcher_reads_one_column_per_step_like_a_full_scan():
    """Without text to decode the watcher reads only the newest token of each row; fed the whole
    sequences at once it scans rows: both end rows at the same place."""
    from openmind.pt.pipelines.generation import Batch, RowWatcher

    prompt = torch.zeros((3, 3), dtype=torch.long)
    new = torch.tensor([[5, 2, 7, 7], [5, 6, 7, 8], [9, 9, 9, 2]])
    sequences = torch.cat([prompt, new], dim=1)
    batch = Batch(
        prompt, torch.ones_like(prompt), [3] * 3, [0, 1, 2], None, eos_ids=(2,), is_cancelled=lambda i: i == 1
    )
    stepwise = RowWatcher(None, batch)
    for t in range(1, 5):
        done = stepwise(sequences[:, : 3 + t], None)
    scanned = RowWatcher(None, batch)
    assert scanned(sequences, None).tolist() == done.tolist() == [True, True, True]
    assert stepwise.ended_at == [2, 1, 4]  # eos counted, cancelled after its first token
    assert scanned.ended_at == [2, 4, 4]  # seen once, after all four tokens
    assert stepwise.cancelled == scanned.cancelled == [False, True, False]
    # the decode loop's entry: the newest tokens as a list (after one ordinary call)
    listed = RowWatcher(None, batch)
    assert listed.newest(new[:, 0].tolist(), 1) is None  # never called yet: call it as usual
    listed(sequences[:, :4], None)
    for t in range(2, 5):
        done = listed.newest(new[:, t - 1].tolist(), t)
    assert done.tolist() == [True, True, True] and listed.ended_at == stepwise.ended_at
    assert listed.newest(new[:, 3].tolist(), 7) is None  # not the next token: rows must be read
