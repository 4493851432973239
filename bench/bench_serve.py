"""`openmind deploy` throughput: requests/s at concurrency 1, 8 and 32 with dynamic batching
(max_batch_size 32) vs without (max_batch_size 1), same tiny model, same run: `openmind deploy` in its own process, real HTTP on loopback, one torch thread."""

from __future__ import annotations

import asyncio
import tempfile
import time

MAX_TOKENS = 16
TARGET = 3.0  # batching speed-up at concurrency 8
BATCH_WAIT_MS = 10


async def _load(url: str, concurrency: int, total: int) -> float:
    import httpx

    queue: asyncio.Queue = asyncio.Queue()
    for i in range(total):
        queue.put_nowait(f"Request {i}: write a line about the number {i}.")
    async with httpx.AsyncClient(base_url=url, timeout=300) as client:

        async def worker():
            while not queue.empty():
                prompt = queue.get_nowait()
                r = await client.post(
                    "/v1/chat/completions",
                    json={
                        "messages": [{"role": "user", "content": prompt}],
                        "max_tokens": MAX_TOKENS,
                        "temperature": 0,
                    },
                )
                r.raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return total / (time.perf_counter() - start)


def _deploy(model: str, max_batch_size: int):
    """``openmind deploy`` in its own process (as users run it), one torch thread."""
    import os
    import socket
    import subprocess
    import sys
    from pathlib import Path

    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    exe = Path(sys.executable).with_name("openmind")
    cmd = [str(exe), "deploy", "--model", model, "--port", str(port), "--device", "cpu", "--served-model-name", "tiny"]
    cmd += ["--max-batch-size", str(max_batch_size), "--batch-wait-ms", str(BATCH_WAIT_MS), "--max-queue", "1024"]
    # one intra-op thread: on a small shared CPU torch's default pool spins against other processes
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"openmind deploy exited with {proc.returncode}")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("openmind deploy did not start")
        time.sleep(0.3)


def run() -> list[dict]:
    from openmind.pt.testing import tiny_llama

    folder = str(tiny_llama(tempfile.mkdtemp(prefix="bench-serve-") + "/tiny"))
    rates: dict[tuple[str, int], float] = {}
    sizes: dict[tuple[str, int], float] = {}
    for label, batch in (("batching", 32), ("no batching", 1)):
        proc, url = _deploy(folder, batch)
        try:
            asyncio.run(_load(url, 2, 4))  # warm-up
            for concurrency in (1, 8, 32):
                import httpx

                before = httpx.get(url + "/health").json()
                rates[(label, concurrency)] = asyncio.run(_load(url, concurrency, max(24, concurrency * 8)))
                after = httpx.get(url + "/health").json()
                sizes[(label, concurrency)] = (after["requests"] - before["requests"]) / max(
                    1, after["batches"] - before["batches"]
                )
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    rows = []
    for concurrency in (1, 8, 32):
        on, off = rates[("batching", concurrency)], rates[("no batching", concurrency)]
        ratio = on / off
        rows.append(
            {
                "benchmark": "serve",
                "metric": f"chat req/s at concurrency {concurrency} ({MAX_TOKENS} tokens, openmind deploy, "
                f"wait {BATCH_WAIT_MS:g} ms): {on:.1f} batched (mean batch {sizes[('batching', concurrency)]:.1f}) "
                f"vs {off:.1f} unbatched",
                "value": f"{ratio:.2f}x",
                "target": f">= {TARGET:g}x" if concurrency == 8 else "",
                "ok": ratio >= TARGET if concurrency == 8 else None,
            }
        )
    return rows
