"""Sweeps on Dask against the local process pool, same worker count.

1. The same sweep (built-in policies × gates none/commit × load levels ×
   seeds) runs with ``--jobs 2`` (the process pool) and on a LocalCluster
   of two single-threaded worker processes already running (what
   ``--scheduler tcp://…`` meets), twice each, interleaved, best of two;
   the files must be byte-identical.  The cluster's start-up (what
   ``--scheduler local`` adds) is timed apart.
2. Per-task overhead: 400 tasks that do nothing, submitted and collected
   as the sweep does (``as_completed``), on the same cluster and on the
   same process pool; the wall time over the task count.

    python benchmarks/run.py --only dask [--quick]
"""

from __future__ import annotations

import logging
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import as_completed as pool_completed
from pathlib import Path
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.gates import Gate
from prunecheck.model.policies import BUILTINS
from prunecheck.sim.sweeps.sweep import configs, plan, run_sweep

__all__ = ["TITLE", "run"]

TITLE = "Sweeps on Dask against the process pool"

WORKERS = 2
NOOPS = 400
_REPEATS = 2


def _noop(i: int) -> int:
    return i


def _noop_seconds_pool() -> float:
    with ProcessPoolExecutor(max_workers=WORKERS) as pool:
        list(pool.map(_noop, range(WORKERS * 4)))  # workers started
        started = time.perf_counter()
        futures = [pool.submit(_noop, i) for i in range(NOOPS)]
        for future in pool_completed(futures):
            future.result()
        return (time.perf_counter() - started) / NOOPS


def _noop_seconds_dask(client: Any) -> float:
    from distributed import as_completed

    started = time.perf_counter()
    futures = [client.submit(_noop, i, pure=False) for i in range(NOOPS)]
    for future in as_completed(futures):
        future.result()
    return (time.perf_counter() - started) / NOOPS


def run(quick: bool) -> str:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        return "Dask is not installed (pip install 'prunecheck[dask]'): nothing measured.\n"
    runtime = configs(RuntimeConfig(), gates=(Gate.NONE, Gate.COMMIT))
    levels = [0.5, 1.0] if quick else [0.25, 0.5, 0.75, 1.0]
    horizon = 120.0 if quick else 300.0
    specs = plan(list(BUILTINS), runtime, levels, [1, 2], horizon=horizon)
    pool_s = dask_s = float("inf")
    same = True
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        with (
            LocalCluster(
                n_workers=WORKERS,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=logging.ERROR,
            ) as cluster,
            Client(cluster) as client,
        ):
            client.wait_for_workers(WORKERS)
            boot_s = time.perf_counter() - started
            for rep in range(_REPEATS):  # interleaved, best of each
                started = time.perf_counter()
                run_sweep(specs, folder / f"pool{rep}.jsonl", jobs=WORKERS, quiet=True)
                pool_s = min(pool_s, time.perf_counter() - started)
                started = time.perf_counter()
                run_sweep(
                    specs,
                    folder / f"dask{rep}.jsonl",
                    quiet=True,
                    scheduler=cluster.scheduler_address,
                )
                dask_s = min(dask_s, time.perf_counter() - started)
                same = (
                    same
                    and (folder / f"pool{rep}.jsonl").read_bytes()
                    == (folder / f"dask{rep}.jsonl").read_bytes()
                )
            dask_task = _noop_seconds_dask(client)
        pool_task = _noop_seconds_pool()
    runs = len(specs)
    lines = [
        f"{runs} runs ({len(BUILTINS)} built-in policies × gates none/commit × "
        f"{len(levels)} load levels × 2 seeds, {horizon:g} simulated s each), "
        f"{WORKERS} workers each way; best of {_REPEATS}, interleaved.  Files byte-identical: "
        f"**{'yes' if same else 'NO'}**.",
        "",
        "| executor | wall s | ms per run | vs process pool |",
        "|---|---|---|---|",
        f"| process pool (`--jobs {WORKERS}`) | {pool_s:.1f} | {pool_s / runs * 1e3:.0f} | 1.00× |",
        f"| LocalCluster, already running (`--scheduler tcp://…`) | {dask_s:.1f} | "
        f"{dask_s / runs * 1e3:.0f} | **{dask_s / pool_s:.2f}×** |",
        f"| LocalCluster incl. its start-up (`--scheduler local`) | {dask_s + boot_s:.1f} | "
        f"{(dask_s + boot_s) / runs * 1e3:.0f} | {(dask_s + boot_s) / pool_s:.2f}× |",
        "",
        f"Per-task overhead ({NOOPS} no-op tasks, submitted and collected as a sweep does): "
        f"Dask **{dask_task * 1e3:.2f} ms** a task, the process pool {pool_task * 1e3:.2f} ms; "
        f"starting the LocalCluster took {boot_s:.1f} s.",
    ]
    return "\n".join(lines) + "\n"
