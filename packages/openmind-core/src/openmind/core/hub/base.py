"""The hub protocol: what a hub implementation provides, and what openmind does for every hub.

A hub (Modelers, Hugging Face, ModelScope, a local mirror, or a third party's) is a class
registered through :func:`~openmind.core.hookspecs.openmind_register_hubs` as a
:class:`~openmind.core.specs.HubSpec` whose ``impl`` names a :class:`Hub` subclass::

    @hookimpl
    def openmind_register_hubs(register):
        register(HubSpec(name="myhub", prefix="my", endpoint_env="MYHUB_ENDPOINT",
                         impl="my_package.hub:MyHub", requires=("myhub-client>=1.0",)))

The class only talks to its hub (metadata, auth, a byte stream with ``Range``, uploads,
repositories), preferably through the hub's own client library. Everything else is shared and
the same for every hub (:mod:`openmind.core.hub.download`, :mod:`openmind.core.hub.cache`):
parallel downloads with a progress bar, resume of partial files, size and checksum checks,
atomic placement, retries with backoff, path safety and the cache layout.

A minimal implementation::

    class MyHub(Hub):
        name = "myhub"
        default_revision = "main"

        def list_files(self, repo_id, revision):
            info = client.info(repo_id, revision)            # one call to the hub
            return Snapshot(repo_id, revision, info.commit,
                            tuple(RemoteFile(f.path, f.size, sha256=f.sha256) for f in info.files))

        def open(self, snapshot, file, start=0):
            response = client.get(url, headers={"Range": f"bytes={start}-"}, stream=True)
            return Stream(start=start if response.status == 206 else 0,
                          chunks=response.iter_content(1 << 20), close=response.close)
"""

from __future__ import annotations

import abc
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from openmind.core.errors import OpenMindError

_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_SHA1_RE = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class RemoteFile:
    """One file of a repository at a commit, as the hub describes it.

    :param path: path inside the repository, ``/``-separated (checked before anything is written).
    :param size: size in bytes, or ``None`` when the hub does not say.
    :param sha256: hex sha256 of the content, when the hub gives it (LFS files do).
    :param etag: the hub's content id: the git blob sha1 (40 hex) or the sha256 (64 hex) on Hugging
        Face and Modelers; anything else is treated as opaque.
    """

    path: str
    size: int | None
    sha256: str | None = None
    etag: str | None = None

    @property
    def git_sha1(self) -> str | None:
        """The git blob id, when the etag is one (verifiable: sha1 of ``blob <size>\\0<content>``)."""
        return self.etag if self.etag and _SHA1_RE.match(self.etag) else None

    @property
    def expected_sha256(self) -> str | None:
        if self.sha256 and _SHA256_RE.match(self.sha256.lower()):
            return self.sha256.lower()
        if self.etag and _SHA256_RE.match(self.etag):
            return self.etag
        return None

    @property
    def blob_name(self) -> str | None:
        """Name of the blob in the cache, known before download (the Hugging Face convention:
        sha256 for LFS files, git blob sha1 otherwise); ``None``: named by the sha256 computed
        while downloading."""
        return self.expected_sha256 or self.git_sha1


@dataclass(frozen=True)
class Snapshot:
    """A repository at one immutable commit: what :meth:`Hub.list_files` returns.

    :param revision: what the user asked for (branch, tag or commit).
    :param commit: the immutable id it resolves to (names the snapshot folder in the cache).
    """

    repo_id: str
    revision: str
    commit: str
    files: tuple[RemoteFile, ...] = field(default=())


class Stream:
    """An open download of one file.

    :param start: byte offset at which ``chunks`` begins: the requested start when the server
        honoured ``Range``, ``0`` when it sent the whole file.
    :param chunks: iterator of byte chunks; a broken connection may raise anything, the
        downloader treats it as transient (:meth:`Hub.is_transient`).
    :param close: releases the connection.
    """

    def __init__(self, start: int, chunks: Iterable[bytes], close: Callable[[], None] | None = None) -> None:
        self.start = start
        self._chunks = chunks
        self._close = close

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._chunks)

    def close(self) -> None:
        if self._close is not None:
            self._close()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_requests_body(response, size: int = 1 << 20) -> Iterator[bytes]:
    """Body chunks of a streamed ``requests`` response as they arrive (``read1``), so that the
    bytes received before a connection breaks are not lost in a half-filled read buffer."""
    raw = response.raw
    read = getattr(raw, "read1", None)
    if read is None:  # urllib3 < 2
        yield from response.iter_content(1 << 16)
        return
    while True:
        data = read(size)
        if not data:
            return
        yield data


