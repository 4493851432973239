"""A loopback test hub: the HTTP API subset that the real hub clients call.

Test infrastructure only (the clients under test are the real ``huggingface_hub``,
``openmind-hub`` and ``modelscope`` packages). One server speaks three dialects:

* Hugging Face (``huggingface_hub``): ``GET /api/models/{id}[/revision/{rev}]`` (siblings with
  size, blobId, lfs.sha256), ``HEAD|GET /{id}/resolve/{rev}/{path}`` (ETag, X-Repo-Commit,
  Range), ``POST /api/repos/create``, ``DELETE /api/repos/delete``,
  ``POST /api/models/{id}/preupload/{rev}``, ``POST /api/models/{id}/commit/{rev}`` (NDJSON).
  Errors carry ``X-Error-Code`` (RepoNotFound, RevisionNotFound, GatedRepo, EntryNotFound).
* Modelers (``openmind-hub``, https only): ``GET /api/v1/file/{id}?ref=&path=`` (tree + last
  commit), ``GET /api/v1/file/{id}/{rev}/media/{path}`` (Range), ``GET|POST|DELETE
  /api/v1/model...``, ``POST /api/v1/file/{id}/pre_upload``, ``POST /api/v1/file/{id}/upload``,
  ``POST /api/v1/file/license_check``.
* ModelScope (``modelscope``): ``GET /api/v1/models/{id}/repo/files?Revision=&Recursive=``,
  ``GET /api/v1/models/{id}/repo?Revision=&FilePath=`` (Range), ``GET /api/v1/models/{id}/revisions``.

Faults are injected per file: ``drop`` (send part of the body, then cut the connection),
``corrupt`` (flip one byte), ``status`` (answer an HTTP error). Every request is logged with its
``Range`` header so tests can check that a download resumed where it stopped.

Run it on its own (the benchmark does, so that client and server do not share a GIL)::

    python server.py FOLDER     # serves FOLDER/<org>/<name>/... as repositories; prints the port
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import ssl
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

CHUNK = 1 << 20
LFS_THRESHOLD = 10 * 1024  # files above this size are LFS files (sha256 published)


def git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Blob:
    data: bytes | None = None
    path: Path | None = None
    size: int = 0
    sha256: str = ""
    sha1: str = ""

    @classmethod
    def of(cls, content: bytes | Path) -> Blob:
        if isinstance(content, Path):
            h256, h1 = hashlib.sha256(), None
            size = content.stat().st_size
            h1 = hashlib.sha1(b"blob %d\0" % size)
            with open(content, "rb") as fh:
                while chunk := fh.read(CHUNK):
                    h256.update(chunk)
                    h1.update(chunk)
            return cls(path=content, size=size, sha256=h256.hexdigest(), sha1=h1.hexdigest())
        return cls(data=content, size=len(content), sha256=hashlib.sha256(content).hexdigest(), sha1=git_sha1(content))

    @property
    def lfs(self) -> bool:
        return self.size > LFS_THRESHOLD

    @property
    def etag(self) -> str:
        return self.sha256 if self.lfs else self.sha1

    def read(self, start: int, end: int) -> bytes:
        if self.data is not None:
            return self.data[start:end]
        with open(self.path, "rb") as fh:
            fh.seek(start)
            return fh.read(end - start)


@dataclass
class Repo:
    files: dict[str, Blob] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    private: bool = False
    gated: bool = False
    id: str = ""

    def commit(self, branch: str = "main") -> str:
        digest = hashlib.sha1(branch.encode())
        for path in sorted(self.files):
            digest.update(f"{path}\0{self.files[path].sha1}\n".encode())
        commit = digest.hexdigest()
        self.branches[branch] = commit
        return commit

    def resolve(self, revision: str) -> str | None:
        if revision in self.branches:
            return self.branches[revision]
        if revision in self.branches.values():
            return revision
        return None


@dataclass
class Fault:
    kind: str  # drop | corrupt | status
    path: str
    times: int = 1
    after: int = 0  # drop: bytes sent before cutting; corrupt: offset of the flipped byte
    status: int = 503


class HubState:
    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.faults: list[Fault] = []
        self.log: list[tuple[str, str, str | None]] = []
        self.token = "secret-token"
        self.lock = threading.Lock()
        self.next_id = 1

    def add_repo(
        self, repo_id: str, files: dict[str, bytes | Path], *, private=False, gated=False, branch="main"
    ) -> Repo:
        repo = self.repos.get(repo_id) or Repo(private=private, gated=gated, id=str(self.next_id))
        self.next_id += 1
        repo.files.update({path: Blob.of(content) for path, content in files.items()})
        repo.commit(branch)
        self.repos[repo_id] = repo
        return repo

    def fault(self, kind: str, path: str, times: int = 1, after: int = 0, status: int = 503) -> None:
        with self.lock:
            self.faults.append(Fault(kind, path, times, after, status))

    def take_fault(self, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.path == path and fault.times != 0:
                    fault.times -= 1
                    return fault
        return None

    def ranges(self, path_suffix: str) -> list[str | None]:
        """Range headers of the content requests for a file (``None``: the whole file)."""
        return [
            rng
            for method, target, rng in self.log
            if method == "GET" and (target.endswith("/" + path_suffix) or f"FilePath={path_suffix}" in target)
        ]


_HF_INFO = re.compile(r"^/api/models/(?P<repo>[^/]+(?:/[^/]+)?)(?:/revision/(?P<rev>[^/]+))?$")
_HF_TREE = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?$")
_HF_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+|[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")
_HF_PREUPLOAD = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/preupload/(?P<rev>[^/]+)$")
_HF_COMMIT = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/commit/(?P<rev>[^/]+)$")
_OM_TREE = re.compile(r"^/api/v1/file/(?P<repo>[^/]+/[^/]+)$")
_OM_MEDIA = re.compile(r"^/api/v1/file/(?P<repo>[^/]+/[^/]+)/(?P<rev>[^/]+)/media/(?P<path>.+)$")
_OM_MODEL = re.compile(r"^/api/v1/model/(?P<repo>[^/]+/[^/]+)$")
_OM_MODEL_ID = re.compile(r"^/api/v1/model/(?P<id>\d+)$")
_OM_PREUPLOAD = re.compile(r"^/api/v1/file/(?P<repo>[^/]+/[^/]+)/pre_upload$")
_OM_UPLOAD = re.compile(r"^/api/v1/file/(?P<repo>[^/]+/[^/]+)/upload$")
_MS_FILES = re.compile(r"^/api/v1/models/(?P<repo>[^/]+/[^/]+)/repo/files$")
_MS_FILE = re.compile(r"^/api/v1/models/(?P<repo>[^/]+/[^/]+)/repo$")
_MS_REVISIONS = re.compile(r"^/api/v1/models/(?P<repo>[^/]+/[^/]+)/revisions$")
_MS_MODEL = re.compile(r"^/api/v1/models/(?P<repo>[^/]+/[^/]+)$")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: HubServer

    def log_message(self, format, *args):  # quiet
        pass

    @property
    def state(self) -> HubState:
        return self.server.state

    # ---- plumbing ------------------------------------------------------------------------------
    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, ctype="application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data, headers: dict | None = None) -> None:
        self._send(status, json.dumps(data).encode(), headers)

    def _authorised(self) -> bool:
        return self.headers.get("Authorization", self.headers.get("authorization", "")) == f"Bearer {self.state.token}"

    def _dispatch(self) -> None:
        url = urlparse(self.path)
        self.query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        self.state.log.append((self.command, unquote(self.path), self.headers.get("Range")))
        for dialect in (self._modelscope, self._modelers, self._huggingface):
            if dialect(url.path):
                return
        self._json(404, {"error": f"no route {self.command} {url.path}"})

    do_GET = do_HEAD = do_POST = do_DELETE = do_PUT = lambda self: self._dispatch()  # noqa: E731

    # ---- content with Range and faults ------------------------------------------------------------
    def _content(self, blob: Blob, path: str, headers: dict) -> None:
        size = blob.size
        start, end, status = 0, size, 200
        rng = self.headers.get("Range")
        if rng:
            match = re.match(r"bytes=(\d+)-(\d*)", rng)
            if match:
                start = int(match.group(1))
                end = int(match.group(2)) + 1 if match.group(2) else size
                if start >= size and size:
                    self._send(416, b"", {"Content-Range": f"bytes */{size}"})
                    return
                status = 206
        fault = self.state.take_fault(path) if self.command == "GET" else None
        if fault is not None and fault.kind == "status":
            self._json(fault.status, {"error": "injected"})
            return
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command == "HEAD":
            return
        if fault is not None and fault.kind == "drop":
            self.wfile.write(blob.read(start, min(end, start + fault.after)))
            self.wfile.flush()
            time.sleep(0.05)
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if fault is not None and fault.kind == "corrupt":
            data = bytearray(blob.read(start, end))
            if start <= fault.after < end:
                data[fault.after - start] ^= 0xFF
            self.wfile.write(bytes(data))
            return
        if blob.data is not None:
            self.wfile.write(blob.data[start:end])
            return
        self.wfile.flush()
        with open(blob.path, "rb") as fh:
            if isinstance(self.connection, ssl.SSLSocket):
                fh.seek(start)
                left = end - start
                while left:
                    chunk = fh.read(min(CHUNK, left))
                    self.wfile.write(chunk)
                    left -= len(chunk)
            else:
                self.connection.sendfile(fh, start, end - start)

    def _repo_or_error(self, repo_id: str, dialect: str) -> Repo | None:
        repo = self.state.repos.get(repo_id)
        if repo is not None and (repo.private or repo.gated) and not self._authorised():
            if repo.gated:
                if dialect == "hf":
                    self._json(403, {"error": "gated"}, {"X-Error-Code": "GatedRepo", "X-Error-Message": "gated"})
                else:
                    self._json(401, {"code": "unauthorized", "msg": "gated"})
                return None
            repo = None  # private: looks missing
        if repo is None:
            if dialect == "hf":
                self._json(404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})
            elif dialect == "om":
                self._json(404, {"code": "not_found", "msg": "repo not found"})
            else:
                self._json(404, {"Code": 10010205, "Message": "model not found", "Success": False})
        return repo

    # ---- Hugging Face ------------------------------------------------------------------------------
    def _huggingface(self, path: str) -> bool:
        m = _HF_INFO.match(path)
        if m and self.command == "GET":
            repo = self._repo_or_error(m["repo"], "hf")
            if repo is None:
                return True
            commit = repo.resolve(unquote(m["rev"] or "main"))
            if commit is None:
                self._json(404, {"error": "rev"}, {"X-Error-Code": "RevisionNotFound"})
                return True
            siblings = []
            for name, blob in sorted(repo.files.items()):
                sib = {"rfilename": name, "size": blob.size, "blobId": blob.sha1}
                if blob.lfs:
                    sib["lfs"] = {"sha256": blob.sha256, "size": blob.size, "pointerSize": 134}
                siblings.append(sib)
            self._json(
                200,
                {"id": m["repo"], "modelId": m["repo"], "sha": commit, "private": repo.private, "siblings": siblings},
            )
            return True
        m = _HF_TREE.match(path)
        if m and self.command == "GET":  # list_repo_tree (snapshot_download uses it)
            repo = self._repo_or_error(m["repo"], "hf")
            if repo is None:
                return True
            if repo.resolve(unquote(m["rev"])) is None:
                self._json(404, {"error": "rev"}, {"X-Error-Code": "RevisionNotFound"})
                return True
            entries, dirs = [], set()
            for name, blob in sorted(repo.files.items()):
                parts = name.split("/")
                dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
                entry = {"type": "file", "oid": blob.sha1, "size": blob.size, "path": name}
                if blob.lfs:
                    entry["lfs"] = {"oid": blob.sha256, "size": blob.size, "pointerSize": 134}
                entries.append(entry)
            entries += [{"type": "directory", "oid": "0" * 40, "size": 0, "path": d} for d in sorted(dirs)]
            self._json(200, entries)
            return True
        m = _HF_RESOLVE.match(path)
        if m and self.command in ("GET", "HEAD"):
            repo = self._repo_or_error(m["repo"], "hf")
            if repo is None:
                return True
            commit = repo.resolve(unquote(m["rev"]))
            if commit is None:
                self._json(404, {"error": "rev"}, {"X-Error-Code": "RevisionNotFound"})
                return True
            name = unquote(m["path"])
            blob = repo.files.get(name)
            if blob is None:
                self._json(404, {"error": "entry"}, {"X-Error-Code": "EntryNotFound"})
                return True
            headers = {"X-Repo-Commit": commit, "ETag": f'"{blob.etag}"'}
            if blob.lfs:
                headers["X-Linked-Etag"] = f'"{blob.sha256}"'
                headers["X-Linked-Size"] = str(blob.size)
            self._content(blob, name, headers)
            return True
        if path == "/api/validate-yaml" and self.command == "POST":  # README metadata check on commit
            self._body()
            self._json(200, {"errors": [], "warnings": []})
            return True
        if path == "/api/repos/create" and self.command == "POST":
            body = json.loads(self._body() or b"{}")
            if not self._authorised():
                self._json(
                    401,
                    {"error": "Invalid credentials"},
                    {"X-Error-Message": "Invalid credentials in Authorization header"},
                )
                return True
            repo_id = "/".join(p for p in (body.get("organization"), body.get("name")) if p)
            if repo_id in self.state.repos:
                self._json(409, {"error": "You already created this model repo", "url": f"{self.server.url}/{repo_id}"})
                return True
            self.state.repos[repo_id] = Repo(private=bool(body.get("private")), id=str(self.state.next_id))
            self.state.next_id += 1
            self.state.repos[repo_id].commit()
            self._json(200, {"url": f"{self.server.url}/{repo_id}"})
            return True
        if path == "/api/repos/delete" and self.command == "DELETE":
            body = json.loads(self._body() or b"{}")
            if not self._authorised():
                self._json(
                    401,
                    {"error": "Invalid credentials"},
                    {"X-Error-Message": "Invalid credentials in Authorization header"},
                )
                return True
            repo_id = "/".join(p for p in (body.get("organization"), body.get("name")) if p)
            if self.state.repos.pop(repo_id, None) is None:
                self._json(404, {"error": "not found"}, {"X-Error-Code": "RepoNotFound"})
            else:
                self._json(200, {})
            return True
        m = _HF_PREUPLOAD.match(path)
        if m and self.command == "POST":
            body = json.loads(self._body() or b"{}")
            files = [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in body.get("files", [])]
            self._json(200, {"files": files, "commitOid": self.state.repos.get(m["repo"], Repo()).branches.get("main")})
            return True
        m = _HF_COMMIT.match(path)
        if m and self.command == "POST":
            raw = self._body()
            if not self._authorised():
                self._json(
                    401,
                    {"error": "Invalid credentials"},
                    {"X-Error-Message": "Invalid credentials in Authorization header"},
                )
                return True
            repo = self.state.repos.get(m["repo"])
            if repo is None:
                self._json(404, {"error": "not found"}, {"X-Error-Code": "RepoNotFound"})
                return True
            for line in raw.decode().splitlines():
                if not line.strip():
                    continue
                item = json.loads(line)
                if item.get("key") == "file":
                    value = item["value"]
                    repo.files[value["path"]] = Blob.of(base64.b64decode(value["content"]))
                elif item.get("key") == "deletedFile":
                    repo.files.pop(item["value"]["path"], None)
            branch = unquote(m["rev"])
            commit = repo.commit(branch)
            self._json(
                200,
                {"commitUrl": f"{self.server.url}/{m['repo']}/commit/{commit}", "commitOid": commit, "success": True},
            )
            return True
        return False

    # ---- Modelers (openmind-hub) -------------------------------------------------------------------
    def _om_tree(self, repo: Repo, commit: str, folder: str) -> dict:
        prefix = folder.strip("/") + "/" if folder.strip("/") else ""
        entries, dirs = [], set()
        for name, blob in sorted(repo.files.items()):
            if not name.startswith(prefix):
                continue
            rest = name[len(prefix) :]
            if "/" in rest and not rest.startswith("/") and ".." not in rest.split("/")[0]:
                dirs.add(prefix + rest.split("/", 1)[0])
                continue
            entries.append({"type": "file", "path": name, "size": blob.size, "etag": blob.etag, "is_lfs": blob.lfs})
        entries += [{"type": "dir", "path": d} for d in sorted(dirs)]
        created = "2026-01-01T00:00:00Z"
        return {"tree": entries, "last_commit": {"commit": {"commit_sha": commit, "message": "m", "created": created}}}

    def _modelers(self, path: str) -> bool:
        if path == "/api/v1/file/license_check":
            self._body()
            self._json(200, {"data": True})
            return True
        m = _OM_TREE.match(path)
        if m and self.command == "GET":
            repo = self._repo_or_error(m["repo"], "om")
            if repo is None:
                return True
            commit = repo.resolve(self.query.get("ref", "main"))
            if commit is None:
                self._json(404, {"code": "ref_not_exist", "msg": "ref"})
                return True
            self._json(200, {"data": self._om_tree(repo, commit, self.query.get("path", ""))})
            return True
        m = _OM_MEDIA.match(path)
        if m and self.command in ("GET", "HEAD"):
            repo = self._repo_or_error(m["repo"], "om")
            if repo is None:
                return True
            if repo.resolve(unquote(m["rev"])) is None:
                self._json(404, {"code": "ref_not_exist", "msg": "ref"})
                return True
            name = unquote(m["path"])
            blob = repo.files.get(name)
            if blob is None:
                self._json(404, {"code": "branch_or_path_not_found", "msg": "entry"})
                return True
            self._content(blob, name, {"ETag": f'"{blob.etag}"'})
            return True
        if path == "/api/v1/model" and self.command == "POST":
            body = json.loads(self._body() or b"{}")
            if not self._authorised():
                self._json(401, {"code": "unauthorized", "msg": "token"})
                return True
            repo_id = f"{body['owner']}/{body['name']}"
            if repo_id in self.state.repos:
                self._json(400, {"code": "duplicate_creating", "msg": "exists"})
                return True
            self.state.repos[repo_id] = Repo(private=body.get("visibility") == "private", id=str(self.state.next_id))
            self.state.next_id += 1
            self.state.repos[repo_id].commit()
            self._json(201, {"data": {"id": self.state.repos[repo_id].id}})
            return True
        m = _OM_MODEL.match(path)
        if m and self.command == "GET":
            repo = self._repo_or_error(m["repo"], "om")
            if repo is not None:
                owner, name = m["repo"].split("/")
                self._json(200, {"data": {"id": repo.id, "name": name, "owner": owner, "visibility": "public"}})
            return True
        m = _OM_MODEL_ID.match(path)
        if m and self.command == "DELETE":
            if not self._authorised():
                self._json(401, {"code": "unauthorized", "msg": "token"})
                return True
            for repo_id, repo in list(self.state.repos.items()):
                if repo.id == m["id"]:
                    del self.state.repos[repo_id]
                    self._json(204 if False else 200, {"data": None})
                    return True
            self._json(404, {"code": "not_found"})
            return True
        m = _OM_PREUPLOAD.match(path)
        if m and self.command == "POST":
            body = json.loads(self._body() or b"{}")
            files = [{"path": f["path"], "type": "regular"} for f in body.get("files", [])]
            self._json(200, {"data": {"files": files}})
            return True
        m = _OM_UPLOAD.match(path)
        if m and self.command == "POST":
            body = json.loads(self._body() or b"{}")
            if not self._authorised():
                self._json(401, {"code": "unauthorized", "msg": "token"})
                return True
            repo = self.state.repos.get(m["repo"])
            if repo is None:
                self._json(404, {"code": "not_found"})
                return True
            for item in body.get("files", []):
                if item["operation"] == "create":
                    repo.files[item["path"]] = Blob.of(base64.b64decode(item["content"]))
                elif item["operation"] == "delete":
                    repo.files.pop(item["path"], None)
            commit = repo.commit(body.get("ref") or "main")
            self._json(
                200, {"data": [{"commit_url": f"{self.server.url}/{m['repo']}/commit/{commit}", "commit_oid": commit}]}
            )
            return True
        return False

    # ---- ModelScope --------------------------------------------------------------------------------
    def _modelscope(self, path: str) -> bool:
        m = _MS_FILES.match(path)
        if m and self.command == "GET":
            repo = self._repo_or_error(m["repo"], "ms")
            if repo is None:
                return True
            commit = repo.resolve(self.query.get("Revision", "master"))
            if commit is None:
                self._json(404, {"Code": 10010205, "Message": "revision not found", "Success": False})
                return True
            files = [
                {
                    "Name": n.rsplit("/", 1)[-1],
                    "Path": n,
                    "Size": b.size,
                    "Sha256": b.sha256,
                    "Type": "blob",
                    "Revision": commit,
                    "IsLFS": b.lfs,
                }
                for n, b in sorted(repo.files.items())
            ]
            self._json(200, {"Code": 200, "Data": {"Files": files}, "Success": True})
            return True
        m = _MS_FILE.match(path)
        if m and self.command in ("GET", "HEAD"):
            repo = self._repo_or_error(m["repo"], "ms")
            if repo is None:
                return True
            if repo.resolve(self.query.get("Revision", "master")) is None:
                self._json(404, {"Code": 10010205, "Message": "revision not found", "Success": False})
                return True
            name = self.query.get("FilePath", "")
            blob = repo.files.get(name)
            if blob is None:
                self._json(404, {"Code": 10010205, "Message": "file not found", "Success": False})
                return True
            self._content(blob, name, {"ETag": f'"{blob.sha256}"'})
            return True
        m = _MS_REVISIONS.match(path)
        if m and self.command == "GET":
            repo = self._repo_or_error(m["repo"], "ms")
            if repo is not None:
                branches = [{"Revision": b, "CommitId": c} for b, c in repo.branches.items()]
                self._json(
                    200, {"Code": 200, "Data": {"RevisionMap": {"Branches": branches, "Tags": []}}, "Success": True}
                )
            return True
        m = _MS_MODEL.match(path)
        if m and self.command == "GET":
            repo = self._repo_or_error(m["repo"], "ms")
            if repo is not None:
                self._json(
                    200,
                    {
                        "Code": 200,
                        "Data": {"Id": repo.id, "Path": m["repo"].split("/")[0], "Name": m["repo"].split("/")[1]},
                        "Success": True,
                    },
                )
            return True
        return False


class HubServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, state: HubState, tls: ssl.SSLContext | None = None) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.state = state
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_side=True)
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.server_address[1]}"
        self._thread: threading.Thread | None = None

    def handle_error(self, request, client_address) -> None:  # dropped connections are expected here
        pass

    def start(self) -> HubServer:
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(5)


def serve_folder(folder: Path) -> HubServer:
    """Serve ``folder/<org>/<name>/**`` as repositories (files read from disk)."""
    state = HubState()
    for repo_dir in sorted(p for p in folder.glob("*/*") if p.is_dir()):
        files = {p.relative_to(repo_dir).as_posix(): p for p in repo_dir.rglob("*") if p.is_file()}
        state.add_repo(repo_dir.relative_to(folder).as_posix(), files)
    return HubServer(state)


if __name__ == "__main__":
    server = serve_folder(Path(sys.argv[1]))
    print(server.url, flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
