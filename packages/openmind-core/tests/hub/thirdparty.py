"""A third-party hub for the tests: an in-memory hub that publishes no checksums and breaks its
first stream of every file halfway. It implements only the protocol of ``openmind.core.hub.base``;
resume, verification, atomicity and the cache come from openmind."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.hub.base import Hub, RemoteFile, Snapshot, Stream
from openmind.core.specs import HubSpec

FILES: dict[str, bytes] = {}
OPENED: list[tuple[str, int]] = []


class MemoryHub(Hub):
    name = "memory"

    def list_files(self, repo_id, revision):
        files = tuple(RemoteFile(path, len(data)) for path, data in sorted(FILES.items()))
        return Snapshot(repo_id, revision, "c" * 40, files)

    def open(self, snapshot, file, start=0):
        OPENED.append((file.path, start))
        data = FILES[file.path]
        first = sum(1 for path, _ in OPENED if path == file.path) == 1

        def chunks():
            if first:
                yield data[start : len(data) // 2]
                raise ConnectionResetError("stream broken on purpose")
            yield data[start:]

        return Stream(start, chunks())


class Plugin:
    @hookimpl
    def openmind_register_hubs(self, register):
        register(HubSpec(name="memory", prefix="mem", impl="thirdparty:MemoryHub", description="test hub"))
