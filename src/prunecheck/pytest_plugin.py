"""pytest integration: the ``prunecheck`` fixture, its marker and ``--prunecheck-out``.

Installed as a pytest plugin (entry point ``pytest11``), so a user's suite
only writes::

    def test_trim_is_safe(prunecheck):
        prunecheck.assert_policy_safe("myapp/history.py:trim", format="openai")

``prunecheck.assert_policy_safe`` is :func:`prunecheck.assert_policy_safe`
(the one assertion helper) with two defaults filled in by pytest:

* the runtime: ``@pytest.mark.prunecheck(gate="commit", placements=["before_invoke"])``
  on a test, class or module gives default options for its checks (any of
  :func:`prunecheck.check_policy`'s: ``format``, ``gate``, ``config``,
  ``placements``, ``levels``, ``seeds``, ``max_examples``, …), and so does an
  indirect parameter, ``@pytest.mark.parametrize("prunecheck", [{...}],
  indirect=True``; the call's own keywords win;
* the bundle: ``pytest --prunecheck-out DIR`` writes each reproduction
  bundle to ``DIR/<test name>/``.  A rerun replaces the bundles this plugin
  wrote before (each carries a ``.prunecheck-pytest`` mark), and removes
  that of a test now safe; a folder holding anything else is refused unless
  ``--prunecheck-force``.

An unsafe policy fails the test as an ``AssertionError`` shown at the
test's own line: first the policy and its first violation, then where the
reproduction is, then the scenario table and the reproduction step by step
(no traceback into prunecheck).  A safe but vacuous policy passes with a
``prunecheck.PrunecheckVacuousWarning`` in pytest's warnings summary (what
the check never exercised); ``-W error::prunecheck.PrunecheckVacuousWarning``
fails such a test.  The fixture's old ``assert_safe`` is a
deprecated alias.  The heavy machinery is imported on first use only; a
harness the install left out fails the test with the one command that
installs it.

An agent loop is asserted with ``prunecheck.assert_loop_safe("loop:…", …)``
(:func:`prunecheck.assert_loop_safe`, any of :func:`prunecheck.check_loop`'s
options), its first unsafe class's bundle under ``--prunecheck-out`` as
above.  The fixture is a thin layer over the Python API: the same subject and
seed give the verdict, reproduction and bundle bytes ``prunecheck check``
gives, and the failure database is replayed first as everywhere (default
``$PRUNECHECK_FAILURES``, else ``.prunecheck/failures``; ``failures=False``
or ``PRUNECHECK_FAILURES=off`` for none).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from prunecheck.sim.api.verdict import CheckResult

__all__ = ["MARK", "PrunecheckFixture", "prunecheck", "pytest_addoption", "pytest_configure"]

#: The file that marks a bundle folder as this plugin's own (a rerun may replace it).
MARK = ".prunecheck-pytest"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("prunecheck", "prunecheck policy checks")
    group.addoption(
        "--prunecheck-out",
        metavar="DIR",
        default=None,
        help="write the reproduction bundle of every unsafe policy to DIR/<test name>/ "
        "(a rerun replaces the bundles it wrote before)",
    )
    group.addoption(
        "--prunecheck-force",
        action="store_true",
        default=False,
        help="let --prunecheck-out replace a DIR/<test name>/ folder that holds other files",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "prunecheck(**options): default check_policy options (format, gate, config, "
        "placements, levels, seeds, ...) for the prunecheck fixture's checks in this test",
    )
    out = config.getoption("prunecheck_out", None)
    if out:
        _check_out(Path(out))


def _check_out(out: Path) -> None:
    """Refuse a ``--prunecheck-out`` that no bundle could be written under
    (a file, a place that cannot be written, ``/proc``) before any test
    runs: one paragraph, pytest's usage error.  Nothing is left behind."""
    where = out
    while not where.exists() and where != where.parent:
        where = where.parent
    if not where.is_dir():
        what = "is a file" if where == out else f"is under {where}, which is a file"
        raise pytest.UsageError(
            f"--prunecheck-out {out}: {what}, not a folder; each unsafe test's bundle is "
            "written in a folder of its own inside it. Hint: give --prunecheck-out a folder "
            "(a new one is created)."
        )
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".prunecheck-probe-", dir=where))
    except OSError as exc:
        raise pytest.UsageError(
            f"--prunecheck-out {out}: bundles cannot be written there ({where}: "
            f"{exc.strerror or exc}). Hint: give --prunecheck-out a folder you can write to."
        ) from None


