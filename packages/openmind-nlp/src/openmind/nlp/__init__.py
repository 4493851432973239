"""openmind.nlp (distribution openmind-nlp)."""

from openmind.nlp.version import __version__

__all__ = ["__version__"]
