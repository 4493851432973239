"""The Llama family on MindSpore: Llama 1/2/3, Mistral, Qwen2, Qwen3, Yi, ... (decoder-only, RoPE, GQA).

Parameters carry the Hugging Face names (``model.layers.0.self_attn.q_proj.weight``), so a
checkpoint saved by transformers loads here unchanged and the other way round. Masks and rotary
tables are built on the host (numpy) and passed in as tensors: the cells themselves are pure
functions of their inputs, which keeps training steps differentiable and jit-able.
"""

from __future__ import annotations

import math

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

from openmind.ms.errors import MS_CONFIG
from openmind.ms.models.config import LlamaConfig
from openmind.ms.models.layers import MASK_VALUE, Embedding, Linear, RMSNorm, activation, linear


def rope_inv_freq(cfg: LlamaConfig) -> np.ndarray:
    """Rotary inverse frequencies, as transformers computes them (float32)."""
    dim = cfg.head_dim
    inv = 1.0 / (cfg.rope_theta ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float32) / dim))
    inv = inv.astype(np.float32)
    rope = cfg.rope_scaling
    kind = rope.get("rope_type", "default")
    if kind == "linear":
        inv = inv / np.float32(rope["factor"])
    elif kind == "llama3":
        factor = rope["factor"]
        low, high = rope.get("low_freq_factor", 1.0), rope.get("high_freq_factor", 4.0)
        old = rope.get("original_max_position_embeddings", 8192)
        low_wavelen, high_wavelen = old / low, old / high
        wavelen = 2 * math.pi / inv
        scaled = np.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
        inv = np.where(medium, smoothed, scaled).astype(np.float32)
    return inv


