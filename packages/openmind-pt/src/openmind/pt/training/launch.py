"""Multi-process training: re-run ``openmind train`` under torchrun (DDP).

On CPU the processes talk through gloo, on CUDA through NCCL and on Ascend through HCCL
(torch_npu); transformers/accelerate pick the backend from the device. DeepSpeed and FSDP
configurations are passed to the Trainer (accelerate) unchanged.
"""

from __future__ import annotations

import socket
import sys
from typing import Any


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def torchrun_command(args: Any, argv: list[str]) -> list[str]:
    """``python -m torch.distributed.run --nproc-per-node N ... -m openmind.core.cli.main train ARGV``.

    ``argv`` is what the workers run after ``train`` (the saved arguments file of the run).
    Multi-node (``nnodes > 1``): torchrun's static rendezvous on ``master_addr:master_port``; every
    node runs the same ``openmind train`` command with its own ``--node-rank``.
    """
    t = args.training
    nproc, nnodes = int(t.nproc), int(getattr(t, "nnodes", 1) or 1)
    port = getattr(t, "master_port", None) or (29500 if nnodes > 1 else free_port())
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nnodes",
        str(nnodes),
        "--node-rank",
        str(int(getattr(t, "node_rank", 0) or 0)),
        "--nproc-per-node",
        str(nproc),
        "--master-addr",
        getattr(t, "master_addr", None) or "127.0.0.1",
        "--master-port",
        str(port),
        "-m",
        "openmind.core.cli.main",
        "train",
        *argv,
    ]
