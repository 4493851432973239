"""Hub download throughput: `openmind pull` vs `huggingface_hub.snapshot_download`, same run.

A loopback test hub (packages/openmind-core/tests/hub/server.py, in its own process so that it
does not share a GIL with the clients) serves one repository of 20 files from 1 KiB to 200 MiB.
Each round pulls the whole repository into a fresh, empty cache with each client, alternating
which goes first; the best round of each is compared. openmind also verifies every file's sha256
/ git blob id while downloading; snapshot_download does not.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "packages" / "openmind-core" / "tests" / "hub" / "server.py"
MiB = 1 << 20
SIZES = [1024 * 2**i for i in range(12)] + [
    1 * MiB,
    2 * MiB,
    5 * MiB,
    10 * MiB,
    20 * MiB,
    50 * MiB,
    100 * MiB,
    200 * MiB,
]
ROUNDS = 3


def _make_repo(folder: Path) -> int:
    repo = folder / "bench" / "model"
    repo.mkdir(parents=True)
    block = b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(32768))  # 1 MiB, incompressible-ish
    for i, size in enumerate(SIZES):
        name = f"shard-{i:02d}.bin" if size >= MiB else f"small/file-{i:02d}.json"
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            left = size
            salt = i.to_bytes(4, "little")
            while left:
                chunk = (salt + block)[: min(left, MiB + 4)]
                fh.write(chunk)
                left -= len(chunk)
    return sum(SIZES)


def _tree_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def run() -> list[dict]:
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.utils import disable_progress_bars

    from openmind.core.hub import pull

    constants.HF_HUB_OFFLINE = False  # nox runs benchmarks with HF_HUB_OFFLINE=1
    disable_progress_bars()  # neither client draws a progress bar
    work = Path(tempfile.mkdtemp(prefix="om-bench-hub-"))
    server = None
    try:
        total = _make_repo(work / "repos")
        server = subprocess.Popen([sys.executable, str(SERVER), str(work / "repos")], stdout=subprocess.PIPE, text=True)
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        times: dict[str, list[float]] = {"openmind": [], "huggingface_hub": []}
        old_cache = os.environ.get("OPENMIND_CACHE")
        for round_ in range(ROUNDS):
            order = ["openmind", "huggingface_hub"] if round_ % 2 == 0 else ["huggingface_hub", "openmind"]
            for who in order:
                cache = work / f"cache-{who}-{round_}"
                start = time.perf_counter()
                if who == "openmind":
                    os.environ["OPENMIND_CACHE"] = str(cache)
                    folder = pull("hf::bench/model", endpoint=url, progress=False)
                else:
                    folder = Path(snapshot_download("bench/model", endpoint=url, cache_dir=str(cache)))
                times[who].append(time.perf_counter() - start)
                got = _tree_bytes(folder)
                assert got == total, f"{who} fetched {got} of {total} bytes"
                shutil.rmtree(cache)
        if old_cache is None:
            os.environ.pop("OPENMIND_CACHE", None)
        else:
            os.environ["OPENMIND_CACHE"] = old_cache
        best = {who: min(t) for who, t in times.items()}
        mbps = {who: total / MiB / t for who, t in best.items()}
        ratio = mbps["openmind"] / mbps["huggingface_hub"]
        return [
            {
                "benchmark": "hub",
                "metric": (
                    f"pull {len(SIZES)} files / {total / MiB:.0f} MiB from a loopback hub: openmind "
                    f"{mbps['openmind']:.0f} MiB/s ({best['openmind']:.2f} s, sha256-verified) vs "
                    f"snapshot_download {mbps['huggingface_hub']:.0f} MiB/s ({best['huggingface_hub']:.2f} s), "
                    f"best of {ROUNDS}"
                ),
                "value": f"{ratio:.2f}x",
                "target": ">= 1.0x",
                "ok": ratio >= 1.0,
            }
        ]
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
        shutil.rmtree(work, ignore_errors=True)
