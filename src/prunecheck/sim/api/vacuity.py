"""Vacuity, printed: what a *safe* did not exercise, and which flag widens it.

A driver's :class:`~prunecheck.sim.drivers.coverage.Coverage` names its
gaps (:class:`~prunecheck.sim.drivers.coverage.Gap`); this module words
them for a command — ``check``, ``search`` or ``explore`` have different
flags — as the verdict's clause: "safe, but vacuous: the policy never
proposed anything when asked to free tokens (widen: …)".

A vacuous safe keeps exit status 0 (it is no violation, and a CI job that
checks a conservative policy must not turn red by default); with
``--fail-vacuous`` the command exits 4 instead
(:mod:`prunecheck.sim.cli.limits`).  From Python, ``assert_policy_safe``
(and the pytest fixture's) passes a vacuous safe with a
:class:`PrunecheckVacuousWarning`, which pytest lists in its warnings
summary; ``pytest -W error::prunecheck.PrunecheckVacuousWarning`` (or
``filterwarnings``) makes it fail the test.

Examples
--------
>>> from prunecheck.sim.drivers.coverage import Coverage
>>> print(vacuous_clause(Coverage(checks=3), "explore").split(":")[0])
safe, but vacuous
"""

from __future__ import annotations

from prunecheck.sim.drivers.coverage import Coverage, Gap

__all__ = ["HINTS", "PrunecheckVacuousWarning", "vacuous_clause"]

_CHECK = {
    Gap.NO_PRESSURE: "a smaller --budget, higher --levels",
    Gap.NO_PROPOSAL: "a smaller --budget asks more of it; a policy that never frees "
    "anything is judged on nothing",
    Gap.NO_LIVE_PRESSURE: "--check-at after_append, a smaller --budget",
    Gap.NO_LIVE_PROPOSAL: "a smaller --budget, more --seeds or --max-examples",
    Gap.NO_MID_BATCH_MESSAGE: "higher --levels, a longer --horizon",
    Gap.NO_OPEN_CHECK: "--check-at after_append",
}
_SEARCH = {
    Gap.NO_PRESSURE: "a smaller --budget, larger --sizes",
    Gap.NO_PROPOSAL: _CHECK[Gap.NO_PROPOSAL],
    Gap.NO_LIVE_PRESSURE: "--max-calls 2, --max-chunks 2, a smaller --budget",
    Gap.NO_LIVE_PROPOSAL: "--max-users 2, a larger --max-steps, more --max-examples",
    Gap.NO_MID_BATCH_MESSAGE: "--max-users 2, a larger --max-steps",
    Gap.NO_OPEN_CHECK: "--max-chunks 2 with --check-at after_append",
}
_EXPLORE = {
    Gap.NO_PRESSURE: "a larger --depth, larger --sizes or a smaller --budget",
    Gap.NO_PROPOSAL: "--max-users 2 and a larger --depth",
    Gap.NO_LIVE_PRESSURE: "a larger --depth, larger --sizes, --max-calls 2",
    Gap.NO_LIVE_PROPOSAL: "--max-users 2 (a message after the batch's), a larger --depth",
    Gap.NO_MID_BATCH_MESSAGE: "--max-users 2 and a larger --depth",
    Gap.NO_OPEN_CHECK: "--max-chunks 2 with --check-at after_append",
}


class PrunecheckVacuousWarning(UserWarning):
    """A check passed, but vacuously: the policy never faced what the
    invariant is about (it never proposed anything under pressure, or no run
    produced an interleaving the invariant concerns).  ``assert_policy_safe``
    warns with it; its message is the verdict's "safe, but vacuous" clause.
    To fail such a test instead: ``pytest -W
    error::prunecheck.PrunecheckVacuousWarning``, or
    ``warnings.simplefilter("error", PrunecheckVacuousWarning)``."""


# pytest's -W and filterwarnings name it as it is imported: ``prunecheck.PrunecheckVacuousWarning``.
PrunecheckVacuousWarning.__module__ = "prunecheck"

#: Per command, the flags that widen each gap.
HINTS: dict[str, dict[Gap, str]] = {"check": _CHECK, "search": _SEARCH, "explore": _EXPLORE}


def vacuous_clause(coverage: Coverage | None, command: str) -> str | None:
    """The verdict's vacuity clause, or None if nothing went unexercised.

    Parameters
    ----------
    coverage : Coverage or None
        What the command exercised (None: not measured, e.g. a replayed
        saved failure).
    command : str
        ``check``, ``search`` or ``explore``: whose flags the hints name.

    Returns
    -------
    str or None
        ``"safe, but vacuous: <what was never exercised> (widen: <flags>); …"``.
    """
    if coverage is None:
        return None
    found = coverage.gaps()
    if not found:
        return None
    hints = HINTS.get(command, _CHECK)
    parts = [f"{gap.describe(coverage)} (widen: {hints[gap]})" for gap in found]
    return "safe, but vacuous: " + "; ".join(parts)
