"""Running an ASGI app with uvicorn: in the foreground (``openmind deploy``) or in a background
thread on a free loopback port (tests, benchmarks, the quickstart)."""

from __future__ import annotations

import errno
import socket
import threading
import time
from typing import Any

from openmind.nlp.serve.errors import S_BIND

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def bind_socket(host: str, port: int) -> socket.socket:
    """Bind ``host:port`` ourselves so a busy port is a coded error, and port 0 picks a free one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP, not the default 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only
    # on connections whose socket says IPPROTO_TCP, and with Nagle on every keep-alive response
    # waited ~40 ms for the client's delayed ACK (44 ms per request on loopback, measured)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        reason = "is already in use" if exc.errno == errno.EADDRINUSE else f"cannot be bound: {exc.strerror or exc}"
        raise S_BIND.error(f"address {host}:{port} {reason}", location=f"--host {host} --port {port}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def io_choice() -> dict[str, str]:
    """uvicorn's event loop and HTTP parser: uvloop and httptools (``openmind-nlp[serve]`` installs
    them where they build) when importable, else asyncio's loop and h11. On a small CPU the pure-Python
    pair costs as much per request as decoding a short answer on a small model."""
    from importlib.util import find_spec

    return {
        "loop": "uvloop" if find_spec("uvloop") else "asyncio",
        "http": "httptools" if find_spec("httptools") else "h11",
    }


def _config(app: Any, log_level: str = "warning", **kw: Any):
    import uvicorn

    return uvicorn.Config(
        app, log_level=log_level, access_log=False, lifespan="on", timeout_graceful_shutdown=5, **io_choice(), **kw
    )


def serve_forever(app: Any, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info") -> None:
    """Serve until interrupted (Ctrl-C)."""
    import uvicorn

    sock = bind_socket(host, port)
    server = uvicorn.Server(_config(app, log_level=log_level))
    server.run(sockets=[sock])


class ServerThread:
    """Serve ``app`` from a background thread; a context manager that stops the server on exit.

    Example::

        with ServerThread(app) as server:
            httpx.get(server.url + "/health")
    """

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning") -> None:
        import uvicorn

        self.sock = bind_socket(host, port)
        self.host, self.port = self.sock.getsockname()[:2]
        self.server = uvicorn.Server(_config(app, log_level=log_level))
        self.thread = threading.Thread(target=self._run, name="openmind-server", daemon=True)
        self.error: BaseException | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def _run(self) -> None:
        try:
            self.server.run(sockets=[self.sock])
        except BaseException as exc:  # noqa: BLE001 - surfaced by start()/stop()
            self.error = exc

    def start(self, timeout: float = 30.0) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if self.error is not None or not self.thread.is_alive():
                raise RuntimeError(f"server thread died: {self.error!r}")
            if time.monotonic() > deadline:
                raise TimeoutError("server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)
        self.sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
