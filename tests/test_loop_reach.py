"""Reaching the user's thresholds, and no "safe" without figures (issue 31).

The fake framework (``tests/loops_fake.py``) trims by a character or token
budget far above the harness's default tool output (about 45 characters):
``check`` with its defaults grows the schedules (wider batches, larger
outputs, longer runs: ``subjects/loops/ladder.py``) until the trimmer fires
and catches the split; a trimmer that never fires is vacuous, with figures;
every searched class carries its figures in the table and in ``--json``.
The real frameworks' thorough twins are marked slow.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import prunecheck
from prunecheck.sim.api.loop_reach import Figures
from prunecheck.sim.api.loop_verdict import CellVerdict, LoopCheck
from prunecheck.sim.cli.app import main
from prunecheck.sim.drivers import action_search
from prunecheck.sim.subjects.loops.ladder import ladder
from prunecheck.sim.subjects.loops.ledger import Body, BodyEnd, Ledger
from prunecheck.sim.subjects.loops.reach import CHARS_PER_TOKEN, Budget, Watch, text_size

FAKE = Path(__file__).resolve().parent / "loops_fake.py"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "loops"


@pytest.fixture
def short_shrink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shrink briefly: these tests ask what is found and reported, not how short."""
    monkeypatch.setattr(action_search, "SHRINK_RUNS", 4)
    monkeypatch.setattr(action_search, "POLISH_RUNS", 8)


def _check(agent: str, **options: Any) -> LoopCheck:
    options.setdefault("failures", False)
    return prunecheck.check_loop(f"loop:{FAKE}:{agent}", **options)


# ------------------------------------------------------------------ the watch
def _user(text: str) -> dict[str, object]:
    return {"role": "user", "content": text}


def test_a_history_that_only_grows_is_not_changed_and_one_cut_short_is() -> None:
    ledger, watch = Ledger(), Watch()
    watch.see({"messages": [_user("a")]}, ledger)
    watch.see({"messages": [_user("a"), _user("b")]}, ledger)
    assert watch.changed == 0 and watch.messages == 2
    watch.see({"messages": [_user("b")]}, ledger)  # "a" is gone
    assert watch.changed == 1
    assert watch.chars == text_size([_user("a"), _user("b")]) == 2


def test_a_loss_across_a_disruption_is_not_the_users_code() -> None:
    ledger, watch = Ledger(), Watch()
    watch.see({"messages": [_user("a"), _user("b")]}, ledger)
    ledger.crashes.append(1)  # the process died: what it held went with it
    watch.see({"messages": [_user("c")]}, ledger)
    assert watch.changed == 0


def test_a_result_that_is_not_its_tools_output_is_a_rewrite() -> None:
    from prunecheck.sim.subjects.loops.contract import ToolCall

    ledger, watch = Ledger(), Watch()
    ledger.issue((ToolCall("c1", "read", "{}"),), 0)
    ledger.bodies.append(Body("c1", 0, BodyEnd.OK, 1, "the whole file"))
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        ],
    }
    kept = {"role": "tool", "tool_call_id": "c1", "content": "the whole file"}
    watch.see({"messages": [_user("a"), call, kept]}, ledger)
    assert watch.changed == 0
    cleared = {**kept, "content": "[cleared]"}
    watch.see({"messages": [_user("a"), call, cleared]}, ledger)
    assert watch.changed == 1
    assert watch.figures(ledger, 7) == {"changed": 1, "widest": 1, "messages": 3, "users": 1,
                                        "chars": watch.chars, "tokens": 7,
                                        "model_failed": 0,
                                        "oldest_ms": int(watch.oldest * 1000)}  # fmt: skip


def test_the_ladder_grows_width_sizes_and_steps_and_aims_at_a_known_budget() -> None:
    blind = ladder(None)
    assert [r.shape.width for r in blind] == [8, 16]
    assert blind[-1].shape.width >= 16 and blind[-1].steps > 16
    assert max(blind[-1].shape.sizes) * CHARS_PER_TOKEN >= 10_000  # tens of thousands
    aimed = ladder(Budget(8_000, "tokens", "x"))
    assert max(aimed[0].shape.sizes) == 8_000  # one output alone reaches it
    assert max(ladder(Budget(20_000, "characters", "x"))[0].shape.sizes) == 5_000
    assert ladder(Budget(60, "messages", "x"))[0].steps >= 60


@pytest.mark.parametrize("budget", [Budget(6_000, "tokens", "x"), Budget(24_000, "characters", "x"),
                                    Budget(4_000, "characters", "x")])  # fmt: skip
