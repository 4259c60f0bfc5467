"""Agents written the way users write them, each held to its verdict (issue 31).

One row per agent of ``tests/user_agents/`` (agents prunecheck's authors did
not shape to it; ``examples/loops/`` is what the project tunes on): the
spec, the verdict the user expects and, for an unsafe one, the violation
kinds that say why.  Each row runs ``prunecheck check loop:SPEC --json`` as
a user would, in a child process whose environment has no provider key
(``OPENAI_API_KEY`` and the like removed: a CI job without secrets), and
reads the verdict of the scenario class the agent's own code is about
(``trim``: its trimming at the framework's hook) or, for a whole-agent
expectation, the check's.

Each row costs a full check (seconds of CPU): the table is ``slow``
(``make test-all``).  Its fast twin loads every agent the way ``check``
does (the spec, no key) and asserts the framework adapter takes it.

A row whose verdict is wrong today is ``xfail(strict=True)`` with what is
wrong: whoever fixes it removes the mark (the strict xfail then fails).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
AGENTS = "tests/user_agents"

#: A check that runs longer than this is a hang (a verdict the issue asks for;
#: the row fails, the table goes on).  No row asserts on time otherwise.
HANG_SECONDS = 300

#: Violation kinds of a broken history: what an unsafe trimmer is caught by.
STRUCTURAL = frozenset(
    {"orphaned_result", "provider_rejection", "invalid_prune", "unanswered_call"}
)


class Expect(StrEnum):
    """What the user expects of ``check`` on the agent."""

    LOADS = "loads"
    """It loads without a provider key and gets a verdict (exit 0 or 1)."""
    UNSAFE = "unsafe"
    """The class is UNSAFE with one of the row's kinds; exit 1."""
    SAFE = "safe"
    """The class is safe (it was exercised) and the user's configuration exits 0."""
    VACUOUS = "vacuous"
    """The class is vacuous (never "safe"), its note giving the figures."""
    FAULT = "fault"
    """A summarizer's failure is a fault the verdict names."""
    REFUSED = "refused"
    """Exit 2: one paragraph naming what the installed framework does not ship."""


@dataclass(frozen=True, slots=True)
class Row:
    """One agent and the verdict it must get.

    Attributes
    ----------
    spec : str
        ``FILE.py:ATTR`` under ``tests/user_agents/``.
    expect : Expect
        What the user expects.
    kinds : frozenset[str]
        UNSAFE: at least one of these is among the class's violations.
    scenario : str or None
        The scenario class read (None: any class; the whole check).
    figure : str or None
        VACUOUS: the threshold the note must state (digits, commas ignored).
    wrong_today : str or None
        What ``check`` gives today instead (the row is a strict xfail).
    """

    spec: str
    expect: Expect
    kinds: frozenset[str] = frozenset()
    scenario: str | None = "trim"
    figure: str | None = None
    wrong_today: str | None = None

    @property
    def id(self) -> str:
        return f"{self.spec.replace('.py:', ':')}-{self.expect}"


