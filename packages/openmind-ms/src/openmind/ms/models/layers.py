"""Building blocks with Hugging Face parameter names, on MindSpore ops that have CPU, GPU and Ascend kernels."""

from __future__ import annotations

import math

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

#: additive attention-mask value: finite, so that fully masked rows (left padding) stay NaN-free
MASK_VALUE = -1e9


def _init_uniform(shape: tuple[int, ...], fan_in: int, rng: np.random.Generator) -> np.ndarray:
    bound = 1.0 / math.sqrt(fan_in) if fan_in else 0.0
    return rng.uniform(-bound, bound, size=shape).astype(np.float32)


def linear(x, weight, bias=None):
    """``x W^T + b`` as a 2-D ``MatMul(transpose_b=True)``: on CPU this is 5-8x faster than
    ``ops.dense`` / ``mint.nn.functional.linear`` (which materialise the transposed weight)."""
    shape = x.shape
    y = _MATMUL_TB(x.reshape(-1, shape[-1]), weight)
    if bias is not None:
        y = y + bias
    return y.reshape(shape[:-1] + (weight.shape[0],))


_MATMUL_TB = ops.MatMul(transpose_b=True)


class Linear(nn.Cell):
    """``y = x W^T + b`` with ``weight`` of shape ``(out, in)`` like ``torch.nn.Linear``."""

    def __init__(self, in_features: int, out_features: int, bias: bool = False, rng: np.random.Generator | None = None):
        super().__init__()
        rng = rng or np.random.default_rng(0)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(Tensor(_init_uniform((out_features, in_features), in_features, rng)), name="weight")
        self.bias = Parameter(Tensor(np.zeros(out_features, np.float32)), name="bias") if bias else None

    def construct(self, x):
        return linear(x, self.weight, self.bias)


class Embedding(nn.Cell):
    def __init__(self, num: int, dim: int, rng: np.random.Generator | None = None):
        super().__init__()
        rng = rng or np.random.default_rng(0)
        self.weight = Parameter(Tensor(rng.normal(0, 0.02, size=(num, dim)).astype(np.float32)), name="weight")

    def construct(self, ids):
        return ops.gather(self.weight, ids, 0)


class RMSNorm(nn.Cell):
    """Llama's RMSNorm, computed in float32 like transformers' ``LlamaRMSNorm``."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = Parameter(Tensor(np.ones(dim, np.float32)), name="weight")

    def construct(self, x):
        dtype = x.dtype
        x32 = x.astype(ms.float32)
        variance = (x32 * x32).mean(-1, keep_dims=True)
        x32 = x32 * ops.rsqrt(variance + self.eps)
        return self.weight * x32.astype(dtype)


class LayerNorm(nn.Cell):
    """``torch.nn.LayerNorm`` over the last axis (written out: LayerNormExt has no CPU kernel)."""

    def __init__(self, dim: int, eps: float = 1e-12):
        super().__init__()
        self.eps = eps
        self.weight = Parameter(Tensor(np.ones(dim, np.float32)), name="weight")
        self.bias = Parameter(Tensor(np.zeros(dim, np.float32)), name="bias")

    def construct(self, x):
        mean = x.mean(-1, keep_dims=True)
        centered = x - mean
        variance = (centered * centered).mean(-1, keep_dims=True)
        return centered * ops.rsqrt(variance + self.eps) * self.weight + self.bias


def activation(name: str):
    """Hugging Face ``hidden_act`` names -> functions."""
    if name in ("silu", "swish"):
        return ops.silu
    if name == "gelu":
        return lambda x: ops.gelu(x, approximate="none")
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return lambda x: ops.gelu(x, approximate="tanh")
    if name == "relu":
        return ops.relu
    return None


def dropout(x, p: float, training: bool):
    if not training or p <= 0:
        return x
    return ops.dropout(x, p=p)
