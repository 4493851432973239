"""The decode fast path of :class:`~openmind.pt.pipelines.generation.TorchCausalLM`.

``model.generate`` spends most of a small model's decode step in Python: preparing inputs,
rebuilding the attention mask from the 2-D padding mask, growing a dynamic cache, running the
generic stopping machinery. :class:`StaticDecoder` runs the same model forward with

* transformers' own :class:`~transformers.StaticCache`, allocated once per (batch, length bucket)
  and reset between calls instead of reallocated;
* prompt-length bucketing: prompts are left-padded to a multiple of :data:`PROMPT_BUCKET` and the
  cache length to a multiple of :data:`CACHE_BUCKET`, so shapes repeat from call to call (what a
  compiled step needs to stay compiled);
* a 4-D attention mask kept in place (one column switched on per step) instead of being rebuilt
  from the 2-D mask by the model at every token;
* for the architectures whose model forward is exactly "embed, rotary, decoder layers, norm, head"
  (:data:`LEAN_ARCHITECTURES`), a decode step that calls those same modules of the model in that
  order and skips the wrappers around them (output capturing, config-default merging, causal-mask
  building from a mask that is already 4-D, output dataclasses): on a small model they cost as much
  as the layers (``OPENMIND_FAST_DECODE=full`` keeps the whole forward);
* for those architectures with SDPA attention and the library's own layer code (no hub kernels,
  SiLU MLP, a rotary embedding without data-dependent rescaling), a *traced* step: the same
  tensor operations as those modules, in the same order and on the same weights (so the logits
  are bit for bit those of the module step: tests compare them), written as one function over
  the weights and recorded once per batch shape with ``torch.jit.trace``; each decode
  token then runs as one call into TorchScript's C++ interpreter instead of ~60 Python-level
  module calls (a 16-token request of the bench model: 0.9 -> 0.55 ms per token on one CPU
  thread). Each recording is for one shape, which it holds as constants (no size arithmetic
  per call; no-op dtype casts left out: 488 -> 393 graph nodes, ~5% per request). Recording
  takes ~20 ms; the recordings share the model's weight storage, so
  in-place weight updates are seen. Where tracing is unavailable or fails, the same function
  runs untraced (``OPENMIND_FAST_DECODE=lean`` keeps the module-calling step). The prompt's
  forward (prefill) runs through the same function over the whole prompt, with the attention
  mask transformers' ``create_causal_mask`` makes for the model's own forward: logits and cache
  bit for bit the forward's (tests);
* optionally a compiled step (``OPENMIND_FAST_DECODE=compile``: ``torch.compile`` of the
  decode forward). Off by default: on the 2-core CPU build machines it took minutes to compile
  and saved little per token (see bench/results.md); on a GPU it is worth trying.

Token choice is generate's: the same logits (float32), transformers' own logits processors
(repetition penalty, temperature, top-k, top-p, min-p) in generate's order, ``argmax`` or
``torch.multinomial`` on the softmax — so greedy tokens are identical to ``model.generate`` and a
seeded sampling run draws the same tokens. Everything the loop does not reproduce (beam search,
logprobs, PEFT adapters, sliding-window/hybrid caches, other attention kernels, generation
options such as ``no_repeat_ngram_size``) falls back to ``model.generate``; the reason is logged
once per reason (logger ``openmind.pt.fastpath``). ``OPENMIND_FAST_DECODE=0`` turns it off.
"""

from __future__ import annotations

import copy
import importlib
import logging
import os
from collections.abc import Callable
from typing import Any

from openmind.pt.device import import_torch

log = logging.getLogger("openmind.pt.fastpath")

#: prompts are left-padded to a multiple of this many tokens
PROMPT_BUCKET = 16
#: static caches are sized to a multiple of this many tokens (and reused while they fit)
CACHE_BUCKET = 128
#: environment switch: ``0`` = always ``model.generate``, ``compile`` = also ``torch.compile`` the step,
#: ``full`` = the model's whole forward at each step (no lean step), ``lean`` = the module-calling
#: lean step (no traced step)
ENV = "OPENMIND_FAST_DECODE"
#: model classes whose ``forward`` (and their inner model's) is embed -> rotary -> layers -> norm ->
#: lm_head with nothing else on a full-attention decode step: the lean step calls these modules directly.
#: Only classes checked token for token against ``generate`` (tests/test_fastpath.py) belong here.
LEAN_ARCHITECTURES = ("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM")