ROWS: tuple[Row, ...] = (
    # 1. A provider string, no key: the module must load.
    Row("pa_provider_string.py:agent", Expect.LOADS, scenario=None),
    Row("pa_provider_string.py:agent", Expect.SAFE, scenario=None),
    # 2. LangChain's create_agent("openai:gpt-4o") at module level: a ChatOpenAI at import.
    Row("lc_provider_string.py:agent", Expect.LOADS, scenario=None),
    Row("lc_provider_string.py:agent", Expect.SAFE, scenario=None),
    # 3. Token budgets far above the harness's default ~45-character tool outputs.
    Row("lc_trim_tokens.py:agent", Expect.UNSAFE, STRUCTURAL),
    Row(
        "ag_token_limited.py:agent",
        Expect.UNSAFE,
        STRUCTURAL,
    ),
    Row(
        "lg_react_pre_model_hook.py:agent",
        Expect.UNSAFE,
        STRUCTURAL,
        scenario=None,
    ),
    # 4. Character budgets (20,000 characters).
    Row(
        "oa_char_budget.py:app",
        Expect.UNSAFE,
        STRUCTURAL,
    ),
    Row(
        "lc_char_budget.py:agent",
        Expect.UNSAFE,
        STRUCTURAL,
    ),
    # 5. Summarizers whose model call fails: a fault, named.
    Row("lc_summarizer_fails.py:agent", Expect.FAULT, scenario=None),
    Row("pa_summarizer_docs.py:agent", Expect.LOADS, scenario=None),
    Row("pa_summarizer_docs.py:agent", Expect.FAULT, scenario=None),
    # 6. A custom Session subclass that trims: its trimming judged.
    Row(
        "oa_session_last_n.py:app",
        Expect.UNSAFE,
        STRUCTURAL,
    ),
    # 7. Sync user code: a hand-built StateGraph's sync nodes, a sync history processor.
    Row(
        "lg_sync_graph.py:agent",
        Expect.UNSAFE,
        STRUCTURAL,
        scenario=None,
    ),
    Row("pa_sync_processor.py:agent", Expect.SAFE),
    # 8. Clearing old tool outputs to an honest placeholder, every pair kept.
    Row("pa_clear_tool_outputs.py:agent", Expect.SAFE),
    Row("lc_clear_tool_outputs.py:agent", Expect.SAFE),
    # 9. Whole calls dropped with their results: a history every provider accepts.
    Row("lc_drop_whole_calls.py:agent", Expect.SAFE),
    Row("oa_drop_whole_calls.py:app", Expect.SAFE),
    # 10. A threshold never reached: vacuous, with figures.
    Row("oa_never_fires.py:app", Expect.VACUOUS, figure="400"),
    Row("ag_buffered_large.py:agent", Expect.VACUOUS, figure="200"),
    # 11. Round 34: a trim that empties the conversation, a session's own item limit (the
    # SDK drops an output whose call the limit cut: safe), a budget stated only as a module
    # constant, a trim inside the user's own async graph node.
    Row(
        "oa_reset_filter.py:app",
        Expect.UNSAFE,
        STRUCTURAL,
        wrong_today="trim cell safe since the agent is judged by its own provider's rules: its "
        "model (gpt-4.1 on the SDK's OpenAI provider) speaks the Responses API, which prunecheck "
        "does not know to refuse instructions with no input; Anthropic's empty-request rule, which "
        "caught it before, is not its provider's, and what the reset dropped were whole, closed "
        "units a trim removed (no loss by the judge's rule)",
    ),
    Row("oa_session_settings.py:app", Expect.SAFE),
    # caught now: the ladder's outputs just under the budget land the cut mid-pair
    Row("ag_chars_constant.py:agent", Expect.UNSAFE, STRUCTURAL),
    Row("lg_node_trim_tokens.py:build_graph", Expect.UNSAFE, STRUCTURAL),
    # Held back (issue 31): written last, after the fixes, prunecheck not changed for them.
    Row("late_pa_anthropic_string.py:support_agent", Expect.LOADS, scenario=None),
    Row("late_pa_anthropic_string.py:support_agent", Expect.SAFE, scenario=None),
    Row("late_lc_wrap_tokens.py:agent", Expect.UNSAFE, STRUCTURAL),
    # caught now: the context's max_chars read, the ladder's fine offsets
    Row("late_ag_char_context.py:agent", Expect.UNSAFE, STRUCTURAL),
    # tuned on (issue 31, after round 34): the summarizer agent runs on the harness's double
    Row("late_oa_summarizing_filter.py:app", Expect.FAULT, scenario=None),
    # its session has no close: the adapter's abandon raised and kept every dropped turn
    # to the interpreter's exit, whose tracebacks of them were on stderr
    Row("late_oa_list_session.py:app", Expect.UNSAFE, STRUCTURAL),
    Row("late_pa_sync_ctx_clear.py:agent", Expect.SAFE),
    Row("late_ag_drop_whole_rounds.py:agent", Expect.SAFE),
    Row("late_lc_summary_never.py:agent", Expect.VACUOUS, figure="300"),
    # Held back, second set (issue 31, round of 2026-12-03: held_back/, written after the
    # module-graph and summarizer-fault fixes, run once as written: reports/user-agents.md).
    # tuned after it was held back (the judge's prefix-and-note copy): no longer held back
    Row("held_back/pa_truncate_outputs.py:agent", Expect.UNSAFE, frozenset({"truncated_payload"})),
    # rerun in round 34 after the changes above (written on agents 11., not on these):
    # caught now, the emptied request judged
    Row("held_back/lc_empty_trim.py:agent", Expect.UNSAFE, STRUCTURAL | {"silent_loss"}),
    Row(
        "held_back/oa_session_settings_limit.py:app",
        Expect.UNSAFE,
        STRUCTURAL,
        wrong_today="the session's SessionSettings(limit=10) is the trim hook now, and the trim "
        "cell is safe (the limit cut the history in 5 of 60 schedules): the SDK drops an output "
        "whose call the limit cut, the repair its docstring allows; exit 1 from crash then a new "
        "message (silent_loss: its :memory: session is lost with the process)",
    ),
    # caught now: the ladder's outputs just under the budget land the cut mid-pair
    Row("held_back/ag_module_constant_budget.py:agent", Expect.UNSAFE, STRUCTURAL),
    # caught now (round 34): the user's node is the trim hook; trim_messages keeps nothing
    # once the newest output is over MAX_TOKENS, and the emptied request is judged
    Row("held_back/lg_node_trim.py:agent", Expect.UNSAFE, STRUCTURAL, scenario=None),
    # caught after round 37: the ladder climbs after the cap's first change
    Row(
        "held_back/lc_capped_saver.py:agent",
        Expect.UNSAFE,
        STRUCTURAL,
        scenario=None,
    ),
    Row("held_back/lc_agent_executor.py:agent", Expect.REFUSED, scenario=None),
    # written after the truncation and checkpointer changes, run once as written
    Row("held_back/pa_last_n_constant.py:agent", Expect.SAFE),
    Row(
        "held_back/oa_pair_aware_session.py:app",
        Expect.SAFE,
        wrong_today="trim cell safe as expected (its cut changed the history in 19 of 90 "
        "schedules), but exit 1: crash then a new message, silent_loss of a call whose output the "
        "session had not stored when the process died, the configuration's (the plain agent "
        "did not fail the same way on the schedule)",
    ),
)


