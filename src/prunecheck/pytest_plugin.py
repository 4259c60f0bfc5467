"""pytest integration: the ``prunecheck`` fixture and ``--prunecheck-out``.

Installed as a pytest plugin (entry point ``pytest11``), so a user's suite
only writes::

    def test_trim_is_safe(prunecheck):
        prunecheck.assert_safe("myapp/history.py:trim", format="openai")

An unsafe policy fails the test with the scenario table and the minimal
reproduction narrated step by step (no traceback into prunecheck);
``pytest --prunecheck-out DIR`` also writes each reproduction bundle to
``DIR/<test name>/``.  The heavy machinery is imported on first use only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from prunecheck.sim.verdicts.verdict import CheckResult

__all__ = ["PrunecheckFixture", "prunecheck", "pytest_addoption"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("prunecheck", "prunecheck policy checks")
    group.addoption(
        "--prunecheck-out",
        metavar="DIR",
        default=None,
        help="write the reproduction bundle of every unsafe policy to DIR/<test name>/",
    )


class PrunecheckFixture:
    """What the ``prunecheck`` fixture gives a test."""

    def __init__(self, out: Path | None, test_name: str) -> None:
        self.out = out
        self.test_name = test_name
        self._count = 0

    def check(self, policy: Any, **options: Any) -> CheckResult:
        """:func:`prunecheck.check_policy` with the same arguments."""
        from prunecheck.sim.verdicts.check import check_policy

        return check_policy(policy, **options)

    def assert_safe(self, policy: Any, **options: Any) -> CheckResult:
        """Check ``policy``; fail the test with the minimal reproduction
        unless it is safe."""
        from prunecheck.sim.verdicts.check import failure_report

        result = self.check(policy, **options)
        if result.safe:
            return result
        bundle = None
        if self.out is not None and result.reproduction is not None:
            self._count += 1
            name = self.test_name + (f"-{self._count}" if self._count > 1 else "")
            bundle = result.bundle(self.out / name)
        pytest.fail(failure_report(result, bundle), pytrace=False)


@pytest.fixture
def prunecheck(request: pytest.FixtureRequest) -> PrunecheckFixture:
    """Check policies from a test: ``prunecheck.assert_safe(policy, ...)``."""
    out = request.config.getoption("prunecheck_out")
    name = re.sub(r"[^\w.-]+", "_", request.node.name).strip("_") or "test"
    return PrunecheckFixture(Path(out) if out else None, name)
