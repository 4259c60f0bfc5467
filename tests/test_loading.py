"""Resolving policy specs (built-in, module:attr, file.py:attr) and the
per-call time limit on user policies."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.context import Context, Message, Role
from prunecheck.model.errors import PolicyError, PolicyTimeout
from prunecheck.model.events import UserMessage
from prunecheck.model.policies import ContextView, FunctionPolicy
from prunecheck.model.runtime import apply
from prunecheck.model.state import initial_state
from prunecheck.sim.subjects.loader import load_policy
from prunecheck.sim.subjects.time_limit import TimeLimitedPolicy, time_limited

POLICY_FILE = """
class Oldest:
    name = "oldest"
    def select(self, view, need):
        return [m.id for m in view.messages][:1]

class Anonymous:
    def select(self, view, need):
        return []

class Broken:
    def __init__(self):
        raise RuntimeError("needs a model file")
    def select(self, view, need):
        return []

def trim(view, need):
    return [m.id for m in view.messages if m.role == "tool"]

class Holder:
    policy = Oldest()

NOT_A_POLICY = 42
"""


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_policies.py"
    path.write_text(POLICY_FILE, encoding="utf-8")
    return path


def view() -> ContextView:
    ctx = Context()
    ctx.append(Message("m1", Role.USER, 5, 1, 0.0, unit_id="m1"))
    ctx.append(Message("m2", Role.TOOL, 5, 1, 0.0, unit_id="m2", call_id="c1"))
    return ContextView(ctx, pending_calls=frozenset(), budget=1, now=0.0, turn=1)


def test_builtin_names() -> None:
    assert load_policy("lowest_salience").name == "lowest_salience"


def test_file_specs(policy_file: Path) -> None:
    assert load_policy(f"{policy_file}:Oldest").name == "oldest"
    assert list(load_policy(f"{policy_file}:Oldest").select(view(), 1)) == ["m1"]
    assert load_policy(f"{policy_file}:Anonymous").name == "Anonymous"
    trim = load_policy(f"{policy_file}:trim")
    assert trim.name == "trim" and list(trim.select(view(), 1)) == ["m2"]
    assert load_policy(f"{policy_file}:Holder.policy").name == "oldest"


def test_module_specs(policy_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(policy_file.parent))
    assert load_policy("my_policies:trim").name == "trim"
    assert isinstance(load_policy("my_policies:Oldest"), object)


@pytest.mark.parametrize(
    "suffix, rule",
    [
        (
            ":NOT_A_POLICY",
            "NOT_A_POLICY is int, neither a callable select(view, need) nor an "
            "object with a select method.",
        ),
        (":missing", "has no attribute 'missing'."),
        (":Broken", "instantiating Broken raised RuntimeError: needs a model file ("),
    ],
)
def test_bad_attributes(policy_file: Path, suffix: str, rule: str) -> None:
    spec = f"{policy_file}{suffix}"
    with pytest.raises(PolicyError) as info:
        load_policy(spec)
    assert info.value.subject == f"policy spec {spec!r}"
    assert rule in info.value.rule and info.value.rule.endswith(".")


def test_bad_specs(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def select(view, need):\n    return [\n", encoding="utf-8")
    cases = {
        "recencyy": "is neither a built-in policy nor of the form module:attr or file.py:attr.",
        ":select": "needs both a module (or file) and an attribute, as module:attr.",
        "mod:": "needs both a module (or file) and an attribute, as module:attr.",
        "no/such/file.py:select": "file no/such/file.py does not exist.",
        "no_such_module_abc:select": "module 'no_such_module_abc' cannot be imported",
        f"{bad}:select": f"importing {bad} raised SyntaxError",
    }
    for spec, rule in cases.items():
        with pytest.raises(PolicyError) as info:
            load_policy(spec)
        assert info.value.subject == f"policy spec {spec!r}", spec
        assert info.value.rule.startswith(rule), (spec, info.value.rule)
        assert info.value.hint, spec


def _sleepy(view: ContextView, need: int) -> list[str]:
    import time

    time.sleep(30)
    return []


def test_guarded_turns_a_hang_into_a_policy_error() -> None:
    policy = time_limited(FunctionPolicy(_sleepy, "sleepy"), 0.2)
    with pytest.raises(PolicyTimeout) as info:
        policy.select(view(), 3)
    assert info.value.subject == "policy 'sleepy'"
    assert info.value.rule == (
        "select(view, need=3) did not return within 0.2 s (context of 2 messages)."
    )


def test_a_hang_inside_the_runtime_names_the_step() -> None:
    state = initial_state(
        RuntimeConfig(budget=10, hard_ceiling=100),
        time_limited(FunctionPolicy(_sleepy, "sleepy"), 0.2),
    )
    with pytest.raises(PolicyTimeout) as info:
        apply(state, UserMessage(50))
    assert info.value.subject == "policy 'sleepy' at step 1" and info.value.step == 1


def test_guarded_materializes_lazy_results_and_passes_garbage_through() -> None:
    def lazy(view: ContextView, need: int) -> Iterator[str]:
        yield "m1"

    assert time_limited(FunctionPolicy(lazy, "lazy"), 5).select(view(), 1) == ["m1"]
    # A policy that breaks its contract on purpose: the guard passes its answer through.
    garbage = time_limited(FunctionPolicy(lambda v, n: 7, "g"), 5)  # type: ignore[arg-type,return-value]
    answer: object = garbage.select(view(), 1)
    assert answer == 7
    plain = FunctionPolicy(lambda v, n: [], "p")
    assert time_limited(plain, 0) is plain
    assert isinstance(time_limited(plain, 1), TimeLimitedPolicy)


def test_guard_is_inert_outside_the_main_thread() -> None:
    out: list[object] = []
    policy = time_limited(FunctionPolicy(lambda v, n: ["m2"], "quick"), 0.5)
    worker = threading.Thread(target=lambda: out.append(policy.select(view(), 1)))
    worker.start()
    worker.join()
    assert out == [["m2"]]
