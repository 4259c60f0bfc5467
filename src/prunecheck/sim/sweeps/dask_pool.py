"""Sweeps on a Dask cluster: ``--scheduler tcp://HOST:PORT`` or ``--scheduler local``.

:func:`run_on_dask` is the executor :func:`~.sweep.run_sweep` hands its runs
to when a scheduler is given; rows stream back as they finish
(``as_completed``) into the same resumable results file, which is sorted
at the end: for the same seeds it is byte-identical to the local pool's.

* ``local`` starts a ``LocalCluster`` of ``--jobs`` single-threaded worker
  processes on 127.0.0.1; ``tcp://HOST:PORT`` uses an existing
  ``dask.distributed`` scheduler and whatever workers it has (start them
  with ``dask scheduler`` and ``dask worker tcp://HOST:PORT``).  Workers
  need prunecheck installed (the same version: a run's key names the
  simulator's source digest, computed here, not there).
* A user's policy file travels with its tasks: its source, keyed by its
  SHA-256, is written once per worker under the worker's temporary folder
  and loaded from there, so a worker that cannot see the file by its path
  (another machine, another working directory) still runs it.  Only the
  file travels: a policy that imports modules of its own needs them
  installed on the workers.  ``module:attr`` specs must be importable
  there too.
* A worker that dies loses nothing finished: every row the client has
  received is already in the file, and the scheduler runs the dead
  worker's tasks again on the others.  A run that kills three workers in
  turn (Dask's ``allowed-failures``) stops the sweep, its finished runs
  saved, like a crash in the local pool.

* ``--policy-timeout`` is not enforced on Dask: the limit uses SIGALRM,
  which only a main thread receives, and workers run tasks in threads.

Dask is an optional extra (``pip install 'prunecheck[dask]'``); nothing
here imports it until a scheduler is used.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from prunecheck.model.errors import ConfigError, PolicyError
from prunecheck.sim.subjects.policy_spec import user_code_of
from prunecheck.sim.sweeps.runs import Row, RunSpec, work

__all__ = [
    "LOCAL",
    "ShippedPolicy",
    "add_scheduler_option",
    "parse_scheduler",
    "run_on_dask",
    "ship_policies",
]

#: The ``--scheduler`` value that starts a LocalCluster.
LOCAL = "local"
#: Seconds to wait for a ``tcp://`` scheduler to answer.
CONNECT_TIMEOUT = 10.0
_HINT = "give --scheduler local, or the address of a running scheduler, tcp://HOST:PORT."


def add_scheduler_option(p: argparse.ArgumentParser) -> None:
    """The ``--scheduler`` option of ``sweep`` and ``report``."""
    p.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="run on Dask: 'local' (a LocalCluster of --jobs workers) or "
        "tcp://HOST:PORT (a running dask scheduler); needs prunecheck[dask]. "
        "Default: the local process pool",
    )


def parse_scheduler(value: str | None) -> str | None:
    """``value`` checked: None, ``local`` or ``tcp://HOST:PORT``; ConfigError
    naming the value otherwise, or when Dask is not installed."""
    if value is None:
        return None
    text = value.strip()
    if text != LOCAL:
        host, _, port = text.removeprefix("tcp://").rpartition(":")
        if (
            not text.startswith("tcp://")
            or not host
            or not port.isdigit()
            or not 0 < int(port) < 65536
        ):
            raise ConfigError(
                "--scheduler", f"{value!r} is neither 'local' nor tcp://HOST:PORT.", _HINT
            )
    try:
        _distributed()
    except ImportError:
        raise ConfigError(
            "--scheduler",
            "needs Dask, which is not installed.",
            "pip install 'prunecheck[dask]' (or leave --scheduler out to use "
            "the local process pool).",
        ) from None
    return text


def _distributed() -> Any:
    """``dask.distributed``, imported on first use (it is an optional extra)."""
    return importlib.import_module("distributed")


@dataclass(frozen=True, slots=True)
class ShippedPolicy:
    """A policy file's source, sent with its tasks.

    Attributes
    ----------
    where: the file as the spec names it (``where`` of ``where:attr``).
    name: its file name.
    digest: SHA-256 of ``source`` (hex): the folder it is written to.
    source: the file's bytes.
    """

    where: str
    name: str
    digest: str
    source: bytes


def _file_part(spec: str) -> str | None:
    """The file a policy spec names, or None (built-in, module, langchain)."""
    parsed = user_code_of(spec)
    return parsed.where if parsed is not None and parsed.is_file else None


def ship_policies(specs: Iterable[RunSpec]) -> dict[str, ShippedPolicy]:
    """The sources of the policy files ``specs`` name, by policy spec (a
    file that cannot be read is left out: its runs record the load error)."""
    out: dict[str, ShippedPolicy] = {}
    for policy in dict.fromkeys(s.policy for s in specs):
        where = _file_part(policy)
        if where is None:
            continue
        try:
            source = Path(where).read_bytes()
        except OSError:
            continue
        out[policy] = ShippedPolicy(
            where, Path(where).name, hashlib.sha256(source).hexdigest(), source
        )
    return out


def _materialise(shipped: ShippedPolicy) -> Path:
    """The worker-local copy of a shipped file (written once, atomically)."""
    folder = Path(tempfile.gettempdir()) / "prunecheck-policies" / shipped.digest
    path = folder / shipped.name
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{shipped.name}.{os.getpid()}.tmp"
        tmp.write_bytes(shipped.source)
        os.replace(tmp, path)
    return path


def _task(spec: RunSpec, key: str, timeout: float, shipped: ShippedPolicy | None) -> Row:
    """One run on a worker; the row carries the client's spec and key."""
    if shipped is None:
        return replace(work(spec, timeout), key=key, spec=spec)
    local = str(_materialise(shipped))
    parsed = user_code_of(spec.policy)
    tail = parsed.tail if parsed is not None else spec.policy
    row = work(replace(spec, policy=local + tail), timeout)
    error = None if row.error is None else row.error.replace(local, shipped.where)
    return replace(row, key=key, spec=spec, error=error)


