"""The ``openmind`` command line (also installed as ``openmind-cli``, the 1.0 name)."""

from openmind.core.cli.main import main

__all__ = ["main"]
