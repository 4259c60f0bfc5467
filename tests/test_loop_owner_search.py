"""A class's search past the framework's findings (``loop_owner._configuration_finding``):
a kind found only as the framework's is searched for once more as the configuration's,
a run counting only if the plain agent does not fail the same way (langchain-34159:
a failed tool's unanswered call, the framework's, hid ToolCallLimitMiddleware's).

Cheap: the search and the plain agent's replay are stand-ins; the end-to-end case is
the known-bug corpus's row (``make known-bugs``)."""

from __future__ import annotations

from typing import Any

import pytest

from prunecheck.sim.api import loop_owner
from prunecheck.sim.api.loop_owner import Finding, Owner
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass


class _Found:
    def __init__(self, kinds: frozenset[str]) -> None:
        self.kinds = kinds
        self.steps = ()


class _Searched:
    def __init__(self, found: _Found | None) -> None:
        self.found = found
        self.examples = 1


def _finding(kinds: set[str], owner: Owner) -> Finding:
    return Finding(_Found(frozenset(kinds)), frozenset(kinds), owner, "")  # type: ignore[arg-type]


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {"searches": 0}

    def search(system: object, **kwargs: Any) -> _Searched:
        seen["searches"] += 1
        seen["known"] = kwargs["known"]
        run = _Found(frozenset({"unanswered_call", "provider_rejection"}))
        # the framework's quick finding is refused, the configuration's accepted
        seen["accepted"] = kwargs["accept"](run)
        return _Searched(run if seen["accepted"] else None)

    def owner_of(target: object, scenario: object, outcome: Any, kinds: Any) -> Any:
        return Owner.CONFIGURATION, "the plain agent does not fail this way"

    monkeypatch.setattr(loop_owner, "search", search)
    monkeypatch.setattr(loop_owner, "owner_of", owner_of)
    monkeypatch.setattr(loop_owner, "plain_target", lambda target: target)
    monkeypatch.setattr(loop_owner, "LoopSystem", lambda *args: None)
    return seen


def _run(findings: list[Finding]) -> Finding | None:
    return loop_owner._configuration_finding(
        object(),  # type: ignore[arg-type]
        SCENARIOS[ScenarioClass.CANCEL],
        findings,
        seed=1,
        max_examples=10,
        max_steps=10,
        deadline=None,
    )


def test_a_kind_found_only_as_the_frameworks_is_searched_again(
    stand_ins: dict[str, Any],
) -> None:
    framework = _finding({"unanswered_call", "provider_rejection"}, Owner.FRAMEWORK)
    mine = _run([framework])
    assert stand_ins["searches"] == 1
    # only the framework's kinds count: every other kind is "known" (a run goes past it)
    assert "unanswered_call" not in stand_ins["known"]
    assert "orphaned_result" in stand_ins["known"]
    assert mine is not None and mine.owner is Owner.CONFIGURATION
    assert mine.kinds == {"unanswered_call", "provider_rejection"}


def test_no_search_when_the_configuration_has_every_kind_or_nothing_is_the_frameworks(
    stand_ins: dict[str, Any],
) -> None:
    both = [
        _finding({"unanswered_call"}, Owner.FRAMEWORK),
        _finding({"unanswered_call"}, Owner.CONFIGURATION),
    ]
    assert _run(both) is None
    assert _run([_finding({"orphaned_result"}, Owner.CONFIGURATION)]) is None
    assert _run([]) is None
    assert stand_ins["searches"] == 0