@contextmanager
def _one_paragraph(what: str) -> Iterator[None]:
    """A prunecheck error (bad input: a bad option, a policy or loop spec
    that is missing or raises, a bundle that cannot be written) fails the
    test with its one paragraph, without prunecheck's frames."""
    __tracebackhide__ = True
    try:
        yield
    except ModuleNotFoundError:
        raise
    except Exception as exc:
        from prunecheck.model.errors import PrunecheckError

        if not isinstance(exc, PrunecheckError):
            raise
        # from None: the paragraph once, not the error it replaces as well
        raise pytest.fail.Exception(f"{what}: {exc.paragraph()}", pytrace=False) from None


def _checked(options: dict[str, Any], where: str, extra: tuple[str, ...] = ()) -> None:
    """Fail the test (one paragraph) if ``options`` are not check_policy's."""
    __tracebackhide__ = True
    check_options: Callable[..., None] = _harness("check_options", "prunecheck.sim.api.options")
    with _one_paragraph(where):
        check_options(extra=extra, **options)


class PrunecheckFixture:
    """What the ``prunecheck`` fixture gives a test.

    Parameters
    ----------
    out : Path or None
        Where bundles go (``--prunecheck-out``), or None.
    test_name : str
        The test's name, as a folder name.
    options : dict
        Default options of every check (the marker's, then the indirect
        parameter's).
    force : bool
        ``--prunecheck-force``: replace a folder holding other files.
    """

    def __init__(
        self,
        out: Path | None,
        test_name: str,
        options: dict[str, Any] | None = None,
        *,
        force: bool = False,
    ) -> None:
        self.out = out
        self.test_name = test_name
        self.options = dict(options or {})
        self.force = force
        self._count = 0

    def check(self, policy: Any, **options: Any) -> CheckResult:
        """:func:`prunecheck.check_policy` with this test's default options."""
        __tracebackhide__ = True
        check_policy = _harness("check_policy")
        _checked(options, "prunecheck.check(...)")
        with _one_paragraph("prunecheck.check(...)"):
            return check_policy(policy, **{**self.options, **options})  # type: ignore[no-any-return]
        raise AssertionError("unreachable")  # pragma: no cover - pytest.fail raised

    def assert_policy_safe(self, policy: Any, **options: Any) -> CheckResult:
        """:func:`prunecheck.assert_policy_safe` with this test's default
        options and, under ``--prunecheck-out``, its bundle folder."""
        __tracebackhide__ = True
        assert_policy_safe = _harness("assert_policy_safe")
        unsafe = _harness("UnsafePolicy")
        _checked(options, "prunecheck.assert_policy_safe(...)")
        folder = self._bundle_dir()
        try:
            with _one_paragraph("prunecheck.assert_policy_safe(...)"):
                return assert_policy_safe(  # type: ignore[no-any-return]
                    policy,
                    bundle_dir=folder,
                    force=self.force,
                    _stacklevel=3,  # a vacuous safe's warning names the test's line
                    **{**self.options, **options},
                )
        except unsafe as exc:
            if exc.bundle is not None:
                (exc.bundle / MARK).write_text(f"{self.test_name}\n", encoding="utf-8")
            raise
        raise AssertionError("unreachable")  # pragma: no cover - pytest.fail raised

    def assert_loop_safe(self, agent: Any, **options: Any) -> Any:
        """:func:`prunecheck.assert_loop_safe` (an agent loop: a ``loop:`` spec or the
        agent) with, under ``--prunecheck-out``, its bundle folder."""
        __tracebackhide__ = True
        assert_loop_safe = _harness("assert_loop_safe")
        unsafe = _harness("UnsafeLoop")
        folder = self._bundle_dir()
        try:
            with _one_paragraph("prunecheck.assert_loop_safe(...)"):
                return assert_loop_safe(agent, bundle_dir=folder, force=self.force, **options)
        except unsafe as exc:
            if exc.bundle is not None:
                (exc.bundle / MARK).write_text(f"{self.test_name}\n", encoding="utf-8")
            raise
        raise AssertionError("unreachable")  # pragma: no cover - pytest.fail raised

    def assert_safe(self, policy: Any, **options: Any) -> CheckResult:
        """Deprecated alias of :meth:`assert_policy_safe` (one helper, one name)."""
        __tracebackhide__ = True
        from prunecheck._deprecated import RemovedIn040Warning

        warnings.warn(
            "prunecheck.assert_safe(...) is deprecated (removed in 0.4.0): call "
            "prunecheck.assert_policy_safe(...), the same helper as prunecheck.assert_policy_safe "
            "outside pytest.",
            RemovedIn040Warning,
            stacklevel=2,
        )
        return self.assert_policy_safe(policy, **options)

    def _bundle_dir(self) -> Path | None:
        """The next bundle folder of this test: a previous bundle of this
        plugin there is removed (it no longer holds); a folder holding
        other files is refused unless ``--prunecheck-force``."""
        __tracebackhide__ = True
        if self.out is None:
            return None
        self._count += 1
        folder = self.out / (self.test_name + (f"-{self._count}" if self._count > 1 else ""))
        if _ours(folder):
            shutil.rmtree(folder)
        elif folder.is_dir() and any(folder.iterdir()) and not self.force:
            pytest.fail(
                f"prunecheck: --prunecheck-out folder {folder} already holds files that this "
                "plugin did not write; a bundle never silently replaces them. Hint: give "
                "--prunecheck-out another folder, remove that one, or add --prunecheck-force.",
                pytrace=False,
            )
        return folder