@contextmanager
def _client(scheduler: str, jobs: int) -> Iterator[Any]:
    import logging

    dd = _distributed()
    if scheduler == LOCAL:
        with (
            dd.LocalCluster(
                n_workers=jobs,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=logging.ERROR,
            ) as cluster,
            dd.Client(cluster) as client,
        ):
            yield client
        return
    try:
        client = dd.Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise ConfigError(
            "--scheduler",
            f"cannot reach a Dask scheduler at {scheduler} ({type(exc).__name__}: {exc}).",
            "start one with 'dask scheduler' and workers with 'dask worker "
            f"{scheduler}', or give --scheduler local.",
        ) from None
    with client:
        yield client


def run_on_dask(
    todo: Sequence[RunSpec], scheduler: str, jobs: int, timeout: float, keep: Callable[[Row], None]
) -> None:
    """Run ``todo`` on the cluster at ``scheduler`` (``local``: a
    LocalCluster of ``jobs`` workers), calling ``keep`` with each row as it
    arrives.  Runs are submitted in ``todo``'s order as priority (heaviest
    first in a sweep).

    Raises
    ------
    ConfigError
        if the scheduler cannot be reached.
    PolicyError
        if a run keeps killing the workers it lands on, or the cluster is
        lost; the rows already kept are in the file, and rerunning resumes.
    """
    if not todo:
        return
    as_completed = _distributed().as_completed
    shipped = ship_policies(todo)
    with _client(scheduler, jobs) as client:
        futures = {
            client.submit(
                _task,
                spec,
                spec.key,
                timeout,
                shipped.get(spec.policy),
                key=f"prunecheck-run-{spec.key}",
                priority=len(todo) - i,
                retries=0,
                pure=False,
            ): spec
            for i, spec in enumerate(todo)
        }
        try:
            for future in as_completed(futures):
                spec = futures.pop(future)
                try:
                    row = future.result()
                except Exception as exc:
                    raise PolicyError(
                        "sweep",
                        f"Dask could not run {spec.key} ({type(exc).__name__}: {exc}); "
                        "the finished runs are saved.",
                        "a run that kills every worker it lands on (a policy that exits or "
                        "exhausts memory?) shows its failure with --jobs 1; rerunning the same "
                        "command resumes.",
                    ) from None
                keep(row)
                future.release()
        except BaseException:
            client.cancel(list(futures))
            raise