#: generation options whose processors/criteria the loop does not reproduce, with the values at
#: which ``generate`` adds none: any other value sends the call to ``model.generate``
UNCOVERED_OPTIONS: dict[str, tuple[Any, ...]] = {
    "min_length": (None, 0),
    "min_new_tokens": (None, 0),
    "no_repeat_ngram_size": (None, 0),
    "encoder_no_repeat_ngram_size": (None, 0),
    "bad_words_ids": (None,),
    "sequence_bias": (None,),
    "forced_bos_token_id": (None,),
    "forced_eos_token_id": (None,),
    "suppress_tokens": (None,),
    "begin_suppress_tokens": (None,),
    "typical_p": (None, 1.0),
    "epsilon_cutoff": (None, 0.0),
    "eta_cutoff": (None, 0.0),
    "top_h": (None,),
    "encoder_repetition_penalty": (None, 1.0),
    "exponential_decay_length_penalty": (None,),
    "remove_invalid_values": (None, False),
    "renormalize_logits": (None, False),
    "guidance_scale": (None, 1.0),
    "watermarking_config": (None,),
    "penalty_alpha": (None,),
    "dola_layers": (None,),
    "prompt_lookup_num_tokens": (None,),
    "max_time": (None,),
    "stop_strings": (None,),
    "num_return_sequences": (None, 1),
}
#: attention implementations whose mask format the loop builds (bool for sdpa, additive for eager)
MASKS = ("sdpa", "eager")
#: rotary embeddings whose frequencies never change with the sequence (the traced step records them)
STATIC_ROPE = ("default", "linear", "llama3")
#: traced functions kept per decoder (one per batch size, width, cache length and mask kind seen;
#: each holds a graph, not weights; then it starts over)
TRACE_CACHE_SIZE = 256
#: prefill masks kept per decoder (each ``[batch, 1, width, cache length]`` booleans)
MASK_CACHE_SIZE = 64
_MISSING = object()

_logged: set[str] = set()
#: option values a merged generation config is cached for (see ``StaticDecoder.config_for``)
_PLAIN = (type(None), bool, int, float, str)


def log_fallback(reason: str) -> None:
    """Log once per process and reason why a call went to ``model.generate``."""
    if reason not in _logged:
        _logged.add(reason)
        log.info("decode fast path not used (%s): falling back to model.generate", reason)


def argmax(scores: Any) -> Any:
    """``torch.argmax(scores, dim=-1)``: the first index of each row's largest value (a NaN counts
    as largest, as in torch). On CPU float32 through NumPy, whose argmax is vectorised: 27 us -> 2 us
    per 32k-vocabulary row, the largest per-token cost after the model on small models."""
    torch = import_torch()
    if scores.device.type == "cpu" and scores.dtype == torch.float32 and scores.dim() == 2:
        return torch.from_numpy(scores.detach().numpy().argmax(-1))
    return torch.argmax(scores, dim=-1)


def cache_tensors(cache: Any) -> list[Any]:
    """A static cache's tensors in the traced function's argument order: per layer keys, values
    and running length."""
    out = []
    for layer in cache.layers:
        out += [layer.keys, layer.values, layer.cumulative_length]
    return out


