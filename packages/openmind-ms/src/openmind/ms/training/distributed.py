"""Data-parallel training on MindSpore: ``openmind train --framework ms --nproc N`` re-runs itself
under ``msrun`` (MindSpore's own launcher), as the PyTorch trainer re-runs itself under torchrun.

msrun starts, on node 0, a scheduler process and ``--nproc`` workers per node; all of them run the
same ``openmind train ARGS_FILE`` command. :func:`join` makes every one of them call
``mindspore.communication.init()``: the scheduler serves the cluster there and exits when the
workers are done (it never returns from it), each worker joins the cluster and learns its rank.

The trainer then draws every global batch (``per_device_train_batch_size * world`` rows, in the
order one process draws them), each rank takes its slice, and the token-weighted gradients are
summed across ranks with MindSpore's ``DistributedGradReducer`` (AllReduce; on CPU over msrun's TCP
cluster) before one optimizer step on every rank: the same update as one process on the whole
global batch. Only rank 0 writes the run folder.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sys
from pathlib import Path
from typing import Any

#: msrun's role variable in the processes it starts (MS_SCHED: the scheduler, MS_WORKER: a worker)
ROLE = "MS_ROLE"
#: the rendezvous port of multi-node runs (as torchrun's default on PyTorch)
MULTI_NODE_PORT = 29500
#: the folder (in the run folder) where msrun writes the scheduler's and every worker's log
LOG_DIR = "msrun_log"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def msrun_command(args: Any, argv: list[str]) -> list[str]:
    """``python -m mindspore.parallel.cluster.run`` (the module behind the ``msrun`` command) with
    the arguments of torchrun mapped: ``--nproc`` -> ``--local_worker_num``, ``--nnodes`` x
    ``--nproc`` -> ``--worker_num``, ``--node-rank`` -> ``--node_rank``, ``--master-addr/-port`` ->
    ``--master_addr/--master_port`` (msrun's scheduler runs on the node whose address that is).

    msrun starts its workers as ``python SCRIPT ARGS`` with the ``python`` found on ``PATH``; when that
    is not this interpreter (a venv that is not activated), the command sets ``PATH`` so that it is.
    """
    t = args.training
    nproc, nnodes = int(t.nproc), int(getattr(t, "nnodes", 1) or 1)
    node_rank = int(getattr(t, "node_rank", 0) or 0)
    port = getattr(t, "master_port", None) or (MULTI_NODE_PORT if nnodes > 1 else free_port())
    command = [
        sys.executable,
        "-m",
        "mindspore.parallel.cluster.run",
        "--worker_num",
        str(nproc * nnodes),
        "--local_worker_num",
        str(nproc),
        "--node_rank",
        str(node_rank),
        "--master_addr",
        getattr(t, "master_addr", None) or "127.0.0.1",
        "--master_port",
        str(port),
        "--log_dir",
        str(Path(t.output_dir) / LOG_DIR),
        "--join",
        "True",
        # the console shows this node's first worker (each worker's whole log is in --log_dir)
        "--tail_worker_log",
        str(node_rank * nproc),
        "python",
        "-m",
        "openmind.core.cli.main",
        "train",
        *argv,
    ]
    found = shutil.which("python")
    if found is None or Path(found).parent != Path(sys.executable).parent:
        path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
        command = ["env", f"PATH={path}", *command]
    return command


def launched_by_msrun() -> bool:
    return os.environ.get(ROLE) in ("MS_SCHED", "MS_WORKER")


def join() -> tuple[int, int]:
    """``(rank, world_size)`` of this process: ``(0, 1)`` outside msrun; under msrun, joins the
    cluster (``mindspore.communication.init()``; the scheduler process ends there)."""
    if not launched_by_msrun():
        return 0, 1
    _stop_with_msrun()
    from mindspore.communication import get_group_size, get_rank, init

    init()  # the scheduler serves the cluster here and exits when the workers are done
    return int(get_rank()), int(get_group_size())


def _stop_with_msrun() -> None:
    """SIGTERM this process when msrun dies (even by SIGKILL): msrun starts its workers in sessions
    of their own and only stops them itself on SIGINT, so a killed launcher would otherwise leave
    them training into the run folder (Linux)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # msrun was already gone before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


class GradientSum:
    """Sums token-weighted gradients and the step's statistics across the ranks of the job."""

    def __init__(self, parameters: Any) -> None:
        import mindspore as ms
        from mindspore import ops
        from mindspore.nn import DistributedGradReducer

        self._reducer = DistributedGradReducer(parameters, mean=False)
        self._allreduce = ops.AllReduce()

        @ms.jit
        def reduce(grads):
            return self._reducer(grads)

        self._reduce = reduce

    def gradients(self, grads: tuple) -> tuple:
        import mindspore as ms

        return self._reduce(ms.mutable(grads))

    def numbers(self, loss_sum: float, *counts: int) -> tuple[float, ...]:
        """``loss_sum`` and integer ``counts``, each summed over the ranks. MindSpore 2.10's CPU
        AllReduce takes float32/float16 only (no float64, no int64: "Select CPU operator[AllReduce]
        fail! Unsupported data type!"), so each count travels as two float32 digits in base 4096,
        whose sums stay exact (below 2**24) up to 4096 ranks and 2**36 per count."""
        import numpy as np
        from mindspore import Tensor

        values = [loss_sum]
        for c in counts:
            values += [c >> 12, c & 4095]
        total = self._allreduce(Tensor(np.asarray(values, np.float32))).asnumpy().astype(np.float64)
        return (float(total[0]), *(int(total[1 + 2 * i]) * 4096 + int(total[2 + 2 * i]) for i in range(len(counts))))