def test_every_rung_lands_a_cut_between_a_call_and_its_result(budget: Budget) -> None:
    """A trimmer keeping the newest messages that fit cuts mid-pair only when
    the result and what follows (``rest`` characters besides the output) fit
    and the call's message (``call`` characters) added does not.  For every
    remainder up to a thousand characters, each rung holds an output size
    that lands there (the old ladder's b/8, b/3, b, doubled, did not)."""
    limit = budget.tokens * CHARS_PER_TOKEN
    call = 100  # a call's message: its name and arguments
    for rung in ladder(budget):
        sizes = [s * CHARS_PER_TOKEN for s in rung.shape.sizes]
        missed = [rest for rest in range(0, min(1_000, limit // 5), 10)
                  if not any(s + rest <= limit < s + rest + call for s in sizes)]  # fmt: skip
        assert not missed, (rung.text(), missed[:5])
    assert ladder(budget) == ladder(budget)  # a function of the budget: the same draws


# ---------------------------------------------- budgets far above the default
@pytest.mark.usefixtures("short_shrink")
@pytest.mark.parametrize("examples", [pytest.param(None, marks=pytest.mark.slow), 10])
@pytest.mark.parametrize("agent", ["char_budget", "token_budget"])
def test_a_budget_far_above_the_default_output_is_reached_and_caught(
    agent: str, examples: int | None
) -> None:
    """With the defaults (slow), and with 10 schedules a rung (the fast twin)."""
    result = _check(agent, scenarios=["trim"], max_examples=examples, seed=1)
    cell = result.cells[0]
    assert cell.verdict is CellVerdict.UNSAFE, cell.note
    assert cell.found is not None and {"orphaned_result", "invalid_prune"} & cell.found.kinds
    assert cell.figures is not None and cell.figures.fired and cell.figures.rung >= 1
    # the schedule that broke it holds outputs far larger than the default's 45 characters
    assert max(len(getattr(s, "output", "")) for s in cell.found.steps) > 1_000


@pytest.mark.usefixtures("short_shrink")
@pytest.mark.parametrize("examples", [pytest.param(None, marks=pytest.mark.slow), 8])
def test_a_trimmer_that_never_fires_is_vacuous_with_its_figures(examples: int | None) -> None:
    """With the defaults (slow), and with 4 schedules a class and rung (the fast twin)."""
    result = _check("never_fires", scenarios=["trim", "parallel"], max_examples=examples)
    assert result.verdict is CellVerdict.VACUOUS
    assert all(c.verdict is CellVerdict.VACUOUS for c in result.cells)
    grown, trim = result.cells  # the table's order; the first class grew to the top rung
    assert trim.figures is not None and trim.figures.rung == 0  # not grown again
    f = grown.figures
    assert f is not None and f.trims and not f.fired and f.budget is None
    assert f.rung == 2 and f.chars > 20_000 and f.widest > 3
    line = result.verdict_line()
    assert "the trimmer never fired in" in line and "budget unknown" in line
    assert f"{f.tokens:,} tokens (the fake framework's counter)" in line
    assert "safe" not in line.replace("unsafe", "")


@pytest.mark.usefixtures("short_shrink")
def test_a_stated_budget_is_read_and_the_largest_history_held_against_it() -> None:
    result = _check("never_fires_stated", scenarios=["trim"], max_examples=3)
    f = result.cells[0].figures
    assert f is not None and f.budget == Budget(10**9, "characters", "keep_chars=1000000000")
    assert f"{f.chars:,} against its budget of 1,000,000,000 characters" in result.cells[0].note


def test_a_budget_in_turns_is_held_against_the_most_user_turns_a_request_held() -> None:
    watch = Watch()
    user = {"role": "user", "content": "q"}
    answer = {"role": "assistant", "content": "a"}
    for turns in (1, 3, 2):
        watch.see({"messages": [user, answer] * turns}, Ledger())
    assert watch.figures(Ledger(), 0)["users"] == 3
    budget = Budget(200, "user turns", "module constant MAX_USER_TURNS = 200")
    figures = Figures(4, 0, True, 0, 6, 6, 2, "estimated", budget, users=watch.users)
    assert "; 3 user turns against its budget of 200 user turns" in figures.largest()
    combined = Figures.combined([figures, Figures(1, 0, True, 0, 2, 2, 1, "estimated", budget)])
    assert combined is not None and combined.users == 3


@pytest.mark.usefixtures("short_shrink")
def test_safe_is_said_with_figures_and_a_plain_agent_still_gets_a_verdict() -> None:
    plain = _check("careful", scenarios=["parallel", "cancel"], max_examples=12)
    assert plain.verdict is CellVerdict.SAFE
    assert "no trimming configured; widest batch" in plain.verdict_line()
    trimmed = _check("trimming_careful", scenarios=["parallel"], max_examples=10)
    cell = trimmed.cells[0]
    assert cell.verdict is CellVerdict.SAFE and cell.figures is not None
    assert f"changed the history in {cell.figures.changed} of" in cell.note
    # it fired on the default shape, and the ladder was still climbed (a quarter of the
    # class's runs a rung): a trimmer that fires at once may cut a unit on a longer schedule
    assert cell.figures.rung == 2


def test_the_json_carries_the_figures_of_every_searched_class(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["check", f"loop:{FAKE}:trimming_careful", "--scenario", "parallel,interrupt",
          "--max-examples", "8", "--seed", "1", "--json", "--no-failures"])  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    searched, skipped = doc["placements"]
    assert skipped["figures"] is None  # not applicable: nothing searched
    figures = searched["figures"]
    assert figures["trims"] is True and figures["history_changed"] > 0
    assert figures["widest_batch"] >= 1 and figures["largest_history"]["characters"] > 0
    assert figures["budget"] is None and figures["largest_history"]["token_counter"]


# --------------------------------------------------- each class its own budget
def test_each_class_gets_its_own_runs_the_ones_a_targeted_search_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import prunecheck.sim.api.loop_verdict as verdict

    monkeypatch.setattr(verdict, "CLASS_EXAMPLES", 5)
    monkeypatch.setattr(action_search, "SHRINK_RUNS", 0)
    checked = _check("careful", scenarios=["parallel", "cancel"], seed=3)
    for cell in checked.cells:
        searched = prunecheck.search_loop(f"loop:{FAKE}:careful", scenario=cell.scenario.name,
                                          seed=3, max_examples=5, failures=False)  # fmt: skip
        assert cell.examples == searched.examples >= 5
        assert cell.figures == Figures.of(searched.tally, checked.target)


# ------------------------------------------------ thorough twins: real frameworks
@pytest.mark.slow
@pytest.mark.parametrize(
    ("agent", "verdict"),
    [("autogen_token_limited.py:agent", CellVerdict.UNSAFE),
     ("pydantic_ai_guarded.py:agent", CellVerdict.SAFE)],
)  # fmt: skip
def test_real_trimmers_fire_in_the_trimming_class(agent: str, verdict: CellVerdict) -> None:
    result = prunecheck.check_loop(f"loop:{EXAMPLES / agent}", scenarios=["trim"],
                                   failures=False)  # fmt: skip
    cell = result.cells[0]
    assert cell.verdict is verdict, cell.note
    assert cell.figures is not None and cell.figures.fired


def test_a_count_is_probed_and_a_size_is_not() -> None:
    from prunecheck.sim.subjects.loops.frameworks.budgets import probe_count

    assert probe_count(lambda n: min(n, 400)) == 401  # cuts past 400 items
    assert probe_count(lambda n: n) is None  # never cuts within the probe's limit
    assert probe_count(lambda n: None) is None  # answers no count


def test_the_agents_sdk_filters_count_is_read_by_probing_it() -> None:
    pytest.importorskip("agents")
    from prunecheck.sim.subjects.loops.reach import budget_of
    from prunecheck.sim.subjects.loops.target import load_target

    keep_last = load_target(f"loop:{EXAMPLES / 'openai_agents_keep_last.py'}:app")
    budget = budget_of(keep_last.adapter, keep_last.target)
    assert budget is not None and (budget.amount, budget.unit) == (6, "messages")
    guarded = load_target(f"loop:{EXAMPLES / 'openai_agents_guarded.py'}:app")
    assert budget_of(guarded.adapter, guarded.target) is None  # a token budget: not a count


def test_a_subscripted_sequence_is_named_by_its_key() -> None:
    """``values["messages"][-KEEP:]`` keeps messages (held_back/lc_capped_saver.py)."""
    import ast

    from prunecheck.sim.subjects.loops.constant_units import _uses

    assert _uses(ast.parse("kept = outputs[-KEEP:]"), "KEEP") == ["outputs"]  # as before
    assert _uses(ast.parse("kept = contents[-KEEP:]"), "KEEP") == ["messages"]  # as before
    # a checkpoint's channel by its key (held_back/lc_capped_saver.py: "values" before)
    assert _uses(ast.parse('v["messages"] = v["messages"][-KEEP:]'), "KEEP") == ["messages"]


def test_a_users_object_states_its_budget_as_an_attribute() -> None:
    """A custom AutoGen model context's ``self.max_chars = 16_000``."""
    from prunecheck.sim.subjects.loops.frameworks.budgets import autogen_budget
    from prunecheck.sim.subjects.loops.reach import attribute_budget

    class CharBudgetContext:
        def __init__(self) -> None:
            self.name = "ctx"
            self.max_chars = 16_000

    budget = autogen_budget(CharBudgetContext())
    assert budget is not None and (budget.amount, budget.unit, budget.tokens) == (
        16_000, "characters", 4_000)  # fmt: skip
    assert "CharBudgetContext.max_chars = 16,000" in budget.where
    assert attribute_budget(object()) is None and attribute_budget(CharBudgetContext) is None
