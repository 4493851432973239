"""openmind.mm (distribution openmind-mm)."""

from openmind.mm.version import __version__

__all__ = ["__version__"]
