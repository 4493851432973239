"""Dynamic batching with a bounded queue, cancellation and timeouts.

Requests wait in one queue (bounded: :class:`QueueFull` -> HTTP 429). A single batching loop
takes the oldest waiting job, waits for the clients it expects (those of the last batch and those
that arrived while it ran; gaps of at most ``batch_wait_ms``, 4x that in all), and runs up to
``max_batch_size`` jobs that share the engine's :meth:`~openmind.nlp.serve.engine.Engine.batch_key`
as one batch on a worker thread (the model is used by one thread at a time). Jobs that arrive
while a batch runs are batched together next time, so under load batches fill up by themselves.

Cancelled jobs (client gone, timeout) are dropped before they run and stopped while they run
(engines check :attr:`Job.cancelled`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from openmind.nlp.serve.engine import Engine, Job, Result

#: a job arriving later than this after a batch ended is a new client, not one coming back (seconds)
COMEBACK_LIMIT = 0.25


class QueueFull(Exception):
    """The request queue is at its bound."""


class JobTimeout(Exception):
    """The job did not finish within the request timeout."""


@dataclass
class SchedulerStats:
    batches: int = 0
    jobs: int = 0
    largest_batch: int = 0
    rejected: int = 0
    cancelled: int = 0
    timed_out: int = 0
    #: seconds the engine spent running batches, and seconds the loop held waiting jobs back to fill
    #: a batch (what batching costs a lone request: stays 0 for a lone client)
    busy_seconds: float = 0.0
    wait_seconds: float = 0.0


class Scheduler:
    """Batches jobs for ``engine``. Create and use it inside one running event loop."""

    def __init__(
        self,
        engine: Engine,
        *,
        max_batch_size: int = 8,
        batch_wait_ms: float = 5.0,
        max_queue: int = 256,
        timeout: float | None = 300.0,
    ) -> None:
        self.engine = engine
        self.max_batch_size = max(1, int(max_batch_size))
        self.batch_wait = max(0.0, float(batch_wait_ms)) / 1000.0
        self.max_queue = max(1, int(max_queue))
        self.timeout = timeout if timeout and timeout > 0 else None
        self.stats = SchedulerStats()
        self._waiting: collections.deque[tuple[Job, asyncio.Future]] = collections.deque()
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="openmind-engine")
        self._last_size = self.max_batch_size
        #: jobs that arrived while the last batch ran (other clients than the ones it served)
        self._early = 0
        #: when the last batch's results were handed out; None once a job arrived after that
        self._finished_at: float | None = None
        #: moving average of the time from a batch's end to the first job after it (how long a
        #: served client takes to come back: response, its own work, request, parsing, tokenization)
        self._comeback = 0.0

    # ---- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._wakeup = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._loop(), name="openmind-batcher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for job, future in self._waiting:
            job.cancelled.set()
            if not future.done():
                future.cancel()
        self._waiting.clear()
        self._executor.shutdown(wait=False, cancel_futures=True)

    @property
    def queued(self) -> int:
        return len(self._waiting)

    # ---- submitting ------------------------------------------------------------------------

    def submit(self, job: Job) -> asyncio.Future:
        """Queue ``job``; the returned future resolves to its :class:`Result`. Raises :class:`QueueFull`."""
        if self._task is None:
            self.start()
        if len(self._waiting) >= self.max_queue:
            self.stats.rejected += 1
            raise QueueFull(f"{len(self._waiting)} requests are waiting (bound {self.max_queue})")
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        if self._finished_at is not None:
            seconds = time.perf_counter() - self._finished_at
            if seconds < COMEBACK_LIMIT:  # later than that it is a new client, not a served one
                self._comeback = seconds if not self._comeback else 0.8 * self._comeback + 0.2 * seconds
            self._finished_at = None
        self._waiting.append((job, future))
        assert self._wakeup is not None
        self._wakeup.set()
        return future

    async def run(self, job: Job) -> Result:
        """Submit ``job`` and wait for it, honouring the timeout; cancelling the caller cancels the job."""
        future = self.submit(job)
        try:
            if self.timeout is None:
                return await asyncio.shield(future)
            return await asyncio.wait_for(asyncio.shield(future), self.timeout)
        except asyncio.TimeoutError:
            job.cancelled.set()
            self.stats.timed_out += 1
            raise JobTimeout(f"no answer within {self.timeout:g} s") from None
        except asyncio.CancelledError:
            job.cancelled.set()
            self.stats.cancelled += 1
            raise

    # ---- the batching loop -----------------------------------------------------------------

    def _take_batch(self) -> list[tuple[Job, asyncio.Future]]:
        """The oldest live job plus up to ``max_batch_size - 1`` later ones with the same key."""
        while self._waiting and (self._waiting[0][0].is_cancelled or self._waiting[0][1].done()):
            self._waiting.popleft()
        if not self._waiting:
            return []
        first = self._waiting.popleft()
        key = self.engine.batch_key(first[0])
        batch = [first]
        keep: collections.deque = collections.deque()
        while self._waiting and len(batch) < self.max_batch_size:
            item = self._waiting.popleft()
            if item[0].is_cancelled or item[1].done():
                continue
            (batch if self.engine.batch_key(item[0]) == key else keep).append(item)
        keep.extend(self._waiting)
        self._waiting = keep
        return batch

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._wakeup is not None
        while True:
            if not self._waiting:
                self._wakeup.clear()
                await self._wakeup.wait()
            # wait for the clients of the batch that just finished to come back: clients in a steady
            # loop send their next requests some ms apart, and closing the batch on the first ones
            # splits the load into two part-full batches that alternate for good. The clients to
            # expect: those of the last batch plus those whose jobs arrived while it ran (they were
            # not in it), so a lone client never waits. batch_wait is the longest gap between two
            # arrivals worth waiting for (returns trickle in, each through HTTP, parsing and
            # tokenization); the first of them may take as long as served clients usually take to
            # come back (1.5x the measured average: on a busy 2-core machine ~50 ms through HTTP),
            # and the whole wait ends 4 x batch_wait after that.
            target = min(self.max_batch_size, self._early + self._last_size)
            if self.batch_wait and len(self._waiting) < target:
                now = began = time.perf_counter()
                first = max(self.batch_wait, 1.5 * self._comeback)
                deadline, cap = now + first, now + first + 4 * self.batch_wait
                while len(self._waiting) < target and now < deadline:
                    seen = len(self._waiting)
                    self._wakeup.clear()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self._wakeup.wait(), max(0.0, deadline - now))
                    now = time.perf_counter()
                    if len(self._waiting) > seen:  # someone came: give the others another gap
                        deadline = min(cap, now + self.batch_wait)
                self.stats.wait_seconds += now - began
            batch = self._take_batch()
            if not batch:
                continue
            jobs = [job for job, _ in batch]
            self._last_size = len(jobs)
            self.stats.batches += 1
            self.stats.jobs += len(jobs)
            self.stats.largest_batch = max(self.stats.largest_batch, len(jobs))
            started = time.perf_counter()
            try:
                results: list[Any] = await loop.run_in_executor(self._executor, self.engine.run_batch, jobs)
            except Exception as exc:  # noqa: BLE001 - the whole batch failed: fail each of its jobs
                results = [exc] * len(jobs)
            self.stats.busy_seconds += time.perf_counter() - started
            for (job, future), result in zip(batch, results):
                if future.done():
                    continue
                if job.is_cancelled:  # nobody waits for it any more
                    future.cancel()
                    continue
                if isinstance(result, BaseException):
                    future.set_exception(result)
                else:
                    future.set_result(result)
            self._early = len(self._waiting)
            self._finished_at = time.perf_counter()
