"""Scores: multiple choice by log-likelihood, generations by exact match, regex or ROUGE.

ROUGE is Google's ``rouge-score`` implementation (the one the ROUGE papers' numbers are
reproduced with); Chinese / Japanese text is tokenized per character so it gets a score at all
(``rouge-score``'s default tokenizer keeps only ``[a-z0-9]``).
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

from openmind.core.errors import X_MISSING

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def pick_choice(loglikelihoods: Sequence[float]) -> int:
    """Index of the most likely choice (the first on ties, as lm-eval's argmax)."""
    best = 0
    for i, value in enumerate(loglikelihoods):
        if value > loglikelihoods[best]:
            best = i
    return best


def normalize(text: str) -> str:
    """Lower case, strip punctuation and articles, collapse whitespace (SQuAD-style)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation) | set("，。！？；：、“”‘’（）"))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match(prediction: str, targets: Sequence[str]) -> float:
    """1.0 when the normalised prediction equals a normalised target."""
    pred = normalize(prediction)
    return float(any(pred == normalize(t) for t in targets))


def regex_match(prediction: str, targets: Sequence[str], pattern: str) -> float:
    """1.0 when ``pattern``'s first group (or whole match) in the prediction equals a target
    (normalised); the first match counts."""
    match = re.search(pattern, prediction)
    if not match:
        return 0.0
    found = match.group(1) if match.groups() else match.group(0)
    return float(any(normalize(found) == normalize(t) for t in targets))


class _Tokenizer:
    """rouge-score tokenizer that keeps CJK characters (one token each) and Latin words."""

    def tokenize(self, text: str) -> list[str]:
        text = _CJK.sub(lambda m: f" {m.group(0)} ", text.lower())
        return [
            t
            for t in re.split(r"[^0-9a-z\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+", text)
            if t
        ]


def rouge(
    prediction: str, targets: Sequence[str], types: Sequence[str] = ("rouge1", "rouge2", "rougeL")
) -> dict[str, float]:
    """ROUGE F-measures against the best-matching target."""
    try:
        from rouge_score import rouge_scorer
    except ImportError as exc:
        raise X_MISSING.error(
            "ROUGE scoring needs the 'rouge-score' package", hint='Install it: pip install "rouge-score"'
        ) from exc
    scorer = rouge_scorer.RougeScorer(list(types), tokenizer=_Tokenizer())
    best: dict[str, float] = {t: 0.0 for t in types}
    for target in targets:
        scores = scorer.score(target, prediction)
        if scores[types[-1]].fmeasure >= best[types[-1]]:
            best = {t: scores[t].fmeasure for t in types}
    return best
