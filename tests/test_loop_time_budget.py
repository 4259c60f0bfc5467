"""A trimmer keyed on time (issue 31): its threshold is read, and a vacuous verdict quotes it.

A history processor that forgets tool rounds older than ``MAX_AGE_MINUTES``
(a message's ``timestamp`` against ``datetime.now()``) never fires in a check,
whose conversations last seconds.  The class is vacuous, and its note says
what was never reached: the threshold, from the module's constant (its code
counts it in ``timedelta(minutes=...)``), against the oldest message's age at a
request, measured over the schedules.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from prunecheck.sim.api.loop_reach import Figures
from prunecheck.sim.subjects.loops.constant_units import _uses
from prunecheck.sim.subjects.loops.ladder import ladder
from prunecheck.sim.subjects.loops.ledger import Ledger
from prunecheck.sim.subjects.loops.reach import Budget, Watch, module_budget

AGENT = '''\
from datetime import datetime, timedelta, timezone

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelResponse, ToolCallPart

MAX_AGE_MINUTES = 90


def forget_old_rounds(messages):
    cutoff = datetime.now(timezone.utc) - timedelta(minutes=MAX_AGE_MINUTES)
    kept, skip = [], False
    for i, message in enumerate(messages):
        if skip:
            skip = False
            continue
        old = isinstance(message, ModelResponse) and message.timestamp < cutoff
        calls = old and any(isinstance(p, ToolCallPart) for p in message.parts)
        if calls and i + 2 < len(messages):
            skip = True
            continue
        kept.append(message)
    return kept


agent = Agent("openai:gpt-4o", capabilities=[ProcessHistory(forget_old_rounds)])


@agent.tool_plain
def read_ticket(ticket_id: str) -> str:
    """Read a support ticket."""
    raise NotImplementedError
'''


def _module(tmp_path: Path, name: str, source: str) -> ModuleType:
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"prunecheck_user_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _units(source: str, name: str) -> list[str | None]:
    return _uses(ast.parse(source), name)


def test_a_constant_in_a_duration_or_against_a_clock_is_counted_in_time() -> None:
    assert _units("d = timedelta(seconds=MAX_AGE)", "MAX_AGE") == ["seconds"]
    assert _units("d = timedelta(hours=TTL)", "TTL") == ["hours"]
    assert _units("old = time.time() - m.created > LIMIT", "LIMIT") == ["seconds"]
    assert _units("old = (now - t).total_seconds() > LIMIT", "LIMIT") == ["seconds"]
    assert _units("kept = messages[-KEEP:]", "KEEP") == ["messages"]  # as before


def test_a_threshold_in_time_is_read_from_its_name_or_its_code(tmp_path: Path) -> None:
    named = _module(tmp_path, "named_age", "MAX_AGE_SECONDS = 21_600\ndef agent(): ...\n")
    budget = module_budget(named.agent)
    assert budget is not None and (budget.amount, budget.unit) == (21_600, "seconds")
    assert budget.seconds == 21_600 and not budget.counts and budget.tokens == 0
    assert "module constant MAX_AGE_SECONDS = 21,600" in budget.where
    coded = _module(
        tmp_path,
        "coded_age",
        "from datetime import timedelta\nMAX_AGE = 2\n"
        "def agent():\n    return timedelta(hours=MAX_AGE)\n",
    )
    budget = module_budget(coded.agent)
    assert budget is not None and (budget.unit, budget.seconds) == ("hours", 7_200)
    assert budget.where.endswith("its code counts it")
    assert ladder(budget) == ladder(None)  # no size nor count to aim the outputs at


def test_the_watch_measures_the_oldest_messages_age_on_both_clocks() -> None:
    ledger, watch = Ledger(), Watch()
    watch.see({"messages": [{"role": "user", "content": "a"}]}, ledger, 0.0)
    watch.see({"messages": [{"role": "user", "content": "b"}]}, ledger, 120.0)  # virtual
    assert watch.oldest >= 120.0
    assert watch.figures(ledger, 0)["oldest_ms"] >= 120_000


def test_a_vacuous_note_quotes_the_threshold_against_the_oldest_age() -> None:
    budget = Budget(21_600, "seconds", "module constant MAX_AGE_SECONDS = 21,600; its name says")
    figures = Figures(60, 0, True, 3, 9, 400, 100, "estimated", budget, oldest_ms=1_250)
    text = figures.text()
    assert text.startswith("the trimmer never fired in 60 schedules")
    assert "its threshold of 21,600 seconds (module constant MAX_AGE_SECONDS" in text
    assert "against the oldest message's age of 1.25 s" in text
    assert "budget unknown" not in text
    assert figures.to_json()["oldest_seconds"] == 1.25


def test_a_time_keyed_processor_that_never_fires_is_vacuous_with_its_threshold(
    tmp_path: Path,
) -> None:
    """The agent loaded as check loads it (model by its string, no key), driven a few
    steps: the processor hands back every history, and the figures say why."""
    pytest.importorskip("pydantic_ai")
    from prunecheck.sim.subjects.loops.contract import ToolCall
    from prunecheck.sim.subjects.loops.reach import budget_of
    from prunecheck.sim.subjects.loops.scheduler import LoopRun
    from prunecheck.sim.subjects.loops.steps import Complete, ReplyStep, User
    from prunecheck.sim.subjects.loops.target import load_target

    path = tmp_path / "pa_age_minutes.py"
    path.write_text(AGENT, encoding="utf-8")
    target = load_target(f"loop:{path}:agent")
    budget = budget_of(target.adapter, target.target)
    assert budget is not None and (budget.amount, budget.unit) == (90, "minutes")
    with LoopRun(target.adapter, target.target) as run:
        for n in (1, 2, 3):
            run.apply(User(f"user {n}"))
            call = ToolCall(f"call_{n}", "read_ticket", '{"ticket_id": "t"}')
            run.apply(ReplyStep("", (call,)))
            run.apply(Complete(call.id, f"ticket {n}"))
            run.apply(ReplyStep(f"answer {n}"))
        assert run.watch.changed == 0 and not run.incidents
        assert 0 < run.watch.oldest < 90 * 60
    figures = Figures(1, 0, True, 1, 12, 300, 75, "estimated", budget,
                      oldest_ms=int(run.watch.oldest * 1000))  # fmt: skip
    assert "its threshold of 90 minutes (module constant MAX_AGE_MINUTES = 90" in figures.text()
