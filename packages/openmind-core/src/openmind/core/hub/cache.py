"""The download cache: one layout for every hub (Hugging Face's blobs/snapshots layout).

::

    $OPENMIND_CACHE/hub/<hub>/models--<org>--<name>/
        blobs/<sha256 or git-sha1>          complete, verified content (one copy per content)
        blobs/<key>.incomplete              a partial download (resumed by the next pull)
        snapshots/<commit>/<path>           -> ../../blobs/<blob>   (what a model loader reads)
        refs/<revision>                     the commit a branch/tag resolved to when last pulled
        manifests/<commit>.json             what the hub listed: sizes and checksums, files asked for
        last_used                           its mtime is the last time the repo was pulled or resolved

A file appears under ``snapshots/`` only once complete and verified (atomic rename + link), so a
half-downloaded file is never visible under its final name. ``verify`` re-hashes blobs against
their names and the manifest and reports partial downloads truthfully.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from openmind.core.hub.base import RemoteFile, Snapshot
from openmind.core.hub.ids import safe_relpath
from openmind.core.paths import cache_root

HASH_CHUNK = 1 << 20


def hub_root() -> Path:
    """``$OPENMIND_CACHE/hub`` (``~/.cache/openmind/hub`` by default)."""
    return cache_root() / "hub"


def folder_name(repo_id: str) -> str:
    if repo_id.startswith("file://") or os.path.isabs(repo_id):
        base = repo_id.rstrip("/").rsplit("/", 1)[-1] or "root"
        return f"models--local--{base}-{hashlib.sha1(repo_id.encode()).hexdigest()[:10]}"
    return "models--" + repo_id.replace("/", "--")


def partial_key(file: RemoteFile, commit: str) -> str:
    """Stable name of a file's partial download, so that the next pull resumes it."""
    return file.blob_name or "u" + hashlib.sha1(f"{commit}/{file.path}".encode()).hexdigest()


class Hasher:
    """sha256 and, when the size is known, the git blob sha1 of a stream of bytes."""

    def __init__(self, size: int | None, git: bool) -> None:
        self.sha256 = hashlib.sha256()
        self.sha1 = None
        if git and size is not None:
            self.sha1 = hashlib.sha1(f"blob {size}\0".encode(), usedforsecurity=False)

    def update(self, data: bytes | memoryview) -> None:
        self.sha256.update(data)
        if self.sha1 is not None:
            self.sha1.update(data)

    def feed_file(self, path: Path, limit: int | None = None) -> int:
        done = 0
        with open(path, "rb") as fh:
            while limit is None or done < limit:
                data = fh.read(HASH_CHUNK if limit is None else min(HASH_CHUNK, limit - done))
                if not data:
                    break
                self.update(data)
                done += len(data)
        return done


class BackgroundHasher:
    """Feeds a :class:`Hasher` from another thread, so that hashing (which releases the GIL) runs
    beside the network reads and the disk writes instead of after each of them."""

    _END = object()

    def __init__(self, hasher: Hasher) -> None:
        import queue
        import threading

        self.hasher = hasher
        self._queue: queue.Queue = queue.Queue(maxsize=256)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="om-hash", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is self._END:
                return
            if self._error is None:
                try:
                    self.hasher.update(item)
                except BaseException as exc:  # reported by finish()
                    self._error = exc

    def update(self, data: bytes) -> None:
        self._queue.put(data)

    def finish(self) -> Hasher:
        self._queue.put(self._END)
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self.hasher


def check_content(file: RemoteFile, size: int, hasher: Hasher) -> str | None:
    """Compare a finished download with the hub's metadata; return what is wrong, or ``None``."""
    if file.size is not None and size != file.size:
        return f"size {size} bytes, the hub says {file.size}"
    expected = file.expected_sha256
    if expected and hasher.sha256.hexdigest() != expected:
        return f"sha256 {hasher.sha256.hexdigest()}, the hub says {expected}"
    if not expected and file.git_sha1 and hasher.sha1 is not None and hasher.sha1.hexdigest() != file.git_sha1:
        return f"git blob id {hasher.sha1.hexdigest()}, the hub says {file.git_sha1}"
    return None