def _env() -> dict[str, str]:
    """This process's environment without any provider credential."""
    secret = re.compile(r"(^OPENAI_|^AZURE_OPENAI|^ANTHROPIC_|^GOOGLE_API|^GEMINI_|_API_KEY$)")
    return {k: v for k, v in os.environ.items() if not secret.search(k)}


@dataclass(frozen=True, slots=True)
class Outcome:
    """One ``check --json`` of a spec: its exit status, JSON (None if none) and stderr."""

    status: int
    report: dict[str, Any] | None
    stderr: str


@cache
def _check(spec: str) -> Outcome:
    """``prunecheck check loop:tests/user_agents/SPEC --json``, once per spec per session."""
    argv = [sys.executable, "-m", "prunecheck", "check", f"loop:{AGENTS}/{spec}", "--json",
            "--no-failures"]  # fmt: skip  # a first run, as a user's: no earlier failure replayed
    try:
        done = subprocess.run(
            argv, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=HANG_SECONDS
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"check of {spec} did not end in {HANG_SECONDS} s (a hang): {exc.stderr!r}")
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        report = None
    return Outcome(done.returncode, report, done.stderr)


def _placement(report: dict[str, Any], scenario: str) -> dict[str, Any]:
    for placement in report["placements"]:
        if placement["scenario_class"] == scenario:
            return dict(placement)
    raise AssertionError(f"no placement for scenario class {scenario!r}: {report['placements']}")


def _said(report: dict[str, Any]) -> str:
    """What the verdict says about the run (not the spec, which names the file)."""
    texts = [str(report["details"].get("verdict_line", ""))]
    for placement in report["placements"]:
        texts += [str(placement.get("title")), str(placement.get("note"))]
        texts += [str(v) for v in placement.get("violations") or ()]
        first = placement.get("first_violation") or {}
        texts += [str(first.get("detail")), str(first.get("reason"))]
    said = "\n".join(texts)
    for name in (report["policy"], report["details"].get("agent")):  # the file's name
        said = said.replace(str(name), "<agent>")
    return said


def _users(placement: dict[str, Any]) -> set[str]:
    """The violations of ``placement`` the user's configuration causes: all of them
    but those only a framework finding (every configuration of the version) has."""
    findings = placement.get("findings") or []
    if not findings:
        return set(placement["violations"])
    return {v for f in findings if f.get("owner") != "framework" for v in f["violations"]}


