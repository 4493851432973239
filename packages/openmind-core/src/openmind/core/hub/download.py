"""The downloader shared by every hub: parallel, resumable, verified, atomic, path-safe.

For each file: bytes go to a ``.incomplete`` file (in the cache's ``blobs/`` or in
``<local-dir>/.openmind/download/``), resumed with HTTP ``Range`` after an interruption, hashed
while written (sha256, and the git blob sha1 when that is what the hub publishes), checked against
the hub's size and checksum, and only then renamed to its final place. A mismatch deletes the
partial file and fetches again; transient errors (dropped connection, timeout, 429/5xx) are
retried with exponential backoff, keeping the bytes already received.
"""

from __future__ import annotations

import abc
import contextlib
import hashlib
import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path

from openmind.core.errors import OpenMindError
from openmind.core.hub.base import Hub, RemoteFile, Snapshot, TransientError
from openmind.core.hub.cache import (
    BackgroundHasher,
    Hasher,
    RepoCache,
    atomic_write,
    check_content,
    link_or_copy,
    partial_key,
)
from openmind.core.hub.errors import H_CLIENT, H_INTEGRITY, H_NETWORK, H_UNSAFE_PATH
from openmind.core.hub.ids import contained
from openmind.core.logs import logger

WRITE_CHUNK = 1 << 20
LOCAL_STATE = ".openmind"


