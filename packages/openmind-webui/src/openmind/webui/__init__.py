"""openmind.webui (distribution openmind-webui): ``openmind webui``, a Gradio page over the SDK/CLI.

The page never keeps a second copy of the options: the Train form is generated from the unified
argument groups of :mod:`openmind.core.args`, and training, serving, evaluation and downloads run as
``openmind ...`` processes of their own (see :mod:`openmind.webui.jobs`), so a reload or a closed
tab never stops them.
"""

from openmind.webui.version import __version__

__all__ = ["__version__"]
