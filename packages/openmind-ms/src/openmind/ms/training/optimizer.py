"""AdamW exactly as ``torch.optim.AdamW`` computes it (bias-corrected moments, decoupled weight
decay), with a per-step learning-rate table.

MindSpore's ``nn.AdamWeightDecay`` follows BERT's optimizer (no bias correction), whose first
steps are ~3x larger; the fused ``mint.optim.AdamW`` has no CPU kernel. The same hyper-parameters
must mean the same training on both frameworks, so this is written out with elementwise ops.
"""

from __future__ import annotations

import numpy as np
from mindspore import Parameter, ParameterTuple, Tensor, nn, ops


class AdamW(nn.Cell):
    def __init__(
        self,
        params: list[Parameter],
        learning_rates: list[float],
        *,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__()
        self.parameters = ParameterTuple(params)
        self.exp_avg = self.parameters.clone(prefix="exp_avg", init="zeros")
        self.exp_avg_sq = self.parameters.clone(prefix="exp_avg_sq", init="zeros")
        self.step = Parameter(Tensor(np.array(0, np.int32)), name="adamw_step", requires_grad=False)
        self.rates = Tensor(np.asarray(learning_rates, np.float32))
        self.last = len(learning_rates) - 1
        self.beta1, self.beta2 = betas
        self.eps = eps
        #: decay matrices only (HF excludes biases and norm weights)
        self.decay = tuple(weight_decay if len(p.shape) > 1 else 0.0 for p in params)

    def construct(self, grads):
        step = self.step + 1
        ops.assign(self.step, step)
        lr = self.rates[ops.minimum(step - 1, self.last)]
        t = step.astype(self.rates.dtype)
        bc1 = 1.0 - ops.pow(self.beta1, t)
        bc2_sqrt = ops.sqrt(1.0 - ops.pow(self.beta2, t))
        for i in range(len(self.decay)):
            p, g, m, v = self.parameters[i], grads[i], self.exp_avg[i], self.exp_avg_sq[i]
            if self.decay[i] > 0:
                ops.assign(p, p * (1.0 - lr * self.decay[i]))
            m_new = m * self.beta1 + g * (1.0 - self.beta1)
            v_new = v * self.beta2 + g * g * (1.0 - self.beta2)
            ops.assign(m, m_new)
            ops.assign(v, v_new)
            ops.assign(p, p - (lr / bc1) * m_new / (ops.sqrt(v_new) / bc2_sqrt + self.eps))
        return lr
