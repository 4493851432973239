"""Batch functions over a dataset in worker processes, output identical for any number of workers.

``datasets.map(num_proc=N)`` cuts the rows into N static shards and pickles the function with its
arguments (here: the tokenizer) into every worker; one slow worker then holds up the whole run,
and each shard's output sits in memory until the shard is done. :func:`map_batches` instead:

* forks the workers once (Linux): they inherit the dataset (memory-mapped Arrow, or in-memory pages
  shared copy-on-write) and the function with its arguments, so nothing is pickled but a
  ``(chunk, start, stop)`` triple per task and a file name back: no tokenizer per row or per shard,
  no Arrow table copied between processes;
* hands out chunks, whose size depends on the number of rows only (:func:`chunk_size`),
  dynamically (a busy core takes fewer), each processed in batches of ``batch_size`` rows and
  streamed to its own Arrow IPC file, so a worker holds at most one batch of input and output
  (memory bounded per worker, not per dataset);
* memory-maps the chunk files and concatenates them in chunk order: chunk boundaries do not
  depend on the number of workers, so the result is the same for 1, 2 or 4 workers.

Where ``fork`` is unavailable (macOS/Windows) or one worker is asked for, callers use
``datasets.map`` as before (:func:`can_fork`).
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from typing import Any

#: most rows per task (chunk sizes depend on the number of rows only, never on the number of workers)
CHUNK_ROWS = 4000
#: fewest rows per task (one batch: smaller chunks only add files)
MIN_CHUNK_ROWS = 1000
#: chunks a dataset is cut into when that keeps them between the two bounds above
CHUNKS = 32

#: what the forked workers inherit (set just before the pool starts)
_JOB: dict[str, Any] = {}


def can_fork() -> bool:
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def chunk_size(n: int) -> int:
    """Rows per task for ``n`` rows: about :data:`CHUNKS` chunks, so that the chunk a worker
    finishes alone at the end is a small share of the run (4000-row chunks left 20,000 rows in
    five: 3 + 2 with two workers, 1.67x at best), within the bounds above."""
    return min(CHUNK_ROWS, max(MIN_CHUNK_ROWS, -(-n // CHUNKS)))


def _run_chunk(task: tuple[int, int, int]) -> tuple[int, str, int]:
    import pyarrow as pa

    chunk, start, stop = task
    job = _JOB
    dataset, fn, kwargs, batch_size = job["dataset"], job["fn"], job["kwargs"], job["batch_size"]
    path = os.path.join(job["folder"], f"chunk-{chunk:06d}.arrow")
    writer = None
    rows = 0
    try:
        for lo in range(start, stop, batch_size):
            hi = min(lo + batch_size, stop)
            out = fn(dataset[lo:hi], list(range(lo, hi)), **kwargs)
            table = out if isinstance(out, pa.Table) else job["to_table"](out)
            if writer is None:
                writer = pa.ipc.new_stream(path, table.schema)
            writer.write_table(table)
            rows += table.num_rows
    finally:
        if writer is not None:
            writer.close()
    return chunk, path, rows


def map_batches(
    dataset: Any,
    fn: Callable[..., Any],
    *,
    fn_kwargs: dict[str, Any],
    workers: int,
    batch_size: int = 1000,
    features: Any = None,
    chunk_rows: int | None = None,
) -> Any:
    """``dataset.map(fn, batched=True, with_indices=True, remove_columns=all, fn_kwargs=...)`` in
    ``workers`` forked processes; returns a memory-mapped ``datasets.Dataset``.

    :param fn: ``fn(batch: dict[str, list], indices: list[int], **fn_kwargs)`` returning a
        ``pyarrow.Table`` or a dict of columns (then cast to ``features``).
    :param features: the ``datasets.Features`` of a dict result (ignored for tables).
    :param chunk_rows: rows per task (default: :func:`chunk_size`).
    """
    import datasets
    import pyarrow as pa

    n = len(dataset)
    chunk_rows = chunk_rows or chunk_size(n)
    folder = tempfile.mkdtemp(prefix="openmind-data-workers-")
    atexit.register(shutil.rmtree, folder, True)

    def to_table(out: dict[str, list]) -> pa.Table:
        if features is None:
            return pa.table(out)
        return pa.Table.from_pydict(out, schema=features.arrow_schema)

    tasks = [(k, lo, min(lo + chunk_rows, n)) for k, lo in enumerate(range(0, n, chunk_rows))]
    _JOB.update(dataset=dataset, fn=fn, kwargs=fn_kwargs, batch_size=batch_size, folder=folder, to_table=to_table)
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(min(workers, len(tasks))) as pool:
            done = sorted(pool.imap_unordered(_run_chunk, tasks))
    finally:
        _JOB.clear()
    parts = [datasets.Dataset.from_file(path) for _, path, rows in done if rows]
    if not parts:
        return datasets.Dataset.from_dict({})
    return parts[0] if len(parts) == 1 else datasets.concatenate_datasets(parts)
