"""The shell: drivers, sweeps, reports, user-code adapters and the command line.

Subpackages, from the command line down (nothing imports upward; ``make lint``
checks it): ``cli`` → ``reports`` → ``verdicts`` | ``sweeps`` → ``drivers`` |
``reproductions`` → ``adapters`` → ``runtimes`` → ``stats`` | ``support``,
and all of them → :mod:`prunecheck.model`.

Modules that lived directly in ``prunecheck.sim`` before 0.2 stay importable
under their old names (``prunecheck.sim.stimuli``, ``prunecheck.sim.loading``,
…): each old name is an alias of the module's new home, with a
:class:`DeprecationWarning`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

__all__: list[str] = []

#: Old module name under ``prunecheck.sim`` → its home since 0.2.
MOVED: dict[str, str] = {
    "agents": "drivers.agents",
    "argtypes": "cli.argtypes",
    "bundle": "reproductions.bundle",
    "cage": "adapters.cage",
    "cage_worker": "adapters.cage_worker",
    "check": "verdicts.check",
    "cliargs": "cli.runtime_options",
    "cmd_baseline": "cli.baseline",
    "cmd_check": "cli.check",
    "cmd_explore": "cli.explore",
    "cmd_policies": "cli.policies",
    "cmd_regress": "cli.regress",
    "cmd_replay": "cli.replay",
    "cmd_report": "cli.report",
    "cmd_search": "cli.search",
    "cmd_sweep": "cli.sweep",
    "cmd_validate": "cli.validate",
    "dask_pool": "sweeps.dask_pool",
    "explore": "drivers.explore",
    "fingerprints": "drivers.fingerprints",
    "formats": "cli.formats",
    "frameworks": "adapters.frameworks",
    "frameworks.content": "adapters.sized_content",
    "frameworks.readback": "adapters.list_actions",
    "frameworks.table": "reports.frameworks",
    "guard_runtime": "runtimes.guard_runtime",
    "judge": "runtimes.judge",
    "langchain_trim": "adapters.langchain_trim",
    "ledger": "support.ledger",
    "limits": "cli.limits",
    "load": "drivers.workload",
    "loading": "adapters.loader",
    "model_runtime": "runtimes.model_runtime",
    "narrative": "reproductions.narrative",
    "placements": "verdicts.verdict",
    "progress": "support.progress",
    "regress": "verdicts.regress",
    "report": "reports.writer",
    "search": "drivers.search",
    "sessions": "stats.sessions",
    "shape": "drivers.shape",
    "shrink": "drivers.shrink",
    "simulator": "drivers.simulator",
    "stimuli": "runtimes.stimuli",
    "strict": "verdicts.strict",
    "summary": "reports.summary",
    "summary_tables": "reports.tables",
    "survival": "stats.survival",
    "swarm": "drivers.swarm",
    "sweep": "sweeps.sweep",
    "timeline": "reproductions.timeline",
    "trace_file": "reproductions.trace_file",
    "tripwire": "adapters.tripwire",
    "under_test": "runtimes.under_test",
    "world": "drivers.world",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``import prunecheck.sim.<old name>`` with the moved module."""

    _PREFIX = __name__ + "."

    def _new_name(self, fullname: str) -> str | None:
        if not fullname.startswith(self._PREFIX):
            return None
        old = fullname[len(self._PREFIX) :]
        for name in sorted(MOVED, key=len, reverse=True):
            if old == name or old.startswith(name + "."):
                return self._PREFIX + MOVED[name] + old[len(name) :]
        return None

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if self._new_name(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = self._new_name(spec.name)
        assert new is not None
        warnings.warn(
            f"{spec.name} moved to {new}; import it from there", DeprecationWarning, stacklevel=2
        )
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """The module was executed under its new name already."""


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedModules())  # before the path finder: no second copies
