"""Starting math workers: forked from the fork server against a fresh interpreter each, in the same run.

Why: a pool starts a worker at its first use and after every item a time limit killed, and a process that
makes many pools (a label run's chunks, a test session, a reward server after cuts) starts many. A fresh
interpreter imports SymPy, latex2sympy and math-verify and warms their caches first (bounded._WARM_UP);
a forked worker has them from the server (verifiers/math/fork_server.py). This starts N workers each way,
one after another as a pool restarting after cuts would, each until it says ready, then kills it, and prints
the wall seconds and the CPU seconds of the started processes (the fork server's own start included on the
forked side) with the ratios.

    python -m bench.bench_worker_start [--workers N]
"""

from __future__ import annotations

import argparse
import resource
import time

from prm_factory.verifiers.math import bounded
from prm_factory.verifiers.math.bounded import PoolConfig, _Worker
from prm_factory.verifiers.math.fork_server import ForkServer


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _start(n: int, config: PoolConfig) -> tuple[float, float]:
    """Wall and CPU seconds of `n` workers started and killed one after another, each ready before it
    is killed. CPU: of the reaped children, a spawned worker directly, a forked one with the fork server
    that reaped it (stopped and reaped here before the count, its own start included)."""
    bounded.FORK_SERVER = server = ForkServer()  # this side's own server, started by its first worker
    cpu, wall = _children_cpu(), time.perf_counter()
    for _ in range(n):
        _Worker(config).kill()
    wall = time.perf_counter() - wall
    server.close()  # the server reaps its workers, then is reaped: their CPU counts on this side
    return wall, _children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=20)
    args = parser.parse_args()
    spawned = _start(args.workers, PoolConfig(fork_server=False))
    forked = _start(args.workers, PoolConfig(fork_server=True))
    print(f"{args.workers} workers started, each until ready, then killed")
    print(f"  fresh interpreters: {spawned[0]:7.2f} s wall, {spawned[1]:7.2f} s CPU")
    print(f"  fork server:        {forked[0]:7.2f} s wall, {forked[1]:7.2f} s CPU (its own start included)")
    ratios = spawned[0] / forked[0], spawned[1] / max(forked[1], 1e-9)
    print(f"  ratio (fresh / forked): wall {ratios[0]:.1f}x, CPU {ratios[1]:.1f}x")


if __name__ == "__main__":
    main()
