"""The ``modelers`` hub (modelers.cn, openMind's hub), through the ``openmind-hub`` client.

Metadata (file tree with sizes, git blob ids and LFS sha256, last commit), uploads and
repositories go through :class:`openmind_hub.OmApi`. Bytes come from the client's ``media`` URL
(``om_hub_url``'s layout) over a pooled ``requests`` session using the client's TLS adapter
(its cipher list), following redirects only to hosts on the client's CDN allow-list.

Endpoint: ``--endpoint``, else ``OPENMIND_HUB_ENDPOINT`` (the client's own variable), else the
client's default; it must be ``https://`` (the client refuses anything else). The client reads
its endpoint once, at import, into several modules; openmind points them at the chosen endpoint
(the client's ``endpoint=`` arguments accept only its public host names, so a mirror or a test
server is set this way). Token: ``--token``, else ``OPENMIND_HUB_TOKEN``.
"""

from __future__ import annotations

import os
import threading
from urllib.parse import quote, urljoin, urlparse

from openmind.core.errors import OpenMindError
from openmind.core.hub.base import Hub, RemoteFile, Snapshot, Stream, TransientError, iter_requests_body
from openmind.core.hub.errors import (
    H_BAD_ENDPOINT,
    H_BAD_FOLDER,
    H_BAD_ID,
    H_FILE_NOT_FOUND,
    H_GATED,
    H_REPO_NOT_FOUND,
    H_REVISION_NOT_FOUND,
    H_UNAUTHORISED,
)

TIMEOUT = 60
_ENDPOINT_MODULES = (
    "constants",
    "om_api",
    "file_download",
    "_commit_api",
    "lfs",
    "repository",
    "om_file_system",
    "_snapshot_download",
)
_local = threading.local()


def _point_client_at(endpoint: str) -> None:
    import importlib

    for name in _ENDPOINT_MODULES:
        try:
            module = importlib.import_module(f"openmind_hub.plugins.openmind.{name}")
        except ImportError:
            continue
        if getattr(module, "ENDPOINT", endpoint) != endpoint:
            module.ENDPOINT = endpoint


def _session():
    session = getattr(_local, "session", None)
    if session is None:
        import requests

        session = requests.Session()
        try:
            from openmind_hub.plugins.openmind.utils._http import CustomCipherAdapter

            session.mount("https://", CustomCipherAdapter())
        except ImportError:  # an openmind-hub without it: requests' defaults
            pass
        _local.session = session
    return session


