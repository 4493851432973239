"""openmind-speedups: optional C speedups of openmind's hot paths (``import openmind.speedups``).

Nothing here changes a result: each function returns exactly what the pure-Python path it speeds
up returns (openmind-nlp's tests run both and compare), and declines (``None``) whatever is not its
plain case, which the Python path then handles. openmind-nlp uses it when it is installed
(``pip install "openmind[nlp,speedups]"``) and renders the same text without it; set
``OPENMIND_NO_SPEEDUPS=1`` to switch it off.

- :func:`fill_layout` renders a conversation of a "layout" chat-template family (the text of a
  message is its content between texts that depend on the roles alone: InternLM2/3, Yi-1.5,
  Phi-3/4, DeepSeek-LLM, Mistral v7, ChatML, ...) from the texts cached for its role sequence.

``AVAILABLE`` says whether the compiled module is present: the source distribution builds it when a
C compiler and the Python headers are there, and installs without it otherwise.
"""

from __future__ import annotations

from openmind.speedups.version import __version__

try:
    from openmind.speedups._templates import fill_layout
except ImportError:  # built without a compiler: the callers keep their Python paths
    fill_layout = None

AVAILABLE = fill_layout is not None

__all__ = ["AVAILABLE", "__version__", "fill_layout"]
