"""The hub SDK: :func:`pull`, :func:`push`, :func:`rm`, :func:`get_hub`.

Import-light: hub clients (``huggingface_hub``, ``openmind_hub``, ``modelscope``) are imported
only when a hub is used.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from openmind.core.errors import DependencyError, OpenMindError
from openmind.core.hub.base import Hub, RemoteFile, Snapshot
from openmind.core.hub.cache import RepoCache, atomic_write, remote_file
from openmind.core.hub.download import LOCAL_STATE, CacheTarget, DirTarget, Settings, fetch_all
from openmind.core.hub.errors import (
    H_BAD_FOLDER,
    H_CLIENT,
    H_FILE_NOT_FOUND,
    H_NETWORK,
    H_NOT_CACHED,
)
from openmind.core.hub.ids import HubId, find_hub_spec, parse, safe_relpath
from openmind.core.logs import logger

T = TypeVar("T")
#: optional extra of the `openmind` distribution that installs each hub's client
EXTRAS = {"huggingface": "hf", "modelers": "modelers", "modelscope": "modelscope"}
_COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")


def offline() -> bool:
    """``OPENMIND_OFFLINE=1``: resolve from the cache only, never touch the network."""
    return os.environ.get("OPENMIND_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def get_hub(name: str, *, endpoint: str | None = None, token: str | None = None) -> Hub:
    """Build the hub named ``name`` (or prefix ``hf``/``ms``/``om``). A missing client package is
    OM-X001 naming the install command."""
    spec = find_hub_spec(name)
    try:
        cls = spec.load()
    except DependencyError as exc:
        extra = EXTRAS.get(spec.name)
        if extra:
            exc.hint = f'Install it: pip install "openmind[{extra}]"  (or: {exc.hint.removeprefix("Install it: ")})'
        raise
    return cls(endpoint=endpoint or None, token=token or None)


def _patterns(value: str | Iterable[str] | None) -> list[str]:
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    out = []
    for item in items:
        out += [p.strip() for p in str(item).split(",") if p.strip()]
    return out


def _match(path: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        if pattern.endswith("/"):
            pattern += "*"
        if fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pattern):
            return True
    return False


def select(files: Iterable[RemoteFile], include: list[str], exclude: list[str]) -> list[RemoteFile]:
    """Files matching any ``include`` pattern (all when none) and no ``exclude`` pattern.
    A pattern matches the whole path or the file name (``*.json``); ``dir/`` means everything under it."""
    return [f for f in files if (not include or _match(f.path, include)) and not _match(f.path, exclude)]


def call_hub(hub: Hub, what: str, fn: Callable[[], T], repo_id: str, revision: str | None, settings: Settings) -> T:
    """Run a metadata call of a hub client: coded errors for what the hub refused, retries with
    backoff for transient failures, OM-H010 when they persist."""
    attempt = 0
    while True:
        try:
            return fn()
        except OpenMindError:
            raise
        except NotImplementedError as exc:
            raise H_CLIENT.error(f"{hub.name}: {exc}") from None
        except Exception as exc:
            coded = hub.translate(exc, repo_id, revision)
            if coded is not None:
                raise coded from exc
            if not hub.is_transient(exc):
                raise H_CLIENT.error(f"{hub.name}: {what} failed: {type(exc).__name__}: {exc}") from exc
            if attempt >= settings.retries:
                raise H_NETWORK.error(
                    f"{hub.name}: {what} failed after {attempt + 1} attempts: {type(exc).__name__}: {exc}",
                    location=hub.endpoint or hub.name,
                ) from exc
            logger.info("%s: %s failed (%s); retrying", hub.name, what, exc)
            settings.sleep(attempt)
            attempt += 1


def pull(
    model_id: str,
    *,
    revision: str | None = None,
    hub: str | None = None,
    include: str | Iterable[str] | None = None,
    exclude: str | Iterable[str] | None = None,
    local_dir: str | os.PathLike | None = None,
    endpoint: str | None = None,
    token: str | None = None,
    workers: int | None = None,
    retries: int | None = None,
    progress: bool | None = None,
) -> Path:
    """Download a repository (or the files matching ``include``/``exclude``) and return its folder.

    :param model_id: ``org/name``, or with a hub prefix ``hf::org/name`` / ``ms::`` / ``om::`` /
        ``local::``; ``file:///mirror/org/name`` for a local mirror.
    :param revision: branch, tag or commit (the hub's default branch when ``None``).
    :param hub: hub name; else the id prefix, ``OPENMIND_HUB``, then ``modelers``.
    :param include: glob patterns (list or comma-separated) of files to fetch; all when ``None``.
    :param exclude: glob patterns of files to skip.
    :param local_dir: write plain files into this folder instead of the shared cache.
    :param endpoint: the hub's URL (else the client's environment variable / default).
    :param token: access token (else the client's own: ``HF_TOKEN``, ``OPENMIND_HUB_TOKEN`` ...).
    :returns: the snapshot folder in the cache (``$OPENMIND_CACHE/hub/<hub>/models--org--name/
        snapshots/<commit>``) or ``local_dir``.

    With ``OPENMIND_OFFLINE=1`` nothing is fetched: the files must already be in the cache
    (OM-H011 otherwise). When the hub cannot be reached, a complete cached copy of the revision
    is used with a warning.

    Example::

        from openmind.core.hub import pull
        folder = pull("hf::org/tiny-llama", include=["*.json", "*.safetensors"])
    """
    hid = parse(model_id, hub)
    inc, exc = _patterns(include), _patterns(exclude)
    folder = Path(os.path.abspath(os.path.expanduser(str(local_dir)))) if local_dir else None
    cache = RepoCache(hid.hub, hid.repo_id)
    if offline():
        return from_cache(hid, revision, inc, exc, folder)
    settings = Settings(workers=workers, retries=retries)
    hub_obj = get_hub(hid.hub, endpoint=endpoint, token=token)
    rev = revision or hub_obj.default_revision
    try:
        snapshot = call_hub(
            hub_obj,
            f"listing {hid.repo_id}@{rev}",
            lambda: hub_obj.list_files(hid.repo_id, rev),
            hid.repo_id,
            rev,
            settings,
        )
    except OpenMindError as err:
        if err.code != H_NETWORK.code:
            raise
        try:
            found = from_cache(hid, rev, inc, exc, folder)
        except OpenMindError:
            raise err from None
        logger.warning("%s is unreachable (%s); using the cached copy %s", hub_obj.name, err.message, found)
        return found
    files = select(snapshot.files, inc, exc)
    for f in files:
        safe_relpath(f.path)  # refuse the pull before anything is written
    if not files:
        what = f" matching --include {inc}" + (f" / --exclude {exc}" if exc else "") if inc or exc else ""
        raise H_FILE_NOT_FOUND.error(
            f"{hid.hub}:{hid.repo_id}@{rev} has no file{what} ({len(snapshot.files)} files in the repository: "
            f"{', '.join(f.path for f in snapshot.files[:8])}{' ...' if len(snapshot.files) > 8 else ''})"
        )
    label = f"{hid.hub}:{hid.repo_id}"
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        target = DirTarget(folder, snapshot.commit)
        _write_dir_manifest(folder, hid, snapshot, files)
        fetch_all(hub_obj, snapshot, files, target, settings, label=label, progress=progress)
        return folder
    cache.write_manifest(snapshot, files)
    cache.write_ref(rev, snapshot.commit)
    cache.touch()
    target = CacheTarget(cache, snapshot.commit)
    fetch_all(hub_obj, snapshot, files, target, settings, label=label, progress=progress)
    snap = cache.snapshot_dir(snapshot.commit)
    snap.mkdir(parents=True, exist_ok=True)
    return snap


def _write_dir_manifest(folder: Path, hid: HubId, snapshot: Snapshot, files: list[RemoteFile]) -> None:
    data = {
        "hub": hid.hub,
        "repo_id": hid.repo_id,
        "revision": snapshot.revision,
        "commit": snapshot.commit,
        "files": {f.path: {"size": f.size, "sha256": f.sha256, "etag": f.etag} for f in snapshot.files},
        "requested": sorted(f.path for f in files),
    }
    atomic_write(folder / LOCAL_STATE / "manifest.json", json.dumps(data, indent=1, sort_keys=True))


def from_cache(
    hid: HubId, revision: str | None, include: list[str], exclude: list[str], local_dir: Path | None = None
) -> Path:
    """Resolve from disk only (offline mode, or the fallback when the hub is unreachable)."""
    label = f"{hid.hub}:{hid.repo_id}" + (f"@{revision}" if revision else "")
    if local_dir is not None:
        try:
            manifest = json.loads((local_dir / LOCAL_STATE / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise H_NOT_CACHED.error(f"{label} was never pulled into {local_dir}") from None
        if manifest.get("repo_id") != hid.repo_id or (
            revision and revision not in (manifest.get("revision"), manifest.get("commit"))
        ):
            raise H_NOT_CACHED.error(
                f"{local_dir} holds {manifest.get('repo_id')}@{manifest.get('revision')}, not {label}"
            )
        _check_present(label, local_dir, manifest, include, exclude)
        return local_dir
    cache = RepoCache(hid.hub, hid.repo_id)
    candidates = [revision] if revision else ["main", "master"]
    for rev in candidates:
        commit = rev if _COMMIT_RE.match(rev) and cache.snapshot_dir(rev).is_dir() else cache.read_ref(rev)
        if commit is None or not cache.snapshot_dir(commit).is_dir():
            continue
        manifest = cache.read_manifest(commit)
        if manifest is not None:
            _check_present(label, cache.snapshot_dir(commit), manifest, include, exclude)
        cache.touch()
        return cache.snapshot_dir(commit)
    raise H_NOT_CACHED.error(f"{label} is not in the cache {cache.root}")


def _check_present(label: str, folder: Path, manifest: dict, include: list[str], exclude: list[str]) -> None:
    files = [remote_file(p, m) for p, m in manifest.get("files", {}).items()]
    wanted = (
        select(files, include, exclude)
        if (include or exclude)
        else [f for f in files if f.path in set(manifest.get("requested", []))]
    )
    absent = [f.path for f in wanted if not (folder / f.path).exists()]
    if absent or not wanted:
        shown = ", ".join(absent[:5]) + (" ..." if len(absent) > 5 else "")
        raise H_NOT_CACHED.error(
            f"{label}: {len(absent)} of {len(wanted)} file(s) are not in {folder}" + (f": {shown}" if shown else "")
        )


def push(
    folder: str | os.PathLike,
    repo_id: str,
    *,
    hub: str | None = None,
    revision: str | None = None,
    message: str | None = None,
    private: bool = False,
    include: str | Iterable[str] | None = None,
    exclude: str | Iterable[str] | None = None,
    endpoint: str | None = None,
    token: str | None = None,
) -> str:
    """Upload ``folder`` to ``repo_id`` as one commit, creating the repository if missing.

    :returns: what the hub returns for the commit (its id or URL).
    """
    path = Path(os.path.expanduser(str(folder)))
    if not path.is_dir():
        raise H_BAD_FOLDER.error(f"{path} is not a folder", location=str(path))
    inc, exc = _patterns(include), _patterns(exclude)
    local_files = [
        p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file() and LOCAL_STATE not in p.parts
    ]
    chosen = select((RemoteFile(p, None) for p in local_files), inc, exc)
    if not chosen:
        raise H_BAD_FOLDER.error(
            f"{path} has no file to upload" + (f" matching {inc or ''} {exc or ''}" if inc or exc else "")
        )
    hid = parse(repo_id, hub)
    hub_obj = get_hub(hid.hub, endpoint=endpoint, token=token)
    settings = Settings(retries=1)
    message = message or f"Upload {path.name} with openmind"
    call_hub(
        hub_obj,
        f"creating {hid.repo_id}",
        lambda: hub_obj.create_repo(hid.repo_id, private=private),
        hid.repo_id,
        None,
        settings,
    )
    return call_hub(
        hub_obj,
        f"uploading {path} to {hid.repo_id}",
        lambda: hub_obj.upload_folder(
            str(path),
            hid.repo_id,
            revision=revision,
            message=message,
            include=inc or None,
            exclude=(exc or []) + [f"{LOCAL_STATE}/*"],
        ),
        hid.repo_id,
        revision,
        settings,
    )


def rm(
    model_id: str,
    *,
    hub: str | None = None,
    remote: bool = False,
    endpoint: str | None = None,
    token: str | None = None,
) -> dict[str, Any]:
    """Remove a repository from the cache (default) or, with ``remote=True``, delete it on the hub.

    :returns: ``{"removed": [...cache folders...], "freed": bytes}`` or ``{"deleted": "hub:org/name"}``.
    """
    hid = parse(model_id, hub)
    if remote:
        hub_obj = get_hub(hid.hub, endpoint=endpoint, token=token)
        call_hub(
            hub_obj,
            f"deleting {hid.repo_id}",
            lambda: hub_obj.delete_repo(hid.repo_id),
            hid.repo_id,
            None,
            Settings(retries=1),
        )
        return {"deleted": f"{hid.hub}:{hid.repo_id}"}
    from openmind.core.hub import cache as C

    cache = RepoCache(hid.hub, hid.repo_id)
    repos = [r for r in C.scan() if r.path == cache.path]
    if not repos:
        raise H_NOT_CACHED.error(
            f"{hid.hub}:{hid.repo_id} is not in the cache {cache.root}",
            hint="`openmind cache ls` lists what is cached.",
        )
    freed = sum(C.remove_repo(r) for r in repos)
    return {"removed": [str(r.path) for r in repos], "freed": freed}
