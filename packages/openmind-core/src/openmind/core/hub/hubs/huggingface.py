"""The ``huggingface`` hub, through ``huggingface_hub``.

Metadata, auth, uploads and repositories go through :class:`huggingface_hub.HfApi`; bytes come
from the client's own HTTP session (``get_session()``, with its headers, proxies and offline
switch) on the ``resolve`` URL with ``Range``. The endpoint is ``--endpoint``, else ``HF_ENDPOINT``
(read by the client), else huggingface.co; the token ``--token``, else the client's (``HF_TOKEN``,
saved login).
"""

from __future__ import annotations

import os
import re
from urllib.parse import quote

from openmind.core.errors import OpenMindError
from openmind.core.hub.base import Hub, RemoteFile, Snapshot, Stream, TransientError, iter_requests_body
from openmind.core.hub.errors import (
    H_FILE_NOT_FOUND,
    H_GATED,
    H_NETWORK,
    H_REPO_NOT_FOUND,
    H_REVISION_NOT_FOUND,
    H_UNAUTHORISED,
)
from openmind.core.version import __version__

_RANGE_RE = re.compile(r"bytes (\d+)-")


class HuggingFaceHub(Hub):
    name = "huggingface"
    default_revision = "main"

    def __init__(self, endpoint: str | None = None, token: str | None = None) -> None:
        from huggingface_hub import HfApi, constants

        endpoint = endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT
        super().__init__(endpoint.rstrip("/"), token)
        self.api = HfApi(endpoint=self.endpoint, token=token, library_name="openmind", library_version=__version__)

    # ---- download -------------------------------------------------------------------------
    def list_files(self, repo_id: str, revision: str) -> Snapshot:
        info = self.api.model_info(repo_id, revision=revision, files_metadata=True)
        files = []
        for sibling in info.siblings or []:
            lfs = getattr(sibling, "lfs", None)
            sha256 = (lfs.get("sha256") if isinstance(lfs, dict) else getattr(lfs, "sha256", None)) if lfs else None
            files.append(RemoteFile(sibling.rfilename, sibling.size, sha256=sha256, etag=sibling.blob_id))
        return Snapshot(repo_id, revision, info.sha or revision, tuple(files))

    def open(self, snapshot: Snapshot, file: RemoteFile, start: int = 0) -> Stream:
        from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

        url = f"{self.endpoint}/{snapshot.repo_id}/resolve/{quote(snapshot.commit, safe='')}/{quote(file.path)}"
        headers = build_hf_headers(token=self.token, library_name="openmind", library_version=__version__)
        headers["Accept-Encoding"] = "identity"
        if start:
            headers["Range"] = f"bytes={start}-"
        session = get_session()
        if hasattr(session, "send") and hasattr(session, "build_request"):  # httpx (huggingface_hub >= 1.0)
            response = session.send(
                session.build_request("GET", url, headers=headers), stream=True, follow_redirects=True
            )
            status = response.status_code
            if status >= 400:
                response.read()
                response.close()
                if status == 429 or status >= 500:
                    raise TransientError(f"HTTP {status} from {url}")
                hf_raise_for_status(response)
            chunks = response.iter_bytes()
        else:  # requests (huggingface_hub < 1.0)
            response = session.get(url, headers=headers, stream=True, allow_redirects=True)
            status = response.status_code
            if status == 429 or status >= 500:
                response.close()
                raise TransientError(f"HTTP {status} from {url}")
            hf_raise_for_status(response)
            chunks = iter_requests_body(response)
        begin = 0
        if status == 206:
            match = _RANGE_RE.match(response.headers.get("Content-Range", ""))
            begin = int(match.group(1)) if match else start
        return Stream(begin, chunks, response.close)

    # ---- upload / repositories ---------------------------------------------------------------
    def upload_folder(self, folder, repo_id, *, revision=None, message="", include=None, exclude=None) -> str:
        info = self.api.upload_folder(
            folder_path=folder,
            repo_id=repo_id,
            revision=revision,
            commit_message=message or "Upload with openmind",
            allow_patterns=include,
            ignore_patterns=exclude,
        )
        return getattr(info, "oid", None) or str(info)

    def create_repo(self, repo_id: str, *, private: bool = False, exist_ok: bool = True) -> None:
        self.api.create_repo(repo_id, private=private, exist_ok=exist_ok)

    def delete_repo(self, repo_id: str, *, missing_ok: bool = False) -> None:
        self.api.delete_repo(repo_id, missing_ok=missing_ok)

    # ---- errors -------------------------------------------------------------------------------
    def translate(self, exc: BaseException, repo_id: str, revision: str | None = None) -> OpenMindError | None:
        from huggingface_hub import errors as hf

        where = f"huggingface:{repo_id}" + (f"@{revision}" if revision else "")
        if isinstance(exc, hf.OfflineModeIsEnabled):
            return H_NETWORK.error(
                f"{where}: HF_HUB_OFFLINE=1 is set, so huggingface_hub refuses to reach {self.endpoint}",
                hint="Unset HF_HUB_OFFLINE to download, or use OPENMIND_OFFLINE=1 to resolve from the cache.",
            )
        if isinstance(exc, hf.GatedRepoError):
            return H_GATED.error(f"{where} is gated: {_first_line(exc)}")
        if isinstance(exc, hf.RevisionNotFoundError):
            return H_REVISION_NOT_FOUND.error(f"{where}: revision {revision!r} does not exist")
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if (
            isinstance(exc, hf.HfHubHTTPError)
            and status in (401, 403)
            and not isinstance(exc, hf.RepositoryNotFoundError)
        ):
            return H_UNAUTHORISED.error(f"{where}: HTTP {status}: {_first_line(exc)}")
        if isinstance(exc, hf.RepositoryNotFoundError):
            if status == 401 and "Invalid credentials" in str(exc):
                return H_UNAUTHORISED.error(f"{where}: the token was refused")
            return H_REPO_NOT_FOUND.error(f"{where} was not found on {self.endpoint}")
        if isinstance(exc, hf.EntryNotFoundError):
            return H_FILE_NOT_FOUND.error(f"{where}: {_first_line(exc)}")
        if isinstance(exc, hf.HfHubHTTPError) and status is not None and 400 <= status < 500 and status != 429:
            return H_UNAUTHORISED.error(f"{where}: HTTP {status}: {_first_line(exc)}") if status in (401, 403) else None
        return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return " ".join(line.strip() for line in text.splitlines() if line.strip())[:300]
