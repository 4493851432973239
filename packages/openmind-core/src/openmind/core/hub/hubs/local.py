"""The ``local`` hub: a folder (or ``file://`` URL) laid out as ``<root>/<org>/<name>/``.

Useful as an offline mirror on a shared disk. The root comes from ``--endpoint`` or
``OPENMIND_LOCAL_HUB``; an id may also be the repository folder itself
(``file:///mnt/mirror/org/name`` or ``local::/mnt/mirror/org/name``). A mirror has one revision,
its current content, named ``main``; its commit id is derived from the file names, sizes and
modification times. A symlink that points outside the repository is refused (OM-H008).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

from openmind.core.hub.base import Hub, RemoteFile, Snapshot, Stream
from openmind.core.hub.errors import (
    H_BAD_ENDPOINT,
    H_CLIENT,
    H_REPO_NOT_FOUND,
    H_REVISION_NOT_FOUND,
    H_UNSAFE_PATH,
)
from openmind.core.hub.ids import contained

_SKIP_DIRS = {".git", ".openmind", ".cache"}
CHUNK = 1 << 20


def _to_path(value: str) -> Path:
    if value.startswith("file://"):
        parsed = urlparse(value)
        return Path(
            unquote(parsed.netloc + parsed.path) if parsed.netloc not in ("", "localhost") else unquote(parsed.path)
        )
    return Path(os.path.expanduser(value))


class LocalHub(Hub):
    name = "local"
    default_revision = "main"

    def __init__(self, endpoint: str | None = None, token: str | None = None) -> None:
        super().__init__(endpoint or os.environ.get("OPENMIND_LOCAL_HUB") or None, token)

    def _root(self) -> Path:
        if not self.endpoint:
            raise H_BAD_ENDPOINT.error(
                "the local hub needs its root folder",
                hint="Pass --endpoint /path/to/mirror (or file:///path), set OPENMIND_LOCAL_HUB, or give the "
                "repository folder itself as file:///path/to/org/name.",
            )
        return _to_path(self.endpoint)

    def repo_dir(self, repo_id: str) -> Path:
        if repo_id.startswith("file://") or os.path.isabs(repo_id):
            return _to_path(repo_id)
        return self._root() / repo_id

    def _walk(self, repo: Path) -> list[tuple[str, Path]]:
        real_root = os.path.realpath(repo)
        found: list[tuple[str, Path]] = []
        for dirpath, dirnames, filenames in os.walk(repo, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
            for name in list(dirnames) + filenames:
                full = Path(dirpath) / name
                if full.is_symlink():
                    real = os.path.realpath(full)
                    if real != real_root and not real.startswith(real_root + os.sep):
                        rel = full.relative_to(repo).as_posix()
                        raise H_UNSAFE_PATH.error(
                            f"refusing {rel!r} in {repo}: it is a symlink to {real}, outside the repository"
                        )
            for name in sorted(filenames):
                full = Path(dirpath) / name
                if full.is_file():
                    found.append((full.relative_to(repo).as_posix(), full))
        return found

    def list_files(self, repo_id: str, revision: str) -> Snapshot:
        repo = self.repo_dir(repo_id)
        if not repo.is_dir():
            raise H_REPO_NOT_FOUND.error(f"{repo_id!r}: no folder {repo} in the local hub", location=str(repo))
        files = []
        digest = hashlib.sha1(usedforsecurity=False)
        for rel, full in self._walk(repo):
            st = full.stat()
            files.append(RemoteFile(rel, st.st_size))
            digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        commit = digest.hexdigest()
        if revision not in (self.default_revision, commit):
            raise H_REVISION_NOT_FOUND.error(
                f"{repo_id!r} in the local hub has only revision 'main' (commit {commit[:12]}), not {revision!r}"
            )
        return Snapshot(repo_id, revision, commit, tuple(files))

    def open(self, snapshot: Snapshot, file: RemoteFile, start: int = 0) -> Stream:
        path = contained(self.repo_dir(snapshot.repo_id), file.path)
        fh = open(os.path.realpath(path), "rb")
        fh.seek(start)

        def chunks():
            while True:
                data = fh.read(CHUNK)
                if not data:
                    return
                yield data

        return Stream(start, chunks(), fh.close)

    def upload_folder(self, folder, repo_id, *, revision=None, message="", include=None, exclude=None) -> str:
        from openmind.core.hub.api import select

        if revision not in (None, self.default_revision):
            raise H_REVISION_NOT_FOUND.error(f"the local hub has only revision 'main', not {revision!r}")
        repo = self.repo_dir(repo_id)
        src = Path(folder)
        names = [RemoteFile(p.relative_to(src).as_posix(), None) for p in src.rglob("*") if p.is_file()]
        for f in select(names, include or [], exclude or []):
            dest = contained(repo, f.path)
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
            shutil.copyfile(src / f.path, tmp)
            os.replace(tmp, dest)
        return self.list_files(repo_id, self.default_revision).commit

    def create_repo(self, repo_id: str, *, private: bool = False, exist_ok: bool = True) -> None:
        repo = self.repo_dir(repo_id)
        if repo.exists() and not exist_ok:
            raise H_CLIENT.error(f"{repo} exists already")
        repo.mkdir(parents=True, exist_ok=True)

    def delete_repo(self, repo_id: str, *, missing_ok: bool = False) -> None:
        repo = self.repo_dir(repo_id)
        if not repo.is_dir():
            if missing_ok:
                return
            raise H_REPO_NOT_FOUND.error(f"{repo_id!r}: no folder {repo} in the local hub")
        shutil.rmtree(repo)
