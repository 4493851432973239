"""openmind.pt (distribution openmind-pt)."""

from openmind.pt.version import __version__

__all__ = ["__version__"]
