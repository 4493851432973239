"""openMind 1.0's ``openmind.utils.hub``: the hub API with 1.0's names and signatures.

Downloads go through openmind's hub layer (:func:`openmind.core.hub.pull`): any registered hub
(Modelers by default, ``hf::`` / ``ms::`` prefixes, ``OPENMIND_HUB``), the shared cache,
offline mode (``OPENMIND_OFFLINE=1``) and coded errors. This is what LLaMA-Factory's openMind hub
mode (``USE_OPENMIND_HUB=1``) imports.

Constants keep 1.0's names; their values follow 2.x's layout (``OPENMIND_CACHE``, else
``~/.cache/openmind``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from openmind.core.paths import cache_root

#: 1.0: ``OM_HOME`` (the root of openmind's caches).
OM_HOME = str(cache_root())
#: 1.0: the model hub cache.
OM_HUB_CACHE = str(cache_root() / "hub")
OPENMIND_CACHE = OM_HUB_CACHE
#: 1.0: where ``OmDataset.load_dataset`` caches datasets.
OM_DATASETS_CACHE = str(cache_root() / "datasets")

__all__ = [
    "OM_DATASETS_CACHE",
    "OM_HOME",
    "OM_HUB_CACHE",
    "OPENMIND_CACHE",
    "create_repo",
    "is_offline_mode",
    "om_hub_download",
    "snapshot_download",
    "upload_folder",
]


def is_offline_mode() -> bool:
    from openmind.core.hub import offline

    return offline() or os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")


def _patterns(value: Any) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def snapshot_download(
    repo_id: str,
    *,
    revision: str | None = None,
    cache_dir: str | os.PathLike | None = None,
    local_dir: str | os.PathLike | None = None,
    token: str | None = None,
    allow_patterns: str | list[str] | None = None,
    ignore_patterns: str | list[str] | None = None,
    repo_type: str | None = None,
    endpoint: str | None = None,
    **_ignored: Any,
) -> str:
    """Download a repository and return its local folder (1.0's / huggingface_hub's signature).

    ``cache_dir`` (1.0: the cache root) places plain files in ``cache_dir/<org>--<name>``; without
    it the shared openmind cache is used. A local folder is returned as is.
    """
    if os.path.isdir(str(repo_id)):
        return str(repo_id)
    if repo_type not in (None, "model"):
        from openmind.core.compat.errors import C_REMOVED

        raise C_REMOVED.error(
            f"snapshot_download(repo_type={repo_type!r}) is not supported: openmind's hub layer downloads models",
            hint="Load datasets with OmDataset.load_dataset / openmind.data, or `openmind pull` a model.",
        )
    from openmind.core.hub import pull

    if cache_dir is not None and local_dir is None:
        local_dir = Path(cache_dir) / str(repo_id).split("::")[-1].replace("/", "--")
    folder = pull(
        str(repo_id),
        revision=revision,
        include=_patterns(allow_patterns),
        exclude=_patterns(ignore_patterns),
        local_dir=local_dir,
        endpoint=endpoint,
        token=token,
    )
    return str(folder)


def om_hub_download(
    repo_id: str,
    filename: str,
    *,
    subfolder: str | None = None,
    revision: str | None = None,
    cache_dir: str | os.PathLike | None = None,
    local_dir: str | os.PathLike | None = None,
    token: str | None = None,
    endpoint: str | None = None,
    **_ignored: Any,
) -> str:
    """Download one file of a repository and return its local path."""
    name = f"{subfolder}/{filename}" if subfolder else filename
    folder = snapshot_download(
        repo_id,
        revision=revision,
        cache_dir=cache_dir,
        local_dir=local_dir,
        token=token,
        allow_patterns=[name],
        endpoint=endpoint,
    )
    return str(Path(folder) / name)


def upload_folder(
    *,
    repo_id: str,
    folder_path: str | os.PathLike,
    commit_message: str | None = None,
    token: str | None = None,
    revision: str | None = None,
    **_ignored: Any,
) -> str:
    """Upload a folder as one commit (creating the repository if missing)."""
    from openmind.core.hub import push

    return str(push(str(folder_path), repo_id, message=commit_message or "upload", token=token, revision=revision))


def create_repo(repo_id: str, *, token: str | None = None, private: bool = False, exist_ok: bool = True, **_: Any):
    from openmind.core.hub import get_hub
    from openmind.core.hub.ids import parse

    hid = parse(repo_id, None)
    get_hub(hid.hub, token=token).create_repo(hid.repo_id, private=private, exist_ok=exist_ok)
    return hid.repo_id
