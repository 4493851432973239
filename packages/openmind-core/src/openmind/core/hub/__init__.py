"""Hubs: pull / push / rm / cache across Modelers, Hugging Face, ModelScope and local mirrors.

::

    from openmind.core.hub import pull, push, rm
    folder = pull("hf::org/name", revision="main", include=["*.json", "*.safetensors"])
    push("./my-model", "om::me/my-model", message="first upload")

Hubs are plugins (:class:`openmind.core.hub.base.Hub`, registered as ``HubSpec``); the download
engine, the cache and the checks are shared by all of them. Importing this package imports no hub
client and no HTTP library.
"""

from __future__ import annotations

from openmind.core.hub.api import get_hub, offline, pull, push, rm

__all__ = ["get_hub", "offline", "pull", "push", "rm"]