def rope_tables(inv_freq: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cos/sin of shape ``(batch, 1, seq, head_dim)`` for integer ``positions`` ``(batch, seq)``."""
    freqs = positions.astype(np.float32)[:, :, None] * inv_freq[None, None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb)[:, None].astype(np.float32), np.sin(emb)[:, None].astype(np.float32)


def attention_mask(
    key_mask: np.ndarray, query_len: int, *, sliding_window: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Additive causal + padding mask ``(batch, 1, query_len, key_len)`` and the query positions.

    ``key_mask`` ``(batch, key_len)`` is 1 for real tokens (past and current), 0 for padding.
    Positions count real tokens only (left padding gives the same positions as no padding), as
    transformers' ``generate`` does.
    """
    key_mask = key_mask.astype(np.int64)
    batch, key_len = key_mask.shape
    past = key_len - query_len
    positions_all = np.clip(np.cumsum(key_mask, axis=1) - 1, 0, None)
    query_abs = np.arange(past, key_len)
    allowed = np.arange(key_len)[None, :] <= query_abs[:, None]
    if sliding_window:
        allowed &= np.arange(key_len)[None, :] > query_abs[:, None] - sliding_window
    allowed = allowed[None] & (key_mask[:, None, :] > 0)
    mask = np.where(allowed, 0.0, MASK_VALUE).astype(np.float32)[:, None]
    return mask, positions_all[:, past:]


def rotate_half(x):
    half = x.shape[-1] // 2
    return ops.cat((-x[..., half:], x[..., :half]), -1)


class LlamaAttention(nn.Cell):
    def __init__(self, cfg: LlamaConfig, rng: np.random.Generator):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        self.scale = 1.0 / math.sqrt(cfg.head_dim)
        h = cfg.hidden_size
        self.q_proj = Linear(h, self.heads * self.head_dim, cfg.qkv_bias, rng)
        self.k_proj = Linear(h, self.kv_heads * self.head_dim, cfg.qkv_bias, rng)
        self.v_proj = Linear(h, self.kv_heads * self.head_dim, cfg.qkv_bias, rng)
        self.o_proj = Linear(self.heads * self.head_dim, h, cfg.o_bias, rng)
        self.qk_norm = cfg.qk_norm
        if cfg.qk_norm:
            self.q_norm = RMSNorm(self.head_dim, cfg.rms_norm_eps)
            self.k_norm = RMSNorm(self.head_dim, cfg.rms_norm_eps)

    def construct(self, x, cos, sin, mask, cache=None, write=None):
        """``cache``: ``(k, v)`` of shape ``(batch, kv_heads, cache_len, head_dim)`` or None.

        Without a cache: plain attention over ``x`` (training, scoring). With a cache and no
        ``write``: prefill -- attend over ``x`` and return the cache with ``x``'s keys/values in
        its first slots. With ``write`` (one-hot ``(1, 1, cache_len, 1)``): one decode step --
        blend the new key/value into that slot and attend over the whole cache (``mask`` hides
        unwritten slots). Every shape is static, so a compiled step is reused for every token.
        """
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).swapaxes(1, 2)
        if self.qk_norm:
            q = self.q_norm(q)
            k = self.k_norm(k)
        q = q.swapaxes(1, 2)
        k = k.swapaxes(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        present = None
        if cache is not None:
            if write is None:
                present = (ops.cat((k, cache[0][:, :, s:]), 2), ops.cat((v, cache[1][:, :, s:]), 2))
            else:
                keep = 1.0 - write
                present = (cache[0] * keep + k * write, cache[1] * keep + v * write)
                k, v = present
        if self.kv_heads != self.heads:
            k = ops.repeat_interleave(k, self.heads // self.kv_heads, 1)
            v = ops.repeat_interleave(v, self.heads // self.kv_heads, 1)
        scores = ops.matmul(q, k.swapaxes(-1, -2)) * self.scale + mask
        probs = ops.softmax(scores.astype(ms.float32), -1).astype(q.dtype)
        out = ops.matmul(probs, v).swapaxes(1, 2).reshape(b, s, self.heads * self.head_dim)
        return self.o_proj(out), present


class LlamaMLP(nn.Cell):
    def __init__(self, cfg: LlamaConfig, rng: np.random.Generator):
        super().__init__()
        h, i = cfg.hidden_size, cfg.intermediate_size
        self.gate_proj = Linear(h, i, cfg.mlp_bias, rng)
        self.up_proj = Linear(h, i, cfg.mlp_bias, rng)
        self.down_proj = Linear(i, h, cfg.mlp_bias, rng)
        self.act = activation(cfg.hidden_act)
        if self.act is None:
            raise MS_CONFIG.error(f"hidden_act {cfg.hidden_act!r} is not implemented", location="config.json")

    def construct(self, x):
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Cell):
    def __init__(self, cfg: LlamaConfig, rng: np.random.Generator):
        super().__init__()
        self.self_attn = LlamaAttention(cfg, rng)
        self.mlp = LlamaMLP(cfg, rng)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def construct(self, x, cos, sin, mask, cache=None, write=None):
        attn, present = self.self_attn(self.input_layernorm(x), cos, sin, mask, cache, write)
        x = x + attn
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x, present


class LlamaModel(nn.Cell):
    def __init__(self, cfg: LlamaConfig, rng: np.random.Generator):
        super().__init__()
        self.embed_tokens = Embedding(cfg.vocab_size, cfg.hidden_size, rng)
        self.layers = nn.CellList([LlamaDecoderLayer(cfg, rng) for _ in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def construct(self, input_ids, cos, sin, mask, caches=None, write=None):
        x = self.embed_tokens(input_ids)
        presents = ()
        i = 0
        for layer in self.layers:
            x, present = layer(x, cos, sin, mask, None if caches is None else caches[i], write)
            presents = presents + (present,)
            i += 1
        return self.norm(x), presents


class _LlamaBase(nn.Cell):
    """Shared host-side preparation: rotary tables and masks from token ids and padding masks."""

    config: LlamaConfig

    def _init_rope(self) -> None:
        self.inv_freq = rope_inv_freq(self.config)
        self.sliding_window = self.config.rope_scaling.get("sliding_window")

    def prepare(self, key_mask: np.ndarray, query_len: int) -> tuple[Tensor, Tensor, Tensor]:
        """``(cos, sin, mask)`` tensors for a forward over the last ``query_len`` of ``key_mask``'s slots."""
        if self.sliding_window and int(key_mask.sum(1).max()) > self.sliding_window:
            raise MS_CONFIG.error(
                f"sequence of {key_mask.shape[1]} tokens exceeds the sliding window ({self.sliding_window}), "
                "which the native backend does not implement",
                location="config.json field 'sliding_window'",
            )
        mask, positions = attention_mask(key_mask, query_len, sliding_window=self.sliding_window)
        cos, sin = rope_tables(self.inv_freq, positions)
        return Tensor(cos), Tensor(sin), Tensor(mask)


class LlamaForCausalLM(_LlamaBase):
    def __init__(self, cfg: LlamaConfig, seed: int = 0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.config = cfg
        self.model = LlamaModel(cfg, rng)
        self.lm_head = None if cfg.tie_word_embeddings else Linear(cfg.hidden_size, cfg.vocab_size, False, rng)
        self._init_rope()

    def logits(self, hidden):
        weight = self.model.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
        return linear(hidden, weight)

    def construct(self, input_ids, cos, sin, mask, caches=None, write=None, last_only: bool = False):
        hidden, presents = self.model(input_ids, cos, sin, mask, caches, write)
        if last_only:
            hidden = hidden[:, -1:]
        return self.logits(hidden), presents


class LlamaForSequenceClassification(_LlamaBase):
    """Scores the last real token of each (right-padded) sequence, like transformers."""

    def __init__(self, cfg: LlamaConfig, seed: int = 0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.config = cfg
        self.model = LlamaModel(cfg, rng)
        self.score = Linear(cfg.hidden_size, max(cfg.num_labels, 1), False, rng)
        self._init_rope()

    def construct(self, input_ids, cos, sin, mask, last_index):
        hidden, _ = self.model(input_ids, cos, sin, mask)
        logits = self.score(hidden)
        index = last_index.view(-1, 1, 1).broadcast_to((logits.shape[0], 1, logits.shape[-1]))
        return ops.gather_elements(logits, 1, index).squeeze(1)


def causal_lm_loss(logits, labels):
    """Mean next-token cross entropy over labels != -100 (transformers' ``ForCausalLMLoss``)."""
    logits = logits[:, :-1].astype(ms.float32)
    labels = labels[:, 1:]
    valid = labels != -100
    safe = ops.where(valid, labels, ops.zeros_like(labels))
    logp = ops.log_softmax(logits, -1)
    nll = -ops.gather_elements(logp, -1, safe.expand_dims(-1)).squeeze(-1)
    count = valid.astype(ms.float32).sum()
    return (nll * valid.astype(ms.float32)).sum() / ops.maximum(count, ops.ones_like(count))


def sparse_targets(labels: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Host side of :func:`sparse_causal_lm_loss`: for right-shifted ``labels`` ``(batch, seq)``,
    the flat positions whose next token is trained, padded to ``width`` entries.

    Returns ``(positions, targets, weights)`` of length ``width`` (weights 1 for real entries).
    """
    shifted = labels[:, 1:]
    rows, cols = np.nonzero(shifted != -100)
    if len(rows) > width:
        raise ValueError(f"{len(rows)} trained tokens do not fit {width} slots")
    positions = np.zeros(width, np.int32)
    targets = np.zeros(width, np.int32)
    weights = np.zeros(width, np.float32)
    positions[: len(rows)] = rows * labels.shape[1] + cols
    targets[: len(rows)] = shifted[rows, cols]
    weights[: len(rows)] = 1.0
    return positions, targets, weights


def sparse_causal_lm_loss(model: LlamaForCausalLM, input_ids, cos, sin, mask, positions, targets, weights):
    """The causal-LM loss computed on the trained positions only (the same value as
    :func:`causal_lm_loss`): the vocabulary projection -- most of a small model's compute -- runs on
    those rows instead of every position."""
    hidden, _ = model.model(input_ids, cos, sin, mask)
    flat = hidden.reshape(-1, hidden.shape[-1])
    picked = ops.gather(flat, positions, 0)
    logits = model.logits(picked).astype(ms.float32)
    logp = ops.log_softmax(logits, -1)
    nll = -ops.gather_elements(logp, -1, targets.expand_dims(-1)).squeeze(-1)
    return (nll * weights).sum() / ops.maximum(weights.sum(), ops.ones_like(weights.sum()))