def link_or_copy(blob: Path, dest: Path) -> None:
    """Make ``dest`` point at ``blob`` atomically (relative symlink; hard link or copy where
    symlinks are not allowed)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        tmp.unlink(missing_ok=True)
        try:
            os.symlink(os.path.relpath(blob, dest.parent), tmp)
        except (OSError, NotImplementedError):
            try:
                os.link(blob, tmp)
            except OSError:
                shutil.copyfile(blob, tmp)
        os.replace(tmp, dest)
    finally:
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink(missing_ok=True)


@dataclass
class RepoCache:
    """One repository of one hub in the cache."""

    hub: str
    repo_id: str
    root: Path = field(default_factory=hub_root)

    @property
    def path(self) -> Path:
        return self.root / self.hub / folder_name(self.repo_id)

    @property
    def blobs(self) -> Path:
        return self.path / "blobs"

    def snapshot_dir(self, commit: str) -> Path:
        return self.path / "snapshots" / safe_relpath(commit, what="commit")

    def ref_path(self, revision: str) -> Path:
        return self.path / "refs" / safe_relpath(revision, what="revision")

    def read_ref(self, revision: str) -> str | None:
        path = self.ref_path(revision)
        try:
            return path.read_text(encoding="utf-8").strip() or None
        except OSError:
            return None

    def write_ref(self, revision: str, commit: str) -> None:
        if revision == commit:
            return
        atomic_write(self.ref_path(revision), commit)

    def manifest_path(self, commit: str) -> Path:
        return self.path / "manifests" / f"{safe_relpath(commit, what='commit')}.json"

    def read_manifest(self, commit: str) -> dict | None:
        try:
            return json.loads(self.manifest_path(commit).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def write_manifest(self, snapshot: Snapshot, requested: list[RemoteFile]) -> None:
        old = self.read_manifest(snapshot.commit) or {}
        revisions = sorted(set(old.get("revisions", [])) | ({snapshot.revision} - {snapshot.commit}))
        data = {
            "hub": self.hub,
            "repo_id": self.repo_id,
            "commit": snapshot.commit,
            "revisions": revisions,
            "files": {f.path: {"size": f.size, "sha256": f.sha256, "etag": f.etag} for f in snapshot.files},
            "requested": sorted(set(old.get("requested", [])) | {f.path for f in requested}),
        }
        atomic_write(self.manifest_path(snapshot.commit), json.dumps(data, indent=1, sort_keys=True))

    def touch(self) -> None:
        marker = self.path / "last_used"
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def remote_file(path: str, meta: dict) -> RemoteFile:
    return RemoteFile(path, meta.get("size"), sha256=meta.get("sha256"), etag=meta.get("etag"))


# ---- ls / verify / clean ---------------------------------------------------------------------


@dataclass
class CachedRepo:
    hub: str
    repo_id: str
    path: Path
    size: int
    files: int
    commits: list[str]
    refs: dict[str, str]
    last_used: float
    partial_bytes: int

    def to_dict(self) -> dict:
        return {
            "hub": self.hub,
            "repo_id": self.repo_id,
            "path": str(self.path),
            "size": self.size,
            "files": self.files,
            "commits": self.commits,
            "refs": self.refs,
            "last_used": self.last_used,
            "partial_bytes": self.partial_bytes,
        }


def _dir_size(folder: Path) -> tuple[int, int, int]:
    """(bytes of complete blobs, number of blobs, bytes of partial downloads)."""
    size = count = partial = 0
    if folder.is_dir():
        for entry in os.scandir(folder):
            if not entry.is_file(follow_symlinks=False) or entry.name.endswith(".lock"):
                continue
            st = entry.stat(follow_symlinks=False)
            if entry.name.endswith(".incomplete"):
                partial += st.st_size
            else:
                size += st.st_size
                count += 1
    return size, count, partial


def scan(root: Path | None = None) -> list[CachedRepo]:
    """Every repository in the cache, with size, commits, refs and last use."""
    root = root or hub_root()
    repos: list[CachedRepo] = []
    if not root.is_dir():
        return repos
    for hub_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for repo_dir in sorted(p for p in hub_dir.iterdir() if p.is_dir() and p.name.startswith("models--")):
            commits = sorted(p.name for p in (repo_dir / "snapshots").glob("*") if p.is_dir())
            manifests = sorted((repo_dir / "manifests").glob("*.json"))
            repo_id = repo_dir.name[len("models--") :].replace("--", "/")
            for manifest in manifests:
                try:
                    repo_id = json.loads(manifest.read_text(encoding="utf-8")).get("repo_id", repo_id)
                    break
                except (OSError, ValueError):
                    continue
            commits = sorted(set(commits) | {m.stem for m in manifests})
            refs = {}
            refs_dir = repo_dir / "refs"
            if refs_dir.is_dir():
                for ref in refs_dir.rglob("*"):
                    if ref.is_file():
                        refs[ref.relative_to(refs_dir).as_posix()] = ref.read_text(encoding="utf-8").strip()
            size, count, partial = _dir_size(repo_dir / "blobs")
            marker = repo_dir / "last_used"
            last_used = marker.stat().st_mtime if marker.exists() else repo_dir.stat().st_mtime
            repos.append(CachedRepo(hub_dir.name, repo_id, repo_dir, size, count, commits, refs, last_used, partial))
    return repos


@dataclass
class FileCheck:
    """Verification result of one file: ``ok``, ``corrupt``, ``missing``, ``partial``."""

    repo: str
    commit: str
    path: str
    state: str
    detail: str = ""

    def to_dict(self) -> dict:
        return {"repo": self.repo, "commit": self.commit, "path": self.path, "state": self.state, "detail": self.detail}


def verify(repo: CachedRepo) -> Iterator[FileCheck]:
    """Re-hash every cached file of ``repo`` against the hub's checksums and report partial downloads."""
    cache = RepoCache(repo.hub, repo.repo_id, repo.path.parent.parent)
    label = f"{repo.hub}:{repo.repo_id}"
    accounted: set[str] = set()
    for commit in repo.commits:
        manifest = cache.read_manifest(commit)
        snap = repo.path / "snapshots" / commit
        if manifest is None:
            # no manifest (a cache written by another tool): check blob-named files against their names
            for file in sorted(p for p in snap.rglob("*") if p.is_file()):
                rel = file.relative_to(snap).as_posix()
                blob = Path(os.path.realpath(file)).name
                yield _check_file(label, commit, rel, file, RemoteFile(rel, None, etag=blob))
            continue
        files = manifest.get("files", {})
        for rel in manifest.get("requested", []):
            meta = files.get(rel, {})
            remote = remote_file(rel, meta)
            target = snap / rel
            key = partial_key(remote, commit)
            accounted.add(key)
            if target.exists():
                yield _check_file(label, commit, rel, target, remote)
                continue
            partial = repo.path / "blobs" / f"{key}.incomplete"
            if partial.exists():
                have = partial.stat().st_size
                total = f" of {remote.size}" if remote.size is not None else ""
                yield FileCheck(label, commit, rel, "partial", f"{have}{total} bytes downloaded; pull again to resume")
            elif target.is_symlink():
                yield FileCheck(label, commit, rel, "missing", "the link points at a blob that is gone")
            else:
                yield FileCheck(label, commit, rel, "missing", "not downloaded")
    blobs = repo.path / "blobs"
    if blobs.is_dir():
        for partial in sorted(blobs.glob("*.incomplete")):
            if partial.name[: -len(".incomplete")] not in accounted:
                yield FileCheck(
                    label, "", partial.name, "partial", f"{partial.stat().st_size} bytes of an unfinished download"
                )


