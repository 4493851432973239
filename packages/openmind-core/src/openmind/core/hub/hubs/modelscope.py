"""The ``modelscope`` hub, through ModelScope's client.

modelscope >= 1.40 delegates its hub API to ``modelscope_hub``; metadata (file list with sizes and
sha256), uploads and repositories go through ``modelscope_hub.api.HubApi`` (older modelscope:
``modelscope.hub.api.HubApi``). Bytes come from the client's download URL
(``/api/v1/models/{id}/repo?Revision=&FilePath=``) with ``Range``.

Endpoint: ``--endpoint``, else ``MODELSCOPE_DOMAIN`` (the client's variable; a bare domain gets
``https://``), else the client's default. Token: ``--token``, else ``MODELSCOPE_API_TOKEN``.
ModelScope lists no commit id with the files, so the snapshot is named by a digest of the listing
(paths, sizes, sha256): it changes exactly when the content does.
"""

from __future__ import annotations

import hashlib
import os
import threading
from urllib.parse import quote_plus

from openmind.core.errors import OpenMindError
from openmind.core.hub.base import (
    Hub,
    RemoteFile,
    Snapshot,
    Stream,
    TransientError,
    iter_requests_body,
    looks_transient,
)
from openmind.core.hub.errors import (
    H_REPO_NOT_FOUND,
    H_REVISION_NOT_FOUND,
    H_UNAUTHORISED,
)

TIMEOUT = 60
_local = threading.local()


def _session():
    session = getattr(_local, "session", None)
    if session is None:
        import requests

        session = _local.session = requests.Session()
    return session


def _endpoint(value: str | None) -> str | None:
    value = (value or os.environ.get("MODELSCOPE_DOMAIN") or "").strip().rstrip("/")
    if not value:
        return None
    return value if value.startswith(("http://", "https://")) else "https://" + value


class ModelScopeHub(Hub):
    name = "modelscope"
    default_revision = "master"

    def __init__(self, endpoint: str | None = None, token: str | None = None) -> None:
        endpoint = _endpoint(endpoint)
        token = token or os.environ.get("MODELSCOPE_API_TOKEN") or None
        try:
            from modelscope_hub.api import HubApi

            self.api = HubApi(endpoint=endpoint, token=token)
            endpoint = endpoint or self.api._config.endpoint
            self._legacy = False
        except ImportError:  # modelscope < 1.40 ships its own client
            from modelscope.hub.api import HubApi

            self.api = HubApi(endpoint=endpoint) if endpoint else HubApi()
            if token:
                self.api.login(token)
            endpoint = endpoint or self.api.endpoint
            self._legacy = True
        super().__init__(endpoint.rstrip("/"), token)

    def list_files(self, repo_id: str, revision: str) -> Snapshot:
        try:
            return self._list(repo_id, revision)
        except Exception as exc:
            # the API answers "not found" for a missing repository and a missing revision alike
            if type(exc).__name__ not in ("NotExistError", "NotFoundError") or revision == self.default_revision:
                raise
            try:
                self._list(repo_id, self.default_revision)
            except Exception:
                raise exc from None
            raise H_REVISION_NOT_FOUND.error(f"modelscope:{repo_id}: revision {revision!r} does not exist") from None

    def _list(self, repo_id: str, revision: str) -> Snapshot:
        if self._legacy:
            raw = self.api.get_model_files(repo_id, revision=revision, recursive=True)
            entries = [(f.get("Path"), f.get("Size"), f.get("Sha256"), f.get("Type", "blob")) for f in raw]
        else:
            raw = self.api.list_repo_files(repo_id, "model", revision=revision, recursive=True)
            entries = [(f.path, f.size, f.sha256, f.type) for f in raw]
        files = tuple(
            RemoteFile(path, size, sha256=sha256 or None)
            for path, size, sha256, kind in entries
            if kind not in ("tree", "dir")
        )
        digest = hashlib.sha1(usedforsecurity=False)
        for f in sorted(files, key=lambda f: f.path):
            digest.update(f"{f.path}\0{f.size}\0{f.sha256}\n".encode())
        return Snapshot(repo_id, revision, digest.hexdigest(), files)

    def open(self, snapshot: Snapshot, file: RemoteFile, start: int = 0) -> Stream:
        url = (
            f"{self.endpoint}/api/v1/models/{snapshot.repo_id}/repo"
            f"?Revision={quote_plus(snapshot.revision)}&FilePath={quote_plus(file.path)}"
        )
        headers = {"Accept-Encoding": "identity"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if start:
            headers["Range"] = f"bytes={start}-"
        response = _session().get(url, headers=headers, stream=True, timeout=TIMEOUT)
        status = response.status_code
        if status == 429 or status >= 500:
            response.close()
            raise TransientError(f"HTTP {status} from {url}")
        if status >= 400:
            response.close()
            where = f"modelscope:{snapshot.repo_id}/{file.path}@{snapshot.revision}"
            if status in (401, 403):
                raise H_UNAUTHORISED.error(f"{where}: HTTP {status}")
            raise H_REPO_NOT_FOUND.error(f"{where}: HTTP {status} from the download URL")
        return Stream(start if status == 206 else 0, iter_requests_body(response), response.close)

    def upload_folder(self, folder, repo_id, *, revision=None, message="", include=None, exclude=None) -> str:
        result = self.api.upload_folder(
            repo_id=repo_id,
            repo_type="model",
            folder_path=folder,
            commit_message=message or "Upload with openmind",
            revision=revision,
            allow_patterns=include,
            ignore_patterns=exclude,
        )
        return str(result)

    def create_repo(self, repo_id: str, *, private: bool = False, exist_ok: bool = True) -> None:
        try:
            self.api.create_repo(repo_id, "model", visibility="private" if private else "public")
        except Exception as exc:
            if not (exist_ok and type(exc).__name__ == "AlreadyExistsError"):
                raise

    def delete_repo(self, repo_id: str, *, missing_ok: bool = False) -> None:
        self.api.delete_repo(repo_id, "model")

    def translate(self, exc: BaseException, repo_id: str, revision: str | None = None) -> OpenMindError | None:
        name = type(exc).__name__
        where = f"modelscope:{repo_id}" + (f"@{revision}" if revision else "")
        text = str(exc)
        if name in ("NotExistError", "NotFoundError"):
            return H_REPO_NOT_FOUND.error(f"{where} was not found on {self.endpoint}")
        if name in ("AuthenticationError", "PermissionDeniedError"):
            return H_UNAUTHORISED.error(f"{where}: {text[:200]}")
        return None

    def is_transient(self, exc: BaseException) -> bool:
        return bool(getattr(exc, "retryable", False)) or looks_transient(exc)
