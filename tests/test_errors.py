"""The error types: a policy error carries its step as a field, a timeout is
its own type, and the engine places an error at its step by that field,
never by reading the message."""

from __future__ import annotations

import copy
import pickle

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import (
    ConfigError,
    PolicyError,
    PolicyTimeout,
    PrunecheckError,
    TraceError,
)
from prunecheck.model.events import UserMessage
from prunecheck.model.policies import ContextView, FunctionPolicy
from prunecheck.model.runtime import apply
from prunecheck.model.state import initial_state


def test_a_policy_error_carries_its_step_and_the_user_reads_it_in_the_subject() -> None:
    bare = PolicyError("policy 'mine'", "raised KeyError: 'x'.", "fix it.")
    placed = bare.at_step(3)
    assert (bare.step, bare.subject) == (None, "policy 'mine'")
    assert (placed.step, placed.subject, placed.bare_subject) == (
        3,
        "policy 'mine' at step 3",
        "policy 'mine'",
    )
    assert placed.paragraph() == "policy 'mine' at step 3: raised KeyError: 'x'. Hint: fix it."
    assert str(placed) == placed.paragraph()
    assert (placed.rule, placed.hint) == (bare.rule, bare.hint)


def test_placing_a_timeout_keeps_its_type() -> None:
    hang = PolicyTimeout("policy 'slow'", "select(view, need=1) did not return within 1 s.")
    placed = hang.at_step(7)
    assert type(placed) is PolicyTimeout and isinstance(placed, PolicyError)
    assert placed.subject == "policy 'slow' at step 7"


@pytest.mark.parametrize(
    "error",
    [
        PolicyError("policy 'p'", "rule.", "hint.", 4),
        PolicyTimeout("policy 'p'", "did not return.", "", 2),
        PolicyError("policy spec 'x.py:f'", "file x.py does not exist."),
        TraceError("trace t.json", "is not JSON.", "check the file."),
        ConfigError("--budget 0", "must be positive."),
    ],
    ids=lambda e: type(e).__name__,
)
def test_copies_and_pickles_keep_type_and_fields(error: PrunecheckError) -> None:
    for again in (copy.copy(error), pickle.loads(pickle.dumps(error))):
        assert type(again) is type(error)
        assert again.paragraph() == error.paragraph()
        assert again.__dict__ == error.__dict__


def _state(select: object) -> object:
    policy = FunctionPolicy(select, "mine at step 7")  # type: ignore[arg-type]
    return initial_state(RuntimeConfig(budget=10, hard_ceiling=100), policy)


def test_the_engine_places_an_exception_from_select_at_its_step() -> None:
    def raises(view: ContextView, need: int) -> list[str]:
        raise KeyError("x")

    with pytest.raises(PolicyError) as info:
        apply(_state(raises), UserMessage(50))  # type: ignore[arg-type]
    assert info.value.step == 1
    assert info.value.subject == "policy 'mine at step 7' at step 1"


def test_the_engine_places_a_policy_error_by_its_field_not_its_words() -> None:
    """The policy's own name contains " at step ": a test on the subject's
    text took the error as placed already and lost the step."""

    def raises(view: ContextView, need: int) -> list[str]:
        raise PolicyError("policy 'mine at step 7'", "gave up.")

    with pytest.raises(PolicyError) as info:
        apply(_state(raises), UserMessage(50))  # type: ignore[arg-type]
    assert info.value.step == 1
    assert info.value.subject == "policy 'mine at step 7' at step 1"
    assert info.value.rule == "gave up."


def test_a_bad_proposal_is_placed_once_by_proposal_from() -> None:
    with pytest.raises(PolicyError) as info:
        apply(_state(lambda view, need: ["nope"]), UserMessage(50))  # type: ignore[arg-type]
    assert info.value.step == 1
    assert info.value.subject == "policy 'mine at step 7' at step 1"
    assert "unknown message id 'nope'" in info.value.rule


def test_a_timeout_raised_inside_select_stays_a_timeout_at_its_step() -> None:
    def hangs(view: ContextView, need: int) -> list[str]:
        raise PolicyTimeout("policy 'mine at step 7'", "did not return within 1 s.")

    with pytest.raises(PolicyTimeout) as info:
        apply(_state(hangs), UserMessage(50))  # type: ignore[arg-type]
    assert info.value.step == 1