def _check_file(label: str, commit: str, rel: str, target: Path, remote: RemoteFile) -> FileCheck:
    blob_name = Path(os.path.realpath(target)).name
    size = target.stat().st_size
    hasher = Hasher(size, git=True)
    hasher.feed_file(target)
    problem = check_content(remote, size, hasher)
    if problem is None and target.is_symlink() and len(blob_name) == 64 and blob_name != hasher.sha256.hexdigest():
        problem = f"sha256 {hasher.sha256.hexdigest()} differs from its blob name {blob_name}"
    if problem is None and target.is_symlink() and len(blob_name) == 40 and blob_name != hasher.sha1.hexdigest():
        problem = f"git blob id {hasher.sha1.hexdigest()} differs from its blob name {blob_name}"
    if problem:
        return FileCheck(label, commit, rel, "corrupt", problem)
    return FileCheck(label, commit, rel, "ok", f"{size} bytes")


def remove_repo(repo: CachedRepo) -> int:
    """Delete a repository from the cache; return the bytes freed."""
    freed = repo.size + repo.partial_bytes
    shutil.rmtree(repo.path, ignore_errors=False)
    return freed


def remove_partials(repo: CachedRepo) -> int:
    freed = 0
    for partial in (repo.path / "blobs").glob("*.incomplete"):
        freed += partial.stat().st_size
        partial.unlink(missing_ok=True)
    return freed


def age_days(repo: CachedRepo) -> float:
    return (time.time() - repo.last_used) / 86400
