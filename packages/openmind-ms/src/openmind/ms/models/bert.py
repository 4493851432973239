"""BERT encoders on MindSpore (MiniLM, BERT, ...): embeddings, sequence classification, masked LM.

Parameter names are transformers' (``encoder.layer.0.attention.self.query.weight``); a
``BertForSequenceClassification`` checkpoint keeps its ``bert.`` prefix and ``classifier``, a
``BertForMaskedLM`` one its ``cls.predictions.*`` head (the decoder tied to the word embeddings
unless ``tie_word_embeddings`` is false).
"""

from __future__ import annotations

import math

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

from openmind.ms.errors import MS_CONFIG
from openmind.ms.models.config import BertConfig
from openmind.ms.models.layers import MASK_VALUE, Embedding, LayerNorm, Linear, activation


class BertEmbeddings(nn.Cell):
    def __init__(self, cfg: BertConfig, rng: np.random.Generator):
        super().__init__()
        self.word_embeddings = Embedding(cfg.vocab_size, cfg.hidden_size, rng)
        self.position_embeddings = Embedding(cfg.max_position_embeddings, cfg.hidden_size, rng)
        self.token_type_embeddings = Embedding(cfg.type_vocab_size, cfg.hidden_size, rng)
        self.LayerNorm = LayerNorm(cfg.hidden_size, cfg.layer_norm_eps)

    def construct(self, input_ids, token_type_ids, position_ids):
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        return self.LayerNorm(x + self.position_embeddings(position_ids))


class BertSelfAttention(nn.Cell):
    def __init__(self, cfg: BertConfig, rng: np.random.Generator):
        super().__init__()
        self.heads = cfg.num_attention_heads
        self.head_dim = cfg.hidden_size // cfg.num_attention_heads
        self.query = Linear(cfg.hidden_size, cfg.hidden_size, True, rng)
        self.key = Linear(cfg.hidden_size, cfg.hidden_size, True, rng)
        self.value = Linear(cfg.hidden_size, cfg.hidden_size, True, rng)

    def construct(self, x, mask):
        b, s, h = x.shape
        q = self.query(x).view(b, s, self.heads, self.head_dim).swapaxes(1, 2)
        k = self.key(x).view(b, s, self.heads, self.head_dim).swapaxes(1, 2)
        v = self.value(x).view(b, s, self.heads, self.head_dim).swapaxes(1, 2)
        scores = ops.matmul(q, k.swapaxes(-1, -2)) / math.sqrt(self.head_dim) + mask
        probs = ops.softmax(scores.astype(ms.float32), -1).astype(q.dtype)
        return ops.matmul(probs, v).swapaxes(1, 2).reshape(b, s, h)


