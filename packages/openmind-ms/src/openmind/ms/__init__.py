"""openmind.ms (distribution openmind-ms)."""

from openmind.ms.version import __version__

__all__ = ["__version__"]