def _env_number(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


class Settings:
    """Download knobs: ``workers`` (OPENMIND_HUB_WORKERS, 8), ``retries`` (OPENMIND_HUB_RETRIES, 5),
    ``backoff`` base seconds (OPENMIND_HUB_BACKOFF, 0.5; doubles per retry up to 10 s)."""

    def __init__(self, workers: int | None = None, retries: int | None = None, backoff: float | None = None) -> None:
        self.workers = max(1, int(workers or _env_number("OPENMIND_HUB_WORKERS", 8)))
        self.retries = max(0, int(retries if retries is not None else _env_number("OPENMIND_HUB_RETRIES", 5)))
        self.backoff = max(0.0, backoff if backoff is not None else _env_number("OPENMIND_HUB_BACKOFF", 0.5))

    def sleep(self, attempt: int) -> None:
        delay = min(10.0, self.backoff * (2**attempt))
        time.sleep(delay * (0.75 + random.random() / 2))


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock across processes (two pulls of one file do not write the same partial)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # Windows: rely on the atomic rename only
        yield
        return
    with open(path, "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


class Target(abc.ABC):
    """Where files land: the shared cache (:class:`CacheTarget`) or a plain folder (:class:`DirTarget`)."""

    @abc.abstractmethod
    def final_path(self, file: RemoteFile) -> Path:
        """Where the complete file is visible."""

    @abc.abstractmethod
    def partial_path(self, file: RemoteFile) -> Path:
        """Where the incomplete download is kept (resumable)."""

    @abc.abstractmethod
    def is_done(self, file: RemoteFile) -> bool:
        """Whether the complete, verified file is already in place."""

    def try_reuse(self, file: RemoteFile) -> bool:
        """Place ``file`` without downloading when identical content is already here."""
        return False

    @abc.abstractmethod
    def place(self, file: RemoteFile, partial: Path, sha256: str) -> None:
        """Atomically move the verified ``partial`` file to its final place."""


class CacheTarget(Target):
    def __init__(self, cache: RepoCache, commit: str) -> None:
        self.cache = cache
        self.commit = commit
        self.snapshot = cache.snapshot_dir(commit)

    def final_path(self, file: RemoteFile) -> Path:
        self.snapshot.mkdir(parents=True, exist_ok=True)
        return contained(self.snapshot, file.path)

    def partial_path(self, file: RemoteFile) -> Path:
        return self.cache.blobs / f"{partial_key(file, self.commit)}.incomplete"

    def is_done(self, file: RemoteFile) -> bool:
        final = self.final_path(file)
        return final.exists() and (file.size is None or final.stat().st_size == file.size)

    def try_reuse(self, file: RemoteFile) -> bool:
        if file.blob_name is None:
            return False
        blob = self.cache.blobs / file.blob_name
        if blob.is_file() and (file.size is None or blob.stat().st_size == file.size):
            link_or_copy(blob, self.final_path(file))
            return True
        return False

    def place(self, file: RemoteFile, partial: Path, sha256: str) -> None:
        blob = self.cache.blobs / (file.blob_name or sha256)
        if blob.exists():
            partial.unlink()
        else:
            os.replace(partial, blob)
        link_or_copy(blob, self.final_path(file))


class DirTarget(Target):
    """``--local-dir``: real files in a folder; partial files and state under ``<dir>/.openmind/``."""

    def __init__(self, folder: Path, commit: str) -> None:
        self.folder = folder
        self.commit = commit
        self.state = folder / LOCAL_STATE / "download"

    def _key(self, file: RemoteFile) -> str:
        return hashlib.sha1(file.path.encode()).hexdigest()

    def final_path(self, file: RemoteFile) -> Path:
        if file.path.split("/")[0] == LOCAL_STATE:
            raise H_UNSAFE_PATH.error(f"refusing {file.path!r}: {LOCAL_STATE}/ holds openmind's download state")
        return contained(self.folder, file.path)

    def partial_path(self, file: RemoteFile) -> Path:
        return self.state / f"{self._key(file)}.incomplete"

    def _record(self, file: RemoteFile) -> Path:
        return self.state / f"{self._key(file)}.json"

    def is_done(self, file: RemoteFile) -> bool:
        final = self.final_path(file)
        try:
            record = json.loads(self._record(file).read_text(encoding="utf-8"))
            st = final.stat()
        except (OSError, ValueError):
            return False
        same_content = record.get("blob") == (file.blob_name or record.get("sha256")) and (
            file.blob_name is not None or record.get("commit") == self.commit
        )
        return same_content and st.st_size == record.get("size") and st.st_mtime_ns == record.get("mtime_ns")

    def place(self, file: RemoteFile, partial: Path, sha256: str) -> None:
        final = self.final_path(file)
        final.parent.mkdir(parents=True, exist_ok=True)
        if final.is_symlink():
            final.unlink()
        os.replace(partial, final)
        st = final.stat()
        record = {
            "path": file.path,
            "blob": file.blob_name or sha256,
            "sha256": sha256,
            "size": st.st_size,
            "mtime_ns": st.st_mtime_ns,
            "commit": self.commit,
        }
        atomic_write(self._record(file), json.dumps(record))


class Progress:
    """A byte progress bar over all files (tqdm; hidden when stderr is not a terminal)."""

    def __init__(self, total: int, initial: int, files: int, label: str, enabled: bool | None) -> None:
        from tqdm.auto import tqdm

        self._lock = threading.Lock()
        self.bar = tqdm(
            total=total or None,
            initial=initial,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=f"{label} ({files} file{'s' if files != 1 else ''})",
            disable=(None if enabled is None else not enabled),
            mininterval=0.2,
        )

    def update(self, n: int) -> None:
        with self._lock:
            self.bar.update(n)

    def close(self) -> None:
        self.bar.close()


def fetch_file(
    hub: Hub,
    snapshot: Snapshot,
    file: RemoteFile,
    target: Target,
    settings: Settings,
    on_bytes: Callable[[int], None] = lambda n: None,
    stop: threading.Event | None = None,
) -> None:
    """Download one file into ``target``: resume, verify, retry, place atomically."""
    target.final_path(file)  # path safety is checked before any byte is written
    if target.is_done(file) or target.try_reuse(file):
        return
    partial = target.partial_path(file)
    with file_lock(partial.with_name(partial.name + ".lock")):
        if target.is_done(file):
            return
        corrupt_refetches = 0
        attempt = 0
        while True:
            if stop is not None and stop.is_set():
                raise H_NETWORK.error(f"{file.path}: stopped because another file failed")
            try:
                sha256 = _transfer(hub, snapshot, file, partial, on_bytes)
            except _Corrupt as exc:
                partial.unlink(missing_ok=True)
                on_bytes(-exc.size)
                if corrupt_refetches >= 1:
                    raise H_INTEGRITY.error(
                        f"{snapshot.repo_id}/{file.path} at {snapshot.commit[:12]}: {exc}; fetched twice, "
                        "nothing was placed",
                        location=f"{hub.name}:{snapshot.repo_id}/{file.path}",
                    ) from None
                corrupt_refetches += 1
                logger.warning("%s: %s; fetching it again", file.path, exc)
                continue
            except OpenMindError:
                raise
            except Exception as exc:
                coded = hub.translate(exc, snapshot.repo_id, snapshot.revision)
                if coded is not None:
                    raise coded from exc
                if not hub.is_transient(exc):
                    raise H_CLIENT.error(
                        f"{hub.name}: downloading {snapshot.repo_id}/{file.path} failed: {type(exc).__name__}: {exc}"
                    ) from exc
                if attempt >= settings.retries:
                    have = partial.stat().st_size if partial.exists() else 0
                    raise H_NETWORK.error(
                        f"{hub.name}: downloading {snapshot.repo_id}/{file.path} failed after {attempt + 1} "
                        f"attempts ({type(exc).__name__}: {exc}); {have} bytes kept for resuming",
                        location=str(partial),
                    ) from exc
                logger.info("%s: %s (%s); retrying", file.path, type(exc).__name__, exc)
                settings.sleep(attempt)
                attempt += 1
                continue
            target.place(file, partial, sha256)
            return


class _Corrupt(Exception):
    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size


def _transfer(hub: Hub, snapshot: Snapshot, file: RemoteFile, partial: Path, on_bytes: Callable[[int], None]) -> str:
    """One attempt: continue ``partial`` from where it stops; return the sha256 when complete and
    matching; raise :class:`_Corrupt` on a mismatch, the transport's error on a break."""
    partial.parent.mkdir(parents=True, exist_ok=True)
    have = partial.stat().st_size if partial.exists() else 0
    if file.size is not None and have > file.size:
        partial.unlink()
        on_bytes(-have)
        have = 0
    hasher = Hasher(file.size, git=file.expected_sha256 is None and file.git_sha1 is not None)
    if file.size is None or have < file.size:
        stream = hub.open(snapshot, file, start=have)
        with stream:
            start = stream.start
            if start != have:
                if start > have:
                    raise TransientError(f"server resumed at byte {start}, asked for {have}")
                on_bytes(start - have)
                with open(partial, "r+b") as fh:
                    fh.truncate(start)
                have = start
            if have:
                hasher.feed_file(partial, limit=have)
            background = BackgroundHasher(hasher)
            try:
                with open(partial, "ab", buffering=0) as fh:
                    for chunk in stream:
                        if not chunk:
                            continue
                        fh.write(chunk)
                        background.update(chunk)
                        have += len(chunk)
                        on_bytes(len(chunk))
                        if file.size is not None and have > file.size:
                            raise _Corrupt(f"the hub sent more than the {file.size} bytes it announced", have)
            finally:
                background.finish()
    else:
        hasher.feed_file(partial)
    if file.size is not None and have < file.size:
        raise TransientError(f"connection ended after {have} of {file.size} bytes")
    problem = check_content(file, have, hasher)
    if problem:
        raise _Corrupt(problem, have)
    return hasher.sha256.hexdigest()


def fetch_all(
    hub: Hub,
    snapshot: Snapshot,
    files: list[RemoteFile],
    target: Target,
    settings: Settings,
    *,
    label: str,
    progress: bool | None = None,
) -> None:
    """Download ``files`` in parallel with one progress bar; the first hard failure stops the rest."""
    todo = [f for f in files if not target.is_done(f)]
    if not todo:
        return
    initial = 0
    for f in todo:
        partial = target.partial_path(f)
        if partial.exists():
            initial += partial.stat().st_size
    total = sum(f.size or 0 for f in todo)
    bar = Progress(total, min(initial, total), len(todo), label, progress)
    stop = threading.Event()
    try:
        if len(todo) == 1 or settings.workers == 1:
            for f in todo:
                fetch_file(hub, snapshot, f, target, settings, bar.update, stop)
            return
        # big files first, so that the longest transfer starts early
        todo.sort(key=lambda f: -(f.size or 0))
        with ThreadPoolExecutor(max_workers=min(settings.workers, len(todo)), thread_name_prefix="om-pull") as pool:
            futures = [pool.submit(fetch_file, hub, snapshot, f, target, settings, bar.update, stop) for f in todo]
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            failed = [fut for fut in done if fut.exception() is not None]
            if failed:
                stop.set()
                for fut in futures:
                    fut.cancel()
                wait(futures)
                raise failed[0].exception()
    finally:
        bar.close()
