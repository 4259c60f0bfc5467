"""CPU time of each test and of each test process, for ``make test-durations``.

The machine is shared: a test's wall-clock duration says as much about the
load beside it as about the test.  With ``PRUNECHECK_CPU_TIMES=PREFIX`` set,
tests/conftest.py loads the two hooks below, and each pytest process (each
xdist worker, or the one process of a serial run) writes ``PREFIX.<worker>.tsv``
when it ends: one line per test with its CPU seconds (the process's own,
user + system, and its waited-for children's, such as a subprocess of the
command line), then the process's whole CPU time (collection and imports
included), and the agent frameworks and heavy libraries the process
imported (each costs every process that imports it up to 2 s of CPU, see
``FRAMEWORKS``).  ``python tests/cpu_times.py PREFIX`` prints the sums, the
costliest tests and which process imported which framework.  CPU time is
summed over both cores, so it does not shrink or grow with the load beside
the run; it is what a test costs.
"""

from __future__ import annotations

import os
import resource
import sys
from pathlib import Path

import pytest

__all__ = ["main", "pytest_runtest_logfinish", "pytest_runtest_logstart", "pytest_unconfigure"]

#: Top-level modules each costing 0.4-2 s of CPU to import (an agent framework,
#: a provider SDK, a plotting or cluster library): a process that imports one
#: pays it once, and each xdist worker that runs a test of it pays it again.
FRAMEWORKS = (
    "agent_framework",
    "agents",
    "anthropic",
    "autogen",
    "autogen_agentchat",
    "dask",
    "google.adk",
    "langchain",
    "langgraph",
    "llama_index",
    "matplotlib",
    "mcp",
    "openai",
    "pydantic_ai",
    "strands",
)

_started: dict[str, tuple[float, float]] = {}
_rows: list[tuple[str, float, float]] = []


def _cpu() -> tuple[float, float]:
    """(this process's, its waited-for children's) user + system seconds."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def pytest_runtest_logstart(nodeid: str, location: object) -> None:
    _started[nodeid] = _cpu()


def pytest_runtest_logfinish(nodeid: str, location: object) -> None:
    own, kids = _started.pop(nodeid, (0.0, 0.0))
    now_own, now_kids = _cpu()
    _rows.append((nodeid, now_own - own, now_kids - kids))


def pytest_unconfigure(config: pytest.Config) -> None:
    prefix = os.environ.get("PRUNECHECK_CPU_TIMES")
    controller = not hasattr(config, "workerinput") and config.getoption("dist", "no") != "no"
    if not prefix or controller:  # xdist's controller runs no test: its workers report
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    own, kids = _cpu()
    lines = [f"{node}\t{a:.3f}\t{b:.3f}" for node, a, b in _rows]
    lines.append(f"#process\t{own:.3f}\t{kids:.3f}")
    lines.append("#imported\t" + " ".join(m for m in FRAMEWORKS if m in sys.modules))
    Path(f"{prefix}.{worker}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(prefix: str, top: int = 30) -> None:
    """Print the tests' summed CPU time, each process's, and the ``top`` costliest."""
    tests: list[tuple[float, str]] = []
    processes = 0.0
    imported: dict[str, list[str]] = {}
    for path in sorted(Path(prefix).parent.glob(Path(prefix).name + ".*.tsv")):
        worker = path.name.removeprefix(Path(prefix).name + ".").removesuffix(".tsv")
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("#imported\t"):
                for module in line.split("\t")[1].split():
                    imported.setdefault(module, []).append(worker)
                continue
            name, own, kids = line.split("\t")
            if name == "#process":
                processes += float(own) + float(kids)
            else:
                tests.append((float(own) + float(kids), name))
    tests.sort(reverse=True)
    for seconds, name in tests[:top]:
        print(f"{seconds:7.2f}s cpu  {name}")
    summed = sum(s for s, _ in tests)
    print(
        f"{len(tests)} tests, {summed:.0f} s of CPU in tests; the test processes took "
        f"{processes:.0f} s of CPU in all (collection and imports included; user + system)"
    )
    for module, workers in sorted(imported.items()):
        print(f"{module} imported by {len(workers)} process(es): {' '.join(workers)}")


if __name__ == "__main__":
    main(sys.argv[1])
