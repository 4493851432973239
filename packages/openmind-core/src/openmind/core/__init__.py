"""openmind.core: registry, plugins, arguments, errors and the CLI skeleton.

This package never imports a framework (torch, mindspore, transformers, datasets, numpy)
at import time; a test asserts it.
"""

from openmind.core.version import __version__

__all__ = ["__version__"]