class BertSelfOutput(nn.Cell):
    def __init__(self, cfg: BertConfig, size_in: int, rng: np.random.Generator):
        super().__init__()
        self.dense = Linear(size_in, cfg.hidden_size, True, rng)
        self.LayerNorm = LayerNorm(cfg.hidden_size, cfg.layer_norm_eps)

    def construct(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class BertAttention(nn.Cell):
    def __init__(self, cfg: BertConfig, rng: np.random.Generator):
        super().__init__()
        self.self = BertSelfAttention(cfg, rng)
        self.output = BertSelfOutput(cfg, cfg.hidden_size, rng)

    def construct(self, x, mask):
        return self.output(self.self(x, mask), x)


class BertIntermediate(nn.Cell):
    def __init__(self, cfg: BertConfig, rng: np.random.Generator):
        super().__init__()
        self.dense = Linear(cfg.hidden_size, cfg.intermediate_size, True, rng)
        self.act = activation(cfg.hidden_act)
        if self.act is None:
            raise MS_CONFIG.error(f"hidden_act {cfg.hidden_act!r} is not implemented", location="config.json")

    def construct(self, x):
        return self.act(self.dense(x))


class BertLayer(nn.Cell):
    def __init__(self, cfg: BertConfig, rng: np.random.Generator):
        super().__init__()
        self.attention = BertAttention(cfg, rng)
        self.intermediate = BertIntermediate(cfg, rng)
        self.output = BertSelfOutput(cfg, cfg.intermediate_size, rng)

    def construct(self, x, mask):
        x = self.attention(x, mask)
        return self.output(self.intermediate(x), x)


class BertEncoder(nn.Cell):
    def __init__(self, cfg: BertConfig, rng: np.random.Generator):
        super().__init__()
        self.layer = nn.CellList([BertLayer(cfg, rng) for _ in range(cfg.num_hidden_layers)])

    def construct(self, x, mask):
        for layer in self.layer:
            x = layer(x, mask)
        return x


class BertPooler(nn.Cell):
    def __init__(self, cfg: BertConfig, rng: np.random.Generator):
        super().__init__()
        self.dense = Linear(cfg.hidden_size, cfg.hidden_size, True, rng)

    def construct(self, hidden):
        return ops.tanh(self.dense(hidden[:, 0]))


class BertModel(nn.Cell):
    """The encoder; ``construct`` returns the last hidden states ``(batch, seq, hidden)``."""

    def __init__(self, cfg: BertConfig, seed: int = 0, with_pooler: bool = False):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.config = cfg
        self.embeddings = BertEmbeddings(cfg, rng)
        self.encoder = BertEncoder(cfg, rng)
        self.pooler = BertPooler(cfg, rng) if with_pooler else None

    @staticmethod
    def extended_mask(attention_mask: np.ndarray) -> np.ndarray:
        return np.where(attention_mask[:, None, None, :] > 0, 0.0, MASK_VALUE).astype(np.float32)

    def construct(self, input_ids, token_type_ids, position_ids, mask):
        return self.encoder(self.embeddings(input_ids, token_type_ids, position_ids), mask)


class BertForSequenceClassification(nn.Cell):
    def __init__(self, cfg: BertConfig, seed: int = 0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.config = cfg
        self.bert = BertModel(cfg, seed, with_pooler=True)
        self.classifier = Linear(cfg.hidden_size, max(cfg.num_labels, 1), True, rng)

    def construct(self, input_ids, token_type_ids, position_ids, mask):
        hidden = self.bert(input_ids, token_type_ids, position_ids, mask)
        return self.classifier(self.bert.pooler(hidden))


class BertPredictionHeadTransform(nn.Cell):
    def __init__(self, cfg: BertConfig, rng: np.random.Generator):
        super().__init__()
        self.dense = Linear(cfg.hidden_size, cfg.hidden_size, True, rng)
        self.act = activation(cfg.hidden_act)
        if self.act is None:
            raise MS_CONFIG.error(f"hidden_act {cfg.hidden_act!r} is not implemented", location="config.json")
        self.LayerNorm = LayerNorm(cfg.hidden_size, cfg.layer_norm_eps)

    def construct(self, x):
        return self.LayerNorm(self.act(self.dense(x)))


class BertLMPredictionHead(nn.Cell):
    def __init__(self, cfg: BertConfig, rng: np.random.Generator, tied: bool):
        super().__init__()
        self.transform = BertPredictionHeadTransform(cfg, rng)
        self.bias = Parameter(Tensor(np.zeros(cfg.vocab_size, np.float32)), name="bias")
        self.decoder = None if tied else Linear(cfg.hidden_size, cfg.vocab_size, False, rng)

    def construct(self, hidden, word_embeddings):
        x = self.transform(hidden)
        weight = word_embeddings if self.decoder is None else self.decoder.weight
        return ops.matmul(x, weight.swapaxes(0, 1)) + self.bias


class BertOnlyMLMHead(nn.Cell):
    def __init__(self, cfg: BertConfig, rng: np.random.Generator, tied: bool):
        super().__init__()
        self.predictions = BertLMPredictionHead(cfg, rng, tied)


class BertForMaskedLM(nn.Cell):
    """``construct`` returns the vocabulary logits of every position ``(batch, seq, vocab)``."""

    def __init__(self, cfg: BertConfig, seed: int = 0):
        super().__init__()
        rng = np.random.default_rng(seed + 1)
        self.config = cfg
        self.bert = BertModel(cfg, seed)
        self.cls = BertOnlyMLMHead(cfg, rng, tied=bool(cfg.raw.get("tie_word_embeddings", True)))

    def construct(self, input_ids, token_type_ids, position_ids, mask):
        hidden = self.bert(input_ids, token_type_ids, position_ids, mask)
        return self.cls.predictions(hidden, self.bert.embeddings.word_embeddings.weight)