class ModelersHub(Hub):
    name = "modelers"
    default_revision = "main"

    def __init__(self, endpoint: str | None = None, token: str | None = None) -> None:
        endpoint = endpoint or os.environ.get("OPENMIND_HUB_ENDPOINT")
        if endpoint and urlparse(endpoint).scheme != "https":
            raise H_BAD_ENDPOINT.error(f"Modelers endpoint {endpoint!r} is not https:// (the client refuses it)")
        from openmind_hub import OmApi
        from openmind_hub.plugins.openmind import constants

        endpoint = (endpoint or constants.ENDPOINT).rstrip("/")
        _point_client_at(endpoint)
        super().__init__(endpoint, token or os.environ.get("OPENMIND_HUB_TOKEN") or None)
        self.api = OmApi(token=self.token, library_name="openmind")
        self.api.endpoint = endpoint

    # ---- download -------------------------------------------------------------------------
    def list_files(self, repo_id: str, revision: str) -> Snapshot:
        from openmind_hub import RepoFile

        commit = self.api.get_repo_last_commit(repo_id, revision=revision).oid
        files = []
        for entry in self.api.list_repo_tree(repo_id, revision=revision, recursive=True):
            if isinstance(entry, RepoFile):
                sha256 = entry.lfs.sha256 if entry.lfs else None
                files.append(RemoteFile(entry.path, entry.size, sha256=sha256, etag=entry.blob_id or None))
        return Snapshot(repo_id, revision, commit or revision, tuple(files))

    def open(self, snapshot: Snapshot, file: RemoteFile, start: int = 0) -> Stream:
        from openmind_hub import build_om_headers

        # like the client's own downloads, by the revision asked for (checksums catch a moved branch)
        rev = quote(snapshot.revision, safe="")
        url = f"{self.endpoint}/api/v1/file/{snapshot.repo_id}/{rev}/media/{quote(file.path)}"
        headers = build_om_headers(token=self.token, library_name="openmind")
        headers["Accept-Encoding"] = "identity"
        if start:
            headers["Range"] = f"bytes={start}-"
        session = _session()
        for _ in range(5):
            response = session.get(url, headers=headers, stream=True, allow_redirects=False, timeout=TIMEOUT)
            if not response.is_redirect:
                break
            location = urljoin(url, response.headers.get("Location", ""))
            response.close()
            from openmind_hub.plugins.openmind.utils._validators import validate_download_url

            validate_download_url(location)  # the client's CDN allow-list
            url = location
            headers.pop("authorization", None)
        status = response.status_code
        if status == 429 or status >= 500:
            response.close()
            raise TransientError(f"HTTP {status} from {url}")
        if status >= 400:
            from openmind_hub import om_raise_for_status

            response.content  # noqa: B018 - read the error body for the client's error mapping
            om_raise_for_status(response)
        begin = start if status == 206 else 0
        return Stream(begin, iter_requests_body(response), response.close)

    # ---- upload / repositories ---------------------------------------------------------------
    def upload_folder(self, folder, repo_id, *, revision=None, message="", include=None, exclude=None) -> str:
        result = self.api.upload_folder(
            repo_id=repo_id,
            folder_path=folder,
            revision=revision,
            commit_message=message or "Upload with openmind",
            allow_patterns=include,
            ignore_patterns=list(exclude or []),
            token=self.token,
        )
        return str(result)

    def create_repo(self, repo_id: str, *, private: bool = False, exist_ok: bool = True) -> None:
        self.api.create_repo(repo_id, private=private, exist_ok=exist_ok, token=self.token)

    def delete_repo(self, repo_id: str, *, missing_ok: bool = False) -> None:
        self.api.delete_repo(repo_id, missing_ok=missing_ok, token=self.token)

    # ---- errors -------------------------------------------------------------------------------
    def translate(self, exc: BaseException, repo_id: str, revision: str | None = None) -> OpenMindError | None:
        import openmind_hub as om

        where = f"modelers:{repo_id}" + (f"@{revision}" if revision else "")
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if isinstance(exc, om.RevisionNotFoundError):
            return H_REVISION_NOT_FOUND.error(f"{where}: revision {revision!r} does not exist")
        if isinstance(exc, om.EntryNotFoundError):
            return H_FILE_NOT_FOUND.error(f"{where}: {_first_line(exc)}")
        if isinstance(exc, om.GatedRepoError):
            return H_GATED.error(f"{where}: access refused (HTTP 401): the repository is private or gated")
        if isinstance(exc, om.RepositoryNotFoundError):
            return H_REPO_NOT_FOUND.error(f"{where} was not found on {self.endpoint}")
        if isinstance(exc, om.OmHubHTTPError) and status == 403:
            return H_UNAUTHORISED.error(f"{where}: HTTP 403: the token may not do this")
        if isinstance(exc, om.OMValidationError):
            return H_BAD_ID.error(f"{where}: the openmind-hub client refused it: {_first_line(exc)}")
        if isinstance(exc, ValueError) and "WHITE_LIST_PATHS" in str(exc):
            return H_BAD_FOLDER.error(
                f"{where}: the openmind-hub client refused a path: {_first_line(exc)}",
                hint="The client uploads only from /tmp, your home folder and the folders listed in "
                "HUB_WHITE_LIST_PATHS (comma-separated; set it before the client is imported).",
            )
        if isinstance(exc, ValueError) and "Token is required" in str(exc):
            return H_UNAUTHORISED.error(f"{where}: writing needs a token (--token or OPENMIND_HUB_TOKEN)")
        return None


def _first_line(exc: BaseException) -> str:
    return " ".join(line.strip() for line in str(exc).splitlines() if line.strip())[:300]
