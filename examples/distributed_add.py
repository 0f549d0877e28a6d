"""A tilecc kernel inside a two-process torch.distributed (NCCL) program.

    python examples/distributed_add.py

Each of two processes (torch.multiprocessing.spawn) takes its own GPU, runs the vector-add
kernel of examples/vector_add.py on tensors there — tilecc launches on the device of its
arguments, on torch's current stream — and the results are summed across the processes with
an NCCL all_reduce, then checked exactly against NumPy on every rank.  With fewer than two
GPUs (or without torch, or NCCL) it says so and exits cleanly.
"""

import os
import socket
import sys

import numpy as np

import tilecc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vector_add import add_kernel  # noqa: E402

WORLD_SIZE = 2
N = (1 << 20) + 3  # a partial last block; every value an integer below 2**24: sums are exact


def expected(world_size: int) -> np.ndarray:
    """Rank r adds (r + 1) and arange(N); the all_reduce sums that over the ranks."""
    ranks = np.arange(world_size, dtype=np.float32)
    return (ranks + 1).sum() + world_size * np.arange(N, dtype=np.float32)


def worker(rank: int, world_size: int, port: int) -> None:
    import torch
    import torch.distributed as dist

    device = torch.device("cuda", rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world_size, device_id=device)
    try:
        x = torch.full((N,), float(rank + 1), dtype=torch.float32, device=device)
        y = torch.arange(N, dtype=torch.float32, device=device)
        out = torch.empty_like(x)
        add_kernel[(tilecc.cdiv(N, 1024),)](x, y, out, N, BLOCK_SIZE=1024)
        dist.all_reduce(out)  # NCCL waits for the kernel: both run on the current stream
        if not np.array_equal(out.cpu().numpy(), expected(world_size)):
            raise SystemExit(f"rank {rank}: the all-reduced sum does not match NumPy")
        dist.barrier()
        if rank == 0:
            print(f"// ran add_kernel on {world_size} GPUs (one process each), all_reduce "
                  f"over NCCL: n = {N}, result matches NumPy exactly on every rank")
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    try:
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp
    except ImportError:
        print("// skipped: this example needs torch (pip install torch)")
        return
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if gpus < WORLD_SIZE or not dist.is_available() or not dist.is_nccl_available():
        print(f"// skipped: this example needs {WORLD_SIZE} CUDA GPUs and NCCL "
              f"(found {gpus} GPU{'s' if gpus != 1 else ''})")
        return
    mp.spawn(worker, args=(WORLD_SIZE, _free_port()), nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()