class TransientError(Exception):
    """A failure worth retrying (connection dropped, timeout, HTTP 429/5xx)."""


_TRANSPORT_MODULES = ("httpx", "httpx2", "httpcore", "h11", "requests", "urllib3", "http.client", "ssl")


def looks_transient(exc: BaseException) -> bool:
    """Connection-level failures of the usual HTTP stacks (and of the OS) are transient."""
    if isinstance(exc, TransientError):
        return True
    if isinstance(exc, OpenMindError):
        return False
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    for cls in type(exc).__mro__:
        module = cls.__module__ or ""
        if any(module == m or module.startswith(m + ".") for m in _TRANSPORT_MODULES):
            status = getattr(getattr(exc, "response", None), "status_code", None)
            return status is None or status == 429 or status >= 500
    return False


class Hub(abc.ABC):
    """What a hub implementation provides. Instances are built by :func:`openmind.core.hub.get_hub`.

    :param endpoint: the hub's base URL (``--endpoint``); ``None``: the client's own default,
        which honours the client's environment variable (``HF_ENDPOINT``, ``OPENMIND_HUB_ENDPOINT``,
        ``MODELSCOPE_DOMAIN``).
    :param token: an access token; ``None``: the client's own resolution (saved login, env variable).
    """

    #: registered name of the hub (``huggingface``, ``modelers`` ...).
    name: ClassVar[str] = ""
    #: revision used when the user names none.
    default_revision: ClassVar[str] = "main"

    def __init__(self, endpoint: str | None = None, token: str | None = None) -> None:
        self.endpoint = endpoint
        self.token = token

    @abc.abstractmethod
    def list_files(self, repo_id: str, revision: str) -> Snapshot:
        """Resolve ``revision`` to a commit and list every file with its size and checksum."""

    @abc.abstractmethod
    def open(self, snapshot: Snapshot, file: RemoteFile, start: int = 0) -> Stream:
        """Open a byte stream of ``file`` at ``snapshot.commit`` from byte ``start`` (HTTP ``Range``)."""

    def upload_folder(
        self,
        folder: str,
        repo_id: str,
        *,
        revision: str | None = None,
        message: str = "",
        include: list[str] | None = None,
        exclude: list[str] | None = None,
    ) -> str:
        """Upload the files of ``folder`` as one commit; return the commit id or its URL."""
        from openmind.core.hub.errors import H_UNSUPPORTED

        raise H_UNSUPPORTED.error(f"hub {self.name!r} does not support uploads")

    def create_repo(self, repo_id: str, *, private: bool = False, exist_ok: bool = True) -> None:
        """Create a (model) repository; no error if it exists and ``exist_ok``."""
        from openmind.core.hub.errors import H_UNSUPPORTED

        raise H_UNSUPPORTED.error(f"hub {self.name!r} does not support creating repositories")

    def delete_repo(self, repo_id: str, *, missing_ok: bool = False) -> None:
        """Delete a repository on the hub. Irreversible."""
        from openmind.core.hub.errors import H_UNSUPPORTED

        raise H_UNSUPPORTED.error(f"hub {self.name!r} does not support deleting repositories")

    def translate(self, exc: BaseException, repo_id: str, revision: str | None = None) -> OpenMindError | None:
        """Map an exception of the hub's client to a coded error (``None``: not recognised).

        Implementations map their client's not-found / gated / unauthorised / revision errors to
        :mod:`openmind.core.hub.errors`; the default recognises nothing.
        """
        return None

    def is_transient(self, exc: BaseException) -> bool:
        """Whether ``exc`` is worth a retry; the default knows the usual HTTP stacks."""
        return looks_transient(exc)
