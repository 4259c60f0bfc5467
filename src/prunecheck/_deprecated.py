"""Everything kept for users of 0.2.0, and the release that removes it.

In the manner of pytest's ``_pytest/deprecated.py``: the deprecation
warnings live in this one module, so that what goes in which release is one
list to read, and removing it one list to delete.  Every constant is a
warning (or an :class:`UnformattedWarning`, formatted where it is given) of
a category named after its removal release.

What a user of 0.2.0 imported, and how 0.3 keeps it:

* the top-level API (``check_policy``, ``assert_policy_safe``,
  ``list_policy``, ``CheckResult``, ``UnsafePolicy``, ``Verdict``,
  ``__version__``): unchanged in :mod:`prunecheck`;
* :mod:`prunecheck.model.actions` and the policy view
  (:class:`~prunecheck.model.policies.ContextView`): unchanged;
* the pytest plugin (the ``prunecheck`` fixture, ``--prunecheck-out``): unchanged;
* trace format 1: the format 0.3 reads and writes;
* ``from prunecheck.model import NAME`` for the names :mod:`prunecheck.model`
  exported in 0.2.0 that a policy author does not need (events, runtime
  knobs and state, traces, incidents, gates, the invariant's checks):
  :data:`MODEL_MOVED` says where each lives; it still resolves, with
  :data:`MODEL_NAME`.  Removed in 0.4.0;
* a runtime under test written against 0.2.0's stimulus classes
  (``prunecheck.sim.subjects.runtimes.stimuli.System``, ``User``, ``AssistantText``,
  ``ToolCalls``, ``ResultChunk``, ``ToolFailed``, ``BudgetCheck``,
  ``Invoke``, ``Retry``, ``NewSession``, ``FileChanged``): each name still
  resolves, with :data:`STIMULUS_NAME`, to a class that the stimuli of its
  kind are instances of and that builds one from the 0.2 fields
  (:mod:`prunecheck.sim.subjects.runtimes.stimuli`).  Removed in 0.4.0;
* the spec syntax and the command line: every 0.2.0 spelling of a policy
  (``--policy SPEC``, ``--runtime X``, ``check --langchain S``, ``--format F``
  beside one policy) is read as before; the command line prints
  :data:`SPELLING`, naming the 0.3 spelling, as one ``DeprecationWarning:``
  line on stderr (:mod:`prunecheck.sim.cli.policy_argument`).  Removed in 0.4.0.

The modules 0.2.0 still answered under their 0.1 names (``prunecheck.sim.stimuli``
and 54 others, with a warning) and the names modules re-exported without
defining them are gone in 0.3.0; ``CHANGELOG.md`` lists each with its
replacement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "MODEL_MOVED",
    "MODEL_NAME",
    "SPELLING",
    "STIMULUS_NAME",
    "PrunecheckDeprecationWarning",
    "RemovedIn040Warning",
    "UnformattedWarning",
    "model_deprecations",
]


class PrunecheckDeprecationWarning(DeprecationWarning):
    """Base class of prunecheck's deprecation warnings (filter on it)."""


class RemovedIn040Warning(PrunecheckDeprecationWarning):
    """Something that works in 0.3 and is removed in prunecheck 0.4.0."""

    release = "0.4.0"


@dataclass(frozen=True, slots=True)
class UnformattedWarning:
    """A warning whose message names the thing used: ``format`` it where it is given.

    Examples
    --------
    >>> MODEL_NAME.format(name="step", home="prunecheck.model.runtime")  # doctest: +ELLIPSIS
    RemovedIn040Warning('prunecheck.model.step is deprecated and goes in 0.4.0: ...')
    """

    category: type[PrunecheckDeprecationWarning]
    template: str

    def format(self, **names: Any) -> PrunecheckDeprecationWarning:
        """The warning, its message filled in from ``names``."""
        return self.category(self.template.format(**names))


MODEL_NAME = UnformattedWarning(
    RemovedIn040Warning,
    "prunecheck.model.{name} is deprecated and goes in 0.4.0: "
    "import it from {home} (prunecheck.model keeps what a policy author needs).",
)
#: A stimulus class of 0.2.0 (``prunecheck.sim.subjects.runtimes.stimuli.System`` …).
STIMULUS_NAME = UnformattedWarning(
    RemovedIn040Warning,
    "prunecheck.sim.subjects.runtimes.stimuli.{name} is deprecated and goes in 0.4.0: a runtime is "
    "fed one prunecheck.runtime.Stimulus; test stimulus.kind == {kind!r} instead of "
    "isinstance(stimulus, {name}).",
)
#: A command-line spelling superseded in 0.3 (``old``) and what to write (``new``).
SPELLING = UnformattedWarning(
    RemovedIn040Warning,
    "prunecheck {command}: {old} is deprecated and goes in 0.4.0; write {new} instead.",
)

#: Names ``prunecheck.model`` exported in 0.2.0 and no longer does → their home.
MODEL_MOVED: dict[str, str] = {
    **dict.fromkeys(
        (
            "AssistantChunk",
            "BudgetCheck",
            "CallSpec",
            "Effect",
            "Event",
            "ExternalWrite",
            "FailureReason",
            "Invoke",
            "IssueBatch",
            "NewSession",
            "ResultChunk",
            "Retry",
            "SystemPrompt",
            "ToolFailure",
            "UserMessage",
        ),
        "prunecheck.model.events",
    ),
    **dict.fromkeys(("CheckAt", "Repair", "RetryMode", "StreamLoss"), "prunecheck.model.config"),
    **dict.fromkeys(("RuntimeConfig", "Trace"), "prunecheck"),
    **dict.fromkeys(("RuntimeState", "StepResult", "initial_state"), "prunecheck.model.state"),
    **dict.fromkeys(("apply", "step"), "prunecheck.model.runtime"),
    "replay": "prunecheck.model.system",
    **dict.fromkeys(("Incident", "IncidentKind"), "prunecheck.model.incidents"),
    **dict.fromkeys(
        ("Violation", "ViolationReason", "check_prune", "is_commit_boundary"),
        "prunecheck.model.boundary",
    ),
    "Context": "prunecheck.model.context",
    "Gate": "prunecheck.model.gates",
    "Proposal": "prunecheck.model.actions",
    "Provider": "prunecheck.model.provider",
}


def model_deprecations() -> dict[str, tuple[str, Warning]]:
    """:data:`MODEL_MOVED` with each name's warning, for :mod:`prunecheck._lazy`."""
    return {
        name: (home, MODEL_NAME.format(name=name, home=home)) for name, home in MODEL_MOVED.items()
    }