def _hold(row: Row, out: Outcome) -> None:
    """Assert that ``out`` is the verdict ``row`` expects."""
    where = f"check of {row.spec}: exit {out.status}\n{out.stderr[-3000:]}"
    if row.expect is Expect.REFUSED:
        assert out.status == 2, where
        assert "Traceback" not in out.stderr, where
        assert "AgentExecutor" in out.stderr, f"the missing name is not said: {where}"
        return
    assert out.status != 2, f"did not load or run: {where}"
    assert "Traceback" not in out.stderr, where
    assert out.report is not None, f"no JSON report: {where}"
    report = out.report
    assert report["error"] is None, where
    assert report["placements"], where
    if row.expect is Expect.LOADS:
        assert out.status in (0, 1), where
        return
    if row.expect is Expect.FAULT:
        said = _said(report)
        assert re.search(r"summar", said, re.IGNORECASE), f"no word of the summarizer: {said}"
        return
    if row.scenario is None:
        found = {v for p in report["placements"] for v in _users(p)}
        vacuous = bool(report["details"].get("vacuous"))  # the document writes it "safe"
        verdict = "vacuous" if vacuous else str(report["verdict"]).lower()
        if verdict == "unsafe" and not found:  # framework findings only: the user's is safe
            verdict = "safe"
        note = str(report["details"].get("verdict_line", ""))
    else:
        placement = _placement(report, row.scenario)
        found = set(placement["violations"])
        verdict = str(placement["verdict"]).lower()
        note = str(placement["note"])
    if row.expect is Expect.UNSAFE:
        assert verdict == "unsafe" and found & row.kinds, (verdict, found, where)
        assert out.status == 1, where
    elif row.expect is Expect.SAFE:
        assert verdict == "safe", (verdict, found, where)
        assert out.status == 0, f"the user's configuration is safe, yet: {where}"
    else:
        assert row.figure is not None
        assert verdict == "vacuous", (verdict, note, where)
        assert row.figure in note.replace(",", ""), f"no figure {row.figure} in {note!r}"


def _param(row: Row) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=row.wrong_today)] if row.wrong_today else []
    return pytest.param(row, id=row.id, marks=marks)


@pytest.mark.slow
@pytest.mark.parametrize("row", [_param(row) for row in ROWS])
def test_user_agent_verdict(row: Row) -> None:
    _hold(row, _check(row.spec))


# -- the fast twin: every agent loads as check loads it, without a key ------------------

#: Specs whose loading is wrong today, and what is wrong.
LOAD_WRONG_TODAY: dict[str, str] = {}


@contextmanager
def _no_keys() -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(_env())
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _load_param(spec: str) -> Any:
    wrong = LOAD_WRONG_TODAY.get(spec)
    marks = [pytest.mark.xfail(strict=True, reason=wrong)] if wrong else []
    return pytest.param(spec, id=spec.replace(".py:", ":"), marks=marks)


@pytest.mark.filterwarnings(
    "ignore:create_react_agent has been moved"
)  # the user's API, as written
@pytest.mark.parametrize(
    "spec",
    [_load_param(s) for s in dict.fromkeys(r.spec for r in ROWS if r.expect is not Expect.REFUSED)],
)
def test_user_agent_loads_without_keys(spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from prunecheck.sim.subjects.loops.target import load_target

    monkeypatch.chdir(ROOT)
    with _no_keys():
        target = load_target(f"loop:{AGENTS}/{spec}")
    assert target.framework in {"pydantic-ai", "langgraph", "openai-agents", "autogen"}
    assert target.adapter.tools(target.target), f"{spec}: the agent's tools were not found"


def test_legacy_agent_executor_is_refused_in_one_paragraph(monkeypatch: pytest.MonkeyPatch) -> None:
    """LangChain 1.x does not ship ``AgentExecutor`` (``langchain-classic`` does): the
    legacy agent is refused by name, not driven, not a traceback."""
    pytest.importorskip("langchain.agents")
    import langchain.agents

    from prunecheck.model.errors import PolicyError
    from prunecheck.sim.subjects.loops.target import load_target

    if hasattr(langchain.agents, "AgentExecutor"):
        pytest.skip("the installed LangChain still ships AgentExecutor")
    monkeypatch.chdir(ROOT)
    with _no_keys(), pytest.raises(PolicyError, match="AgentExecutor"):
        load_target(f"loop:{AGENTS}/held_back/lc_agent_executor.py:agent")