def kernel_signature(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` (tensors-only arguments) behind the step signature ``(ids, mask, positions, cache)``."""

    def step(input_ids: Any, attention_mask: Any, position_ids: Any, cache: Any) -> Any:
        return kernel(input_ids, attention_mask, position_ids, *cache_tensors(cache))

    return step


def _rotary(q: Any, k: Any, cos: Any, sin: Any, half: int) -> Any:
    """transformers' ``apply_rotary_pos_emb`` (llama, mistral, qwen2) on ``cos``/``sin`` already
    unsqueezed at dim 1: the same operations in the same order, with ``rotate_half``'s split point
    a plain int (a trace then records no size arithmetic). :meth:`StaticDecoder._kernel_reason`
    checks it against the model's own function, bit for bit."""
    torch = import_torch()
    q_half = torch.cat((-q[..., half:], q[..., :half]), dim=-1)
    k_half = torch.cat((-k[..., half:], k[..., :half]), dim=-1)
    return (q * cos) + (q_half * sin), (k * cos) + (k_half * sin)


def _same_rotary(module: Any, head_dim: int) -> bool:
    """Whether ``module.apply_rotary_pos_emb`` gives :func:`_rotary`'s result bit for bit (a small
    random case; a hub kernel or a changed formula keeps the module-calling step)."""
    torch = import_torch()
    apply = getattr(module, "apply_rotary_pos_emb", None)
    if apply is None or head_dim % 2:
        return False
    gen = torch.Generator().manual_seed(0)
    q, k = (torch.randn(2, 3, 5, head_dim, generator=gen) for _ in range(2))
    cos, sin = (torch.randn(2, 5, head_dim, generator=gen) for _ in range(2))
    try:
        want = apply(q, k, cos, sin)
    except Exception:  # noqa: BLE001 - another signature: not the formula this step reproduces
        return False
    got = _rotary(q, k, cos.unsqueeze(1), sin.unsqueeze(1), head_dim // 2)
    return all(torch.equal(a, b) for a, b in zip(want, got))


def _round_up(n: int, step: int) -> int:
    return -(-n // step) * step


class StaticDecoder:
    """Greedy and sampled decoding on a static KV cache for one causal LM (see the module doc)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.mode = os.environ.get(ENV, "1").strip().lower()
        self._cache: Any = None
        self._cache_key: tuple | None = None
        self._step: Callable[..., Any] | None = None
        self._traced: dict[tuple, Any] = {}
        self._kernel: Callable[..., Any] | None = None
        self._traced_ok = False
        self._fold_head = False
        self._configs: dict[tuple, Any] = {}
        #: prefill masks by (shapes, cache length, attention mask and positions as bytes): CPU only
        self._masks: dict[tuple, Any] = {}
        #: why the traced step is not used (None: it is, once a decode step ran)
        self.trace_reason: str | None = None
        self.model_reason = self._model_reason()

    # ---- what it covers ------------------------------------------------------------------
    def _model_reason(self) -> str | None:
        model = self.model
        if self.mode in ("0", "off", "false", "no"):
            return f"disabled by {ENV}={self.mode}"
        if hasattr(model, "peft_config"):
            return "PEFT adapters are loaded"
        config = getattr(model, "config", None)
        if config is None or getattr(config, "is_encoder_decoder", False):
            return "not a decoder-only transformers model"
        text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
        types = set(getattr(text, "layer_types", None) or ["full_attention"])
        if types != {"full_attention"}:
            return f"layer types {sorted(types)} (only full attention is covered)"
        if getattr(text, "sliding_window", None) and getattr(text, "use_sliding_window", True):
            return "sliding-window attention"
        attn = getattr(config, "_attn_implementation", None)
        if attn not in MASKS:
            return f"attention implementation {attn!r}"
        return None

    def config_for(self, kwargs: dict[str, Any]) -> Any:
        """The generation config ``model.generate(**kwargs)`` would use (transformers' own merge of
        the call's options, the model's ``generation_config`` and the library defaults).

        The merge deep-copies the whole config (~1 ms, as much as a server's request parsing): the
        result is kept per (options, state of the model's ``generation_config``), and is only read."""
        items = []
        for name, value in kwargs.items():
            if isinstance(value, (list, tuple)):
                value = tuple(value)
                if not all(isinstance(v, _PLAIN) for v in value):
                    return self._merge_config(kwargs)  # objects (processors, criteria): merged every time
            elif not isinstance(value, _PLAIN):
                return self._merge_config(kwargs)
            items.append((name, value))
        key = (tuple(sorted(items)), repr(vars(self.model.generation_config)))
        cached = self._configs.get(key)
        if cached is None:
            if len(self._configs) >= 64:
                self._configs.clear()
            cached = self._configs[key] = self._merge_config(kwargs)
        return cached

    def _merge_config(self, kwargs: dict[str, Any]) -> Any:
        prepare = getattr(self.model, "_prepare_generation_config", None)
        if prepare is not None:
            try:
                return prepare(None, **kwargs)[0]
            except TypeError:  # another transformers signature: merge the documented way below
                pass
        cfg = copy.deepcopy(self.model.generation_config)
        cfg.update(**kwargs)
        return cfg

    def reason(self, cfg: Any, *, logprobs: bool) -> str | None:
        """Why this call cannot take the fast path (``None``: it can)."""
        if self.model_reason:
            return self.model_reason
        if (cfg.num_beams or 1) > 1:
            return "beam search"
        if logprobs:
            return "logprobs requested"
        if not cfg.max_new_tokens:
            return "no max_new_tokens"
        for name, neutral in UNCOVERED_OPTIONS.items():
            value = getattr(cfg, name, None)
            if not any(value is n or value == n for n in neutral):
                return f"generation option {name}={value!r}"
        return None

    # ---- pieces ----------------------------------------------------------------------------
    def processors(self, cfg: Any, attention_mask: Any) -> Any:
        """transformers' own processors, in ``generate``'s order, for what :meth:`reason` allows."""
        from transformers import (
            LogitsProcessorList,
            MinPLogitsWarper,
            RepetitionPenaltyLogitsProcessor,
            TemperatureLogitsWarper,
            TopKLogitsWarper,
            TopPLogitsWarper,
        )

        out = LogitsProcessorList()
        if cfg.repetition_penalty is not None and cfg.repetition_penalty != 1.0:
            padding = (attention_mask != 0).int().argmax(dim=1)
            out.append(RepetitionPenaltyLogitsProcessor(cfg.repetition_penalty, prompt_ignore_length=padding))
        if cfg.do_sample:
            if cfg.temperature is not None and cfg.temperature != 1.0:
                out.append(TemperatureLogitsWarper(cfg.temperature))
            if cfg.top_k is not None and cfg.top_k != 0:
                out.append(TopKLogitsWarper(top_k=cfg.top_k, min_tokens_to_keep=1))
            if cfg.top_p is not None and cfg.top_p < 1.0:
                out.append(TopPLogitsWarper(top_p=cfg.top_p, min_tokens_to_keep=1))
            if cfg.min_p is not None:
                out.append(MinPLogitsWarper(min_p=cfg.min_p, min_tokens_to_keep=1))
        return out

    def cache(self, batch: int, length: int) -> Any:
        """A reset :class:`~transformers.StaticCache` for ``batch`` rows of ``length`` tokens."""
        from transformers import StaticCache

        key = (batch, length)
        if self._cache is not None and self._cache_key == key:
            self._cache.reset()
            return self._cache
        self._cache = None  # free the previous one before allocating
        self._cache = StaticCache(config=self.model.config, max_cache_len=length)
        self._cache_key = key
        return self._cache

    def lean(self) -> bool:
        """Whether decode steps call the model's modules directly (:data:`LEAN_ARCHITECTURES`)."""
        inner = getattr(self.model, "model", None)
        return (
            self.mode not in ("full", "compile")
            and type(self.model).__name__ in LEAN_ARCHITECTURES
            and type(self.model).__module__.startswith("transformers.models.")
            and all(hasattr(inner, name) for name in ("embed_tokens", "rotary_emb", "layers", "norm"))
            and hasattr(self.model, "lm_head")
        )

    def step_fn(self) -> Callable[..., Any]:
        """One decode step: ``(input_ids, attention_mask, position_ids, cache) -> logits [batch, 1, vocab]``."""
        if self._step is None:
            model = self.model
            kernel = self._kernel_step() if self.lean() and self.mode != "lean" else None
            if kernel is not None:
                self._step = self._traced_step(kernel)
            elif self.lean():
                inner = model.model
                layers = list(inner.layers[: model.config.num_hidden_layers])

                def step(input_ids: Any, attention_mask: Any, position_ids: Any, cache: Any) -> Any:
                    # what LlamaModel/MistralModel/Qwen2Model.forward run for one full-attention token
                    hidden = inner.embed_tokens(input_ids)
                    rotary = inner.rotary_emb(hidden, position_ids=position_ids)
                    for layer in layers:
                        hidden = layer(
                            hidden,
                            attention_mask=attention_mask,
                            position_embeddings=rotary,
                            position_ids=position_ids,
                            cache=cache,
                            use_cache=True,
                        )
                    return model.lm_head(inner.norm(hidden))

                self._step = step
            else:
                forward = model.forward
                if self.mode == "compile":
                    forward = import_torch().compile(model.forward, dynamic=False)

                def step(input_ids: Any, attention_mask: Any, position_ids: Any, cache: Any) -> Any:
                    return forward(
                        input_ids=input_ids,
                        attention_mask=attention_mask,
                        position_ids=position_ids,
                        cache=cache,
                        use_cache=True,
                    ).logits

                self._step = step
        return self._step

    def _kernel_reason(self) -> str | None:
        """Why the model's layers cannot run as :meth:`_kernel_step` (None: they can)."""
        model, inner = self.model, self.model.model
        config = model.config
        if config._attn_implementation != "sdpa":
            return f"attention implementation {config._attn_implementation!r}"
        if getattr(config, "hidden_act", None) != "silu":
            return f"activation {getattr(config, 'hidden_act', None)!r}"
        rope = getattr(inner.rotary_emb, "rope_type", "default")
        if rope not in STATIC_ROPE:
            return f"rotary type {rope!r}"
        home = type(model).__module__
        if not _same_rotary(importlib.import_module(home), inner.layers[0].self_attn.head_dim):
            return "apply_rotary_pos_emb is not the library's (a hub kernel or another formula)"
        for layer in inner.layers[: config.num_hidden_layers]:
            parts = (layer, layer.self_attn, layer.mlp, layer.input_layernorm, layer.post_attention_layernorm)
            for part in (*parts, inner.norm):
                # the library's own forward: a hub kernel or a patched module computes something else
                if type(part).forward.__module__ != home or "forward" in vars(part):
                    return f"{type(part).__name__} does not run the library's own forward"
        return None

    def _kernel_step(self) -> Callable[..., Any] | None:
        """The lean step as one function over the weights: exactly the tensor operations the
        library's modules run for one full-attention token (RMSNorm, q/k/v projections, rotary,
        the static cache's in-place write, SDPA through transformers' own attention function,
        output projection, SiLU MLP, residuals, final norm, head), without the module calls.
        Its arguments are ``(input_ids, mask, position_ids, *per layer (keys, values, length))``,
        tensors only, so that ``torch.jit.trace`` can record it."""
        reason = self._kernel_reason()
        if reason is not None:
            self.trace_reason = reason
            return None
        torch = import_torch()
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        model, inner = self.model, self.model.model

        def w(t: Any) -> Any:  # the weight's own storage, outside autograd (what tracing records)
            return None if t is None else t.detach()

        layers = []
        for layer in inner.layers[: model.config.num_hidden_layers]:
            a, m = layer.self_attn, layer.mlp
            n1, n2 = layer.input_layernorm, layer.post_attention_layernorm
            layers.append(
                (
                    w(n1.weight), n1.variance_epsilon,
                    w(a.q_proj.weight), w(a.q_proj.bias), w(a.k_proj.weight), w(a.k_proj.bias),
                    w(a.v_proj.weight), w(a.v_proj.bias), w(a.o_proj.weight), w(a.o_proj.bias),
                    a.head_dim, a.scaling, a,
                    w(n2.weight), n2.variance_epsilon,
                    w(m.gate_proj.weight), w(m.gate_proj.bias), w(m.up_proj.weight), w(m.up_proj.bias),
                    w(m.down_proj.weight), w(m.down_proj.bias),
                )
            )  # fmt: skip
        embed, pad = w(inner.embed_tokens.weight), inner.embed_tokens.padding_idx
        final, final_eps = w(inner.norm.weight), inner.norm.variance_epsilon
        head, head_bias = w(model.lm_head.weight), w(getattr(model.lm_head, "bias", None))
        fold_head = self._fold_head = bool(model.lm_head.weight.requires_grad)
        rope = inner.rotary_emb
        f = torch.nn.functional
        linear, silu, rsqrt, arange, f32, rotary = f.linear, f.silu, torch.rsqrt, torch.arange, torch.float32, _rotary

        def rms(hidden: Any, weight: Any, eps: float) -> Any:  # LlamaRMSNorm.forward's operations
            dtype = hidden.dtype
            # .to() to the tensor's own dtype returns the tensor itself: left out (no node in the trace)
            x = hidden if dtype == f32 else hidden.to(f32)
            x = x * rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
            return weight * (x if dtype == f32 else x.to(dtype))

        def step(input_ids: Any, mask: Any, position_ids: Any, *kv: Any, shape: tuple | None = None) -> Any:
            # one token per row (a decode step) or a whole prompt (the prefill, ``mask`` then being
            # what create_causal_mask gives the model, possibly None): logits of the last position.
            # ``shape`` (batch, width) as plain ints when recording: the trace then holds constants
            # instead of size arithmetic on every call. Rows are kept 2-D ([batch * width, hidden]):
            # a linear layer on a contiguous 3-D input is the same matrix product on its 2-D view.
            batch, width = shape if shape is not None else input_ids.shape
            hidden = f.embedding(input_ids, embed, pad)
            cos, sin = rope(hidden, position_ids=position_ids)
            cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)  # apply_rotary_pos_emb's unsqueeze_dim=1
            hidden = hidden.view(batch * width, -1)
            rows = (batch * width, -1)
            for i, spec in enumerate(layers):
                n1, e1, wq, bq, wk, bk, wv, bv, wo, bo, head_dim, scaling, attn, n2, e2, wg, bg, wu, bu, wd, bd = spec
                keys, values, length = kv[3 * i], kv[3 * i + 1], kv[3 * i + 2]
                x = rms(hidden, n1, e1)
                heads = (batch, width, -1, head_dim)
                q = linear(x, wq, bq).view(heads).transpose(1, 2)
                k = linear(x, wk, bk).view(heads).transpose(1, 2)
                v = linear(x, wv, bv).view(heads).transpose(1, 2)
                q, k = rotary(q, k, cos, sin, head_dim // 2)
                # StaticLayer.update: write at the cache's running length, then advance it
                at = arange(width, device=keys.device) + length
                length.add_(width)
                keys.index_copy_(2, at, k)
                values.index_copy_(2, at, v)
                out, _ = sdpa_attention_forward(attn, q, keys, values, mask, dropout=0.0, scaling=scaling)
                hidden = hidden + linear(out.reshape(rows), wo, bo)
                x = rms(hidden, n2, e2)
                hidden = hidden + linear(silu(linear(x, wg, bg)) * linear(x, wu, bu), wd, bd)
            hidden = rms(hidden, final, final_eps).view(batch, width, -1)
            if width > 1:  # the forward's logits_to_keep=1: the last position, a strided view
                hidden = hidden[:, -1:, :]
                if fold_head:
                    # torch's matmul folds a strided 3-D input into one matrix product when the
                    # weight requires grad, and takes a batched product otherwise (1 ulp apart):
                    # the forward's head weight is a Parameter, this one is detached
                    return linear(hidden.reshape(batch, hidden.shape[-1]), head).view(batch, 1, -1)
            return linear(hidden, head, head_bias)

        return step

    def _traced_step(self, kernel: Callable[..., Any]) -> Callable[..., Any]:
        """:meth:`_kernel_step` recorded with ``torch.jit.trace`` per (batch, width, cache length,
        mask or none, device), behind the step signature; untraced where tracing is unavailable."""
        torch = import_torch()
        self._kernel = kernel
        self._traced_ok = self.trace_reason is None and hasattr(torch.jit, "trace")
        if not self._traced_ok:
            return kernel_signature(kernel)

        def step(input_ids: Any, attention_mask: Any, position_ids: Any, cache: Any) -> Any:
            return self._run_traced(kernel, input_ids, attention_mask, position_ids, cache)

        return step

    def _run_traced(self, kernel: Callable[..., Any], ids: Any, mask: Any, positions: Any, cache: Any) -> Any:
        kv = cache_tensors(cache)
        fn = self._traced_for(kernel, ids, mask, positions, kv)
        return fn(ids, positions, *kv) if mask is None else fn(ids, mask, positions, *kv)

    def _traced_for(self, kernel: Callable[..., Any], ids: Any, mask: Any, positions: Any, kv: list) -> Any:
        """The recording of ``kernel`` for these inputs' shapes (recorded now if new)."""
        key = (*ids.shape, kv[0].shape[2], mask is None, kv[0].dtype, str(ids.device))
        fn = self._traced.get(key)
        if fn is None:
            shape = tuple(ids.shape)  # constants of this recording (its key holds them)
            if mask is None:

                def run(ids: Any, positions: Any, *kv: Any) -> Any:
                    return kernel(ids, None, positions, *kv, shape=shape)

                fn = self._record(run, (ids, positions), kv)
            else:

                def run_masked(ids: Any, mask: Any, positions: Any, *kv: Any) -> Any:
                    return kernel(ids, mask, positions, *kv, shape=shape)

                fn = self._record(run_masked, (ids, mask, positions), kv)
            if len(self._traced) >= TRACE_CACHE_SIZE:
                self._traced.clear()
            self._traced[key] = fn
        return fn

    def bound_step(self, ids: Any, mask: Any, positions: Any, cache: Any) -> Callable[[Any, Any, Any], Any]:
        """The decode step for a loop whose inputs keep these shapes and this cache:
        ``(ids, mask, positions) -> logits``. With a traced step, the recording is looked up once
        and called with the cache's tensors directly (the per-call lookup, a few us, is left out
        of every later token); otherwise :meth:`step_fn` as it is."""
        step = self.step_fn()
        kernel = self._kernel
        if kernel is None or not self._traced_ok:
            return lambda ids, mask, positions: step(ids, mask, positions, cache)
        kv = cache_tensors(cache)
        fn = self._traced_for(kernel, ids, mask, positions, kv)
        if mask is None:
            return lambda ids, mask, positions: fn(ids, positions, *kv)
        return lambda ids, mask, positions: fn(ids, mask, positions, *kv)

    def _record(self, kernel: Callable[..., Any], inputs: tuple, kv: list) -> Callable[..., Any]:
        """``kernel`` traced on ``(*inputs, *kv)`` (the cache's running lengths restored afterwards),
        or ``kernel`` itself when tracing fails (the reason logged once)."""
        import warnings

        torch = import_torch()
        lengths = kv[2::3]
        saved = [t.clone() for t in lengths]
        try:
            with warnings.catch_warnings(), torch.no_grad():
                warnings.simplefilter("ignore")  # TracerWarnings and the deprecation notice
                fn = torch.jit.trace(kernel, (*inputs, *kv), check_trace=False)
        except Exception as exc:  # noqa: BLE001 - any failure: the same function, untraced
            self.trace_reason = f"tracing failed: {type(exc).__name__}: {exc}"[:300]
            log_fallback(f"decode step not traced ({self.trace_reason})")
            fn = kernel
        finally:
            # tracing ran the function once: undo its cache writes' bookkeeping (the written
            # slots are overwritten by the real call at the same place)
            for t, value in zip(lengths, saved):
                t.copy_(value)
        return fn

    def prefill(self, ids: Any, mask: Any, positions: Any, cache: Any) -> Any:
        """The prompt's forward on the fresh static cache: logits of the last position
        ``[batch, 1, vocab]``. With a traced step, the same traced function over the whole prompt,
        its attention mask made by transformers' ``create_causal_mask`` exactly as the model's
        forward makes it (possibly None); else, or when the head has a bias or its weight's
        ``requires_grad`` changed since the function was built, the model's forward."""
        self.step_fn()  # builds the kernel
        kernel, head = self._kernel, self.model.lm_head
        if (
            kernel is None
            or not self._traced_ok
            or getattr(head, "bias", None) is not None
            or bool(head.weight.requires_grad) != self._fold_head
        ):
            return self.model(
                input_ids=ids,
                attention_mask=mask,
                position_ids=positions,
                cache=cache,
                use_cache=True,
                logits_to_keep=1,
            ).logits
        from transformers.masking_utils import create_causal_mask

        torch = import_torch()
        inner = self.model.model
        embed = inner.embed_tokens.weight
        key = None
        if ids.device.type == "cpu":
            # the same prompt layout (bucketed width, left padding) gives the same mask: made once
            # (create_causal_mask costs ~0.2 ms, a fifth of a short prompt's prefill)
            key = (
                tuple(ids.shape), cache.layers[0].max_cache_len, embed.dtype, self.model.config._attn_implementation,
                mask.numpy().tobytes(), positions.numpy().tobytes(),
            )  # fmt: skip
        causal = self._masks.get(key, _MISSING) if key is not None else _MISSING
        if causal is _MISSING:
            probe = torch.empty((*ids.shape, embed.shape[1]), dtype=embed.dtype, device=ids.device)
            causal = create_causal_mask(
                config=self.model.config, inputs_embeds=probe, attention_mask=mask, cache=cache, position_ids=positions
            )
            if key is not None:
                if len(self._masks) >= MASK_CACHE_SIZE:
                    self._masks.clear()
                self._masks[key] = causal
        if any(not layer.is_initialized for layer in cache.layers):  # what the first update() does
            cache.early_initialization(
                ids.shape[0], self.model.config.num_key_value_heads, inner.layers[0].self_attn.head_dim,
                embed.dtype, ids.device,
            )  # fmt: skip
        return self._run_traced(kernel, ids, causal, positions, cache)

    def step_mask(self, valid: Any) -> Any:
        """The 4-D mask of one decode step (a view of ``valid``, a bool ``[batch, cache]`` tensor) in
        the format the attention implementation expects."""
        torch = import_torch()
        mask = valid[:, None, None, :]
        if self.model.config._attn_implementation == "eager":
            dtype = self.model.dtype
            return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, torch.finfo(dtype).min)
        return mask

    # ---- the loop ----------------------------------------------------------------------------
    def generate(
        self,
        input_ids: Any,
        attention_mask: Any,
        cfg: Any,
        stopping: Callable[[Any, Any], Any] | None = None,
    ) -> Any:
        """``model.generate(input_ids, attention_mask=..., **cfg)`` on the fast path: prompt + new tokens.

        ``stopping`` is a transformers ``StoppingCriteria`` (called with the sequences so far,
        returns a per-row done mask), as ``generate(stopping_criteria=...)`` takes it.
        """
        torch = import_torch()
        device = input_ids.device
        batch, length = input_ids.shape
        eos = cfg.eos_token_id
        eos = [eos] if isinstance(eos, int) else list(eos or [])
        pad = cfg.pad_token_id if cfg.pad_token_id is not None else (eos[0] if eos else 0)
        eos_t = torch.tensor(eos, device=device, dtype=torch.long) if eos else None
        max_new = int(cfg.max_new_tokens)

        extra = _round_up(length, PROMPT_BUCKET) - length
        ids, mask = input_ids, attention_mask.long()
        if extra:
            ids = torch.cat([torch.full((batch, extra), pad, dtype=ids.dtype, device=device), ids], dim=1)
            mask = torch.cat([torch.zeros((batch, extra), dtype=mask.dtype, device=device), mask], dim=1)
        width = ids.shape[1]
        cache = self.cache(batch, _round_up(width + max_new, CACHE_BUCKET))
        valid = torch.zeros((batch, cache.layers[0].max_cache_len), dtype=torch.bool, device=device)
        valid[:, :width] = mask.bool()
        positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
        processors = self.processors(cfg, attention_mask)

        logits = self.prefill(ids, mask, positions, cache)
        position = positions[:, -1:]
        # the prompt and every token chosen so far, written in place (no re-allocation per token)
        out_ids = torch.full((batch, length + max_new), pad, dtype=input_ids.dtype, device=device)
        out_ids[:, :length] = input_ids
        unfinished = torch.ones(batch, dtype=torch.bool, device=device)
        pads = torch.full((batch,), pad, dtype=torch.long, device=device)
        step = None  # bound at the first decode step: from then on the shapes and the cache stay the same
        # sdpa's bool mask is a view of ``valid``: made once, it follows the in-place updates
        fixed_mask = self.step_mask(valid) if self.model.config._attn_implementation != "eager" else None
        on_cpu = device.type == "cpu"
        # plain greedy: the logits are read in place (no copy for processors) and the argmax of
        # float32 logits on CPU is NumPy's, straight from their view (see argmax())
        plain = not processors and not cfg.do_sample and logits.dtype == torch.float32
        if on_cpu:
            # the per-token bookkeeping on NumPy views of the same memory: well under a microsecond per
            # operation instead of a few per torch call (~10 of them per token)
            import numpy as np

            out_np, valid_np = out_ids.numpy(), valid.numpy()
            position = position.clone()  # advanced in place through its NumPy view
            position_np = position.numpy()
            unfinished_np = np.ones(batch, dtype=bool)
            eos_np = np.asarray(eos, dtype=np.int64)
            eos0 = eos[0] if len(eos) == 1 else None
            count = np.count_nonzero
            newest = getattr(stopping, "newest", None)
            running = True  # no row has finished yet: nothing to pad, nothing to count
        for t in range(max_new):
            if on_cpu and plain:
                picked = logits.detach().numpy()[:, -1].argmax(-1)
            else:
                scores = logits[:, -1] if plain else logits[:, -1].to(copy=True, dtype=torch.float32, device=device)
                if processors:
                    scores = processors(out_ids[:, : length + t], scores)
                if cfg.do_sample:
                    chosen = torch.multinomial(torch.softmax(scores, dim=-1), num_samples=1).squeeze(1)
                else:
                    chosen = argmax(scores)
                if on_cpu:
                    picked = chosen.numpy()
            if on_cpu:
                if eos and not running:
                    picked = np.where(unfinished_np, picked, pad)  # finished rows get padding (as generate)
                out_np[:, length + t] = picked
                if eos:
                    ended = picked == eos0 if eos0 is not None else np.isin(picked, eos_np)
                    if count(ended):  # np.count_nonzero: no ufunc reduction set up for a few rows
                        unfinished_np &= ~ended
                        running = False
                if stopping is not None:
                    # openmind's RowWatcher takes the newest tokens as a list (no slice of the rows)
                    ended = newest(picked.tolist(), t + 1) if newest is not None else None
                    if ended is None:
                        ended = stopping(out_ids[:, : length + t + 1], None)
                    ended = ended.numpy()
                    if count(ended):
                        unfinished_np &= ~ended
                        running = False
                if t == max_new - 1 or (not running and not count(unfinished_np)):
                    return out_ids[:, : length + t + 1]
                valid_np[:, width + t] = True
                position_np += 1
                next_ids = torch.from_numpy(picked.reshape(batch, 1))
            else:
                if eos_t is not None:
                    chosen = torch.where(unfinished, chosen, pads)
                out_ids[:, length + t] = chosen
                if eos_t is not None:
                    unfinished &= ~torch.isin(chosen, eos_t)
                if stopping is not None:
                    unfinished &= ~stopping(out_ids[:, : length + t + 1], None)
                if t == max_new - 1 or not bool(unfinished.any()):
                    return out_ids[:, : length + t + 1]
                valid[:, width + t] = True
                position = position + 1
                next_ids = chosen[:, None]
            step_mask = fixed_mask if fixed_mask is not None else self.step_mask(valid)
            if step is None:
                step = self.bound_step(next_ids, step_mask, position, cache)
            logits = step(next_ids, step_mask, position)
        return out_ids[:, :length]