def _ours(folder: Path) -> bool:
    """Is ``folder`` a bundle this plugin wrote (or began to write)?"""
    return (folder / MARK).is_file()


def _harness(name: str, module: str = "prunecheck") -> Any:
    """``<module>.<name>``, or fail the test saying which extra to install."""
    __tracebackhide__ = True
    import importlib

    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        from prunecheck.sim.support.extras import extra_of, missing_paragraph

        if extra_of(exc.name) is None:
            raise
        pytest.fail(missing_paragraph("the prunecheck fixture", exc.name or ""), pytrace=False)


@pytest.fixture
def prunecheck(request: pytest.FixtureRequest) -> PrunecheckFixture:
    """Check policies from a test: ``prunecheck.assert_policy_safe(policy, ...)``.

    Default options come from ``@pytest.mark.prunecheck(...)`` (the closest
    wins) and from an indirect parameter (a dict).
    """
    __tracebackhide__ = True
    options: dict[str, Any] = {}
    for mark in reversed(list(request.node.iter_markers("prunecheck"))):
        if mark.args:
            pytest.fail(
                f"prunecheck: @pytest.mark.prunecheck{mark.args!r} on {request.node.nodeid}: "
                "the marker takes keyword options only. Hint: "
                "@pytest.mark.prunecheck(gate='commit', placements=['before_invoke']).",
                pytrace=False,
            )
        _checked(dict(mark.kwargs), f"@pytest.mark.prunecheck on {request.node.nodeid}")
        options.update(mark.kwargs)
    param = getattr(request, "param", None)
    if param is not None:
        if not isinstance(param, dict):
            pytest.fail(
                f"prunecheck: the prunecheck fixture of {request.node.nodeid} was parametrized "
                f"with {param!r}: an indirect parameter is a dict of check_policy options. "
                "Hint: parametrize('prunecheck', [{'gate': 'commit'}], indirect=True).",
                pytrace=False,
            )
        _checked(param, f"the indirect parameter of {request.node.nodeid}")
        options.update(param)
    out = request.config.getoption("prunecheck_out")
    force = bool(request.config.getoption("prunecheck_force"))
    name = re.sub(r"[^\w.-]+", "_", request.node.name).strip("_") or "test"
    return PrunecheckFixture(Path(out) if out else None, name, options, force=force)
