"""openmind.data (distribution openmind-data)."""

from openmind.data.version import __version__

__all__ = ["__version__"]
