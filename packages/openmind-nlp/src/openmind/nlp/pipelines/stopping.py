"""Stop strings on text, shared by every framework's generation loop.

Generation decodes each row's tokens as they come; :class:`StopText` keeps what may be shown
(never a stop string, never a prefix of one that may still complete) and says when a row stops.
"""

from __future__ import annotations

from collections.abc import Sequence


def truncate_at_stop(text: str, stops: Sequence[str]) -> tuple[str, bool]:
    """``text`` cut before the earliest stop string, and whether one was found."""
    cut = min((i for i in (text.find(s) for s in stops if s) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


def _held_back(text: str, stops: Sequence[str]) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of a stop string."""
    best = 0
    for stop in stops:
        for n in range(min(len(stop) - 1, len(text)), best, -1):
            if text.endswith(stop[:n]):
                best = n
                break
    return best


class StopText:
    """Incremental text of one generated row with stop strings applied.

    ``update(full_text)`` takes the decode of every token generated so far and returns the new
    text that is safe to emit; :attr:`stopped` turns true once a stop string appears. Text ending
    in U+FFFD (an incomplete UTF-8 sequence) is held back until the character completes.
    """

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = tuple(s for s in stops if s)
        self.emitted = ""
        self.stopped = False

    def update(self, full_text: str, final: bool = False) -> str:
        if self.stopped:
            return ""
        text, self.stopped = truncate_at_stop(full_text, self.stops)
        if not self.stopped and not final:
            text = text[: len(text) - _held_back(text, self.stops)]
            while text.endswith("\ufffd"):
                text = text[:-1]
        if not text.startswith(self.emitted):
            # the decode of a longer prefix rewrote earlier text (rare tokenizer clean-ups): emit
            # nothing until the rows agree again; the final text is still the full decode.
            return ""
        delta = text[len(self.emitted) :]
        self.emitted = text
        return delta
