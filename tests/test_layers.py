"""The layering contract of pyproject.toml ([tool.importlinter], run by
``lint-imports`` in ``make lint``): it holds on the real import graph, and
each kind of contract breaks when one forbidden import is added to that
graph (nothing is copied or written: the import exists only in the graph)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import grimp
import pytest
from importlinter.application.app_config import settings
from importlinter.application.use_cases import lint_imports
from importlinter.configuration import configure

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


@functools.cache
def _real_graph(
    root_package_names: tuple[str, ...],
    include_external_packages: bool,
    exclude_type_checking_imports: bool,
) -> grimp.ImportGraph:
    """The real import graph, built once per process (the tree does not
    change while the tests run; building it is most of a lint's cost):
    each lint gets its own copy to add imports to."""
    return grimp.build_graph(
        *root_package_names,
        include_external_packages=include_external_packages,
        exclude_type_checking_imports=exclude_type_checking_imports,
        cache_dir=None,
    )


class _GraphWith:
    """import-linter's graph builder: the real graph of the installed
    package, plus ``extra`` imports (importer, imported)."""

    def __init__(self, extra: Sequence[tuple[str, str]]) -> None:
        self.extra = extra

    def build(
        self,
        root_package_names: list[str],
        cache_dir: str | None,
        include_external_packages: bool = False,
        exclude_type_checking_imports: bool = False,
    ) -> grimp.ImportGraph:
        graph = copy.deepcopy(
            _real_graph(
                tuple(root_package_names), include_external_packages, exclude_type_checking_imports
            )
        )
        for importer, imported in self.extra:
            assert importer in graph.modules, importer  # the test names real modules
            graph.add_import(
                importer=importer,
                imported=imported,
                line_number=1,
                line_contents=f"import {imported}  # injected by the test",
            )
        return graph


@pytest.fixture
def lint(capsys: pytest.CaptureFixture[str]) -> Iterator[Any]:
    """``lint(extra, contract=None)``: (passed, report) of ``lint-imports``
    on pyproject.toml's contracts (or the one named), with the real graph
    plus ``extra``."""
    configure()
    builder = settings.GRAPH_BUILDER

    def run(extra: Sequence[tuple[str, str]] = (), contract: str | None = None) -> tuple[bool, str]:
        settings.configure(GRAPH_BUILDER=_GraphWith(extra))
        capsys.readouterr()
        passed = lint_imports(
            str(PYPROJECT),
            limit_to_contracts=(contract,) if contract else (),
            cache_dir=None,
            is_debug_mode=True,
            no_logo=True,
        )
        return passed, " ".join(capsys.readouterr().out.split())

    yield run
    settings.configure(GRAPH_BUILDER=builder)


def test_the_contract_holds_on_the_real_tree(lint: Any) -> None:
    passed, report = lint()
    assert passed, report
    assert "Contracts: 9 kept, 0 broken." in report


@pytest.mark.parametrize(
    ("extra", "broken", "named"),
    [
        # a lower sim layer imports the command line: upward
        (
            [("prunecheck.sim.stats.intervals", "prunecheck.sim.cli.app")],
            "sim-layers",
            "prunecheck.sim.stats.intervals -> prunecheck.sim.cli.app",
        ),
        # the model imports the shell
        (
            [("prunecheck.model.trace", "prunecheck.sim.support.progress")],
            "core-under-shell",
            "prunecheck.model.trace -> prunecheck.sim.support.progress",
        ),
        # the runtime-side guard imports the simulator
        (
            [("prunecheck.guard.core", "prunecheck.sim.drivers.simulator")],
            "core-under-shell",
            "prunecheck.guard.core -> prunecheck.sim.drivers.simulator",
        ),
        # the model imports SimPy
        (
            [("prunecheck.model.context", "simpy")],
            "model-pure",
            "prunecheck.model.context -> simpy",
        ),
        # a driver imports an implementation of the System it drives
        (
            [("prunecheck.sim.drivers.explore", "prunecheck.sim.subjects.runtimes.judged")],
            "drivers-take-a-system",
            "prunecheck.sim.drivers.explore -> prunecheck.sim.subjects.runtimes.judged",
        ),
        # a driver calls the model's step function instead of the System's apply
        (
            [("prunecheck.sim.drivers.search_machine", "prunecheck.model.runtime")],
            "drivers-take-a-system",
            "prunecheck.sim.drivers.search_machine -> prunecheck.model.runtime",
        ),
        # the loop subject grows a search of its own
        (
            [("prunecheck.sim.subjects.loops.scenarios", "hypothesis")],
            "loops-are-a-subject",
            "prunecheck.sim.subjects.loops.scenarios -> hypothesis",
        ),
        # ... or a shrinker of its own
        (
            [("prunecheck.sim.subjects.loops.system", "prunecheck.sim.drivers.shrinking")],
            "loops-are-a-subject",
            "prunecheck.sim.subjects.loops.system -> prunecheck.sim.drivers.shrinking",
        ),
        # ... or writes bundles itself
        (
            [("prunecheck.sim.subjects.loops.ledger", "prunecheck.sim.support.outputs")],
            "loops-are-a-subject",
            "prunecheck.sim.subjects.loops.ledger -> prunecheck.sim.support.outputs",
        ),
        # a runtime under test reaches up into the policy adapters
        (
            [("prunecheck.sim.subjects.runtimes.judged", "prunecheck.sim.subjects.loader")],
            "subjects-layers",
            "prunecheck.sim.subjects.runtimes.judged -> prunecheck.sim.subjects.loader",
        ),
        # one command module imports another
        (
            [("prunecheck.sim.cli.regress", "prunecheck.sim.cli.check")],
            "cli-commands-independent",
            "prunecheck.sim.cli.regress -> prunecheck.sim.cli.check",
        ),
        # two modules of one package import each other
        (
            [
                ("prunecheck.sim.cli.commands", "prunecheck.sim.cli.formats"),
                ("prunecheck.sim.cli.formats", "prunecheck.sim.cli.commands"),
            ],
            "no-loops",
            "No cycles are allowed in prunecheck.sim.cli",
        ),
    ],
)
def test_the_contract_breaks_on_one_injected_import(
    lint: Any, extra: list[tuple[str, str]], broken: str, named: str
) -> None:
    passed, report = lint(extra, broken)
    assert not passed
    assert "1 broken" in report and named in report, report
    passed, report = lint((), broken)  # the same contract, without the injected import
    assert passed, report
