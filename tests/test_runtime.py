"""The runtime step: each event, each knob, purity, impossible events and
misbehaving policies.  Scenarios are hand-built with a policy that proposes
fixed ids, so every incident below is exact."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from strategies import Scenario, scenarios

from prunecheck.model.actions import Action, Clear, Summarize
from prunecheck.model.config import CheckAt, Repair, RetryMode, RuntimeConfig, StreamLoss
from prunecheck.model.context import Role
from prunecheck.model.errors import ConfigError, PolicyError, TraceError
from prunecheck.model.events import (
    AssistantChunk,
    BudgetCheck,
    CallSpec,
    Effect,
    Event,
    ExternalWrite,
    FailureReason,
    Invoke,
    IssueBatch,
    ResultChunk,
    Retry,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.gates import Gate
from prunecheck.model.notes import NoteKind
from prunecheck.model.policies import (
    BUILTINS,
    ContextView,
    FunctionPolicy,
    Policy,
    builtin_policy,
)
from prunecheck.model.provider import Provider
from prunecheck.model.runtime import apply, step
from prunecheck.model.state import CallStatus, RuntimeState, initial_state

Row = tuple[int, str, tuple[str, ...], str]

ANTHROPIC_ORPHAN_C1 = (
    "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: c1. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
    "message."
)
ANTHROPIC_UNANSWERED_C2 = (
    "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "c2. Each `tool_use` block must have a corresponding `tool_result` block in the next "
    "message."
)
OPENAI_ORPHAN = (
    "Invalid parameter: messages with role 'tool' must be a response to a "
    "preceeding message with 'tool_calls'."
)
OPENAI_UNANSWERED_C2 = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding "
    "to each 'tool_call_id'. The following tool_call_ids did not have response messages: c2"
)


def fixed(*ids: str) -> Policy:
    """A policy that proposes to evict ``ids`` (those present), whatever the need."""

    def select(view: ContextView, need: int) -> list[str]:
        present = {m.id for m in view.messages}
        return [i for i in ids if i in present]

    return FunctionPolicy(select, "fixed")


def run(
    config: RuntimeConfig, policy: Policy, events: Sequence[Event]
) -> tuple[RuntimeState, list[Row]]:
    state = initial_state(config, policy)
    rows: list[Row] = []
    for event in events:
        for i in apply(state, event).incidents:
            rows.append((i.step, i.kind.value, i.ids, i.reason))
    return state, rows


def texts(config: RuntimeConfig, policy: Policy, events: Sequence[Event]) -> list[str]:
    state = initial_state(config, policy)
    return [i.text for e in events for i in apply(state, e).incidents if i.text]


def cfg(**knobs: Any) -> RuntimeConfig:
    return RuntimeConfig(**{"budget": 150, "hard_ceiling": 1000, **knobs})


# A batch of a read and a grep; the read's file changes while the grep runs.
BATCH: list[Event] = [
    UserMessage(100, "go"),
    IssueBatch((CallSpec("read_file", "a.py"), CallSpec("grep", "src")), 20),
    ResultChunk("c1", 50),
    ExternalWrite("a.py"),
    ResultChunk("c2", 30),
    Invoke(),
    Retry(),
    Invoke(),
]
PRUNE_SPLIT = (("m2", "m3"), "split_unit")


# ------------------------------------------------------------------ check_at
def test_check_after_append_prunes_mid_batch() -> None:
    _, rows = run(cfg(check_at=CheckAt.AFTER_APPEND), fixed("m2"), BATCH)
    assert rows == [
        (2, "invalid_prune", ("m2", "m3"), "split_unit"),
        (2, "invalid_prune", ("m2", "c2"), "pending_unit"),
        (2, "orphaned_result", ("m3", "c1"), ""),
        (4, "orphaned_result", ("m4", "c2"), ""),
        (5, "provider_rejection", ("c1", "c2"), "result_without_call"),
        (6, "duplicated_side_effect", ("c1", "a.py"), "changed_state"),
        (7, "provider_rejection", ("c1", "c2"), "result_without_call"),
    ]


def test_check_after_batch_waits_for_the_whole_batch() -> None:
    _, rows = run(cfg(check_at=CheckAt.AFTER_BATCH), fixed("m2"), BATCH)
    assert rows[:3] == [
        (4, "invalid_prune", ("m2", "m3", "m4"), "split_unit"),
        (4, "orphaned_result", ("m3", "c1"), ""),
        (4, "orphaned_result", ("m4", "c2"), ""),
    ]
    assert [r[:2] for r in rows[3:]] == [
        (5, "provider_rejection"),
        (6, "duplicated_side_effect"),
        (7, "provider_rejection"),
    ]


def test_check_before_invoke_prunes_at_the_invocation() -> None:
    state, rows = run(cfg(check_at=CheckAt.BEFORE_INVOKE), fixed("m2"), BATCH)
    assert [r[:2] for r in rows] == [
        (5, "invalid_prune"),
        (5, "orphaned_result"),
        (5, "orphaned_result"),
        (5, "provider_rejection"),
        (6, "duplicated_side_effect"),
        (7, "provider_rejection"),
    ]
    assert state.count("checks") == 2  # only the two invocations check


# --------------------------------------------------------------------- retry
WRITE_BATCH: list[Event] = [
    UserMessage(100, "go"),
    IssueBatch((CallSpec("read_file", "a.py"), CallSpec("write_file", "b.py", Effect.WRITE)), 20),
    ResultChunk("c1", 50),
    ExternalWrite("a.py"),
    ResultChunk("c2", 30),
    Invoke(),
    Retry(),
]


def test_retry_rerun_batch_duplicates_reads_of_changed_files_and_writes() -> None:
    state, rows = run(
        cfg(check_at=CheckAt.BEFORE_INVOKE, retry=RetryMode.RERUN_BATCH), fixed("m2"), WRITE_BATCH
    )
    assert rows[-2:] == [
        (6, "duplicated_side_effect", ("c1", "a.py"), "changed_state"),
        (6, "duplicated_side_effect", ("c2", "b.py"), "write"),
    ]
    assert state.world == {"a.py": 1, "b.py": 2}
    assert [state.calls[c].retry_of for c in ("c3", "c4")] == ["c1", "c2"]
    assert state.calls["c3"].version_seen == 1
    assert state.context.ids() == ["m1", "m3", "m4", "m5", "m6", "m7"]
    assert state.count("retries") == 1


def test_retry_idempotent_reissues_without_side_effects() -> None:
    state, rows = run(
        cfg(check_at=CheckAt.BEFORE_INVOKE, retry=RetryMode.IDEMPOTENT), fixed("m2"), WRITE_BATCH
    )
    assert "duplicated_side_effect" not in [r[1] for r in rows]
    assert state.world == {"a.py": 1, "b.py": 1}
    assert state.calls["c3"].version_seen == 0  # the cached result of c1
    assert state.context["m5"].tool_calls == ("c3", "c4")


def test_retry_without_rejection_does_nothing() -> None:
    state, rows = run(cfg(), fixed(), [UserMessage(10), Invoke(), Retry()])
    assert rows == [] and state.count("retries") == 0 and len(state.context) == 1


# ----------------------------------------------------------------- stream loss
STREAM: list[Event] = [
    UserMessage(100, "go"),
    IssueBatch((CallSpec("read_file", "a.py"),), 20),
    ResultChunk("c1", 40, last=False),
    ResultChunk("c1", 30, last=False),
    ResultChunk("c1", 30),
    Invoke(),
]
EVICTED_PARTIAL = [
    (2, "invalid_prune", ("m2", "m2"), "split_unit"),
    (2, "invalid_prune", ("m2", "m3"), "open_message"),
    (2, "invalid_prune", ("m2", "c1"), "pending_unit"),
]


def test_stream_loss_reappend_truncates_the_payload() -> None:
    state = initial_state(cfg(on_stream_loss=StreamLoss.REAPPEND), fixed("m3"))
    found = [i for e in STREAM for i in apply(state, e).incidents]
    assert [(i.step, i.kind.value, i.ids, i.reason) for i in found] == [
        *EVICTED_PARTIAL,
        (4, "truncated_payload", ("m4", "c1"), ""),
    ]
    assert found[-1].detail == (
        "result m4 holds chunks 2–3 of 3: the first 40 of 100 tokens are missing"
    )
    m4 = state.context["m4"]
    assert (m4.first_chunk, m4.tokens, m4.closed, m4.call_id) == (1, 60, True, "c1")


def test_stream_loss_drop_loses_the_whole_result() -> None:
    state = initial_state(cfg(on_stream_loss=StreamLoss.DROP), fixed("m3"))
    found = [i for e in STREAM for i in apply(state, e).incidents]
    assert [(i.step, i.kind.value, i.ids, i.reason) for i in found] == [
        *EVICTED_PARTIAL,
        (4, "truncated_payload", ("c1",), ""),
        (4, "unanswered_call", ("m2", "c1"), ""),
        (5, "provider_rejection", ("c1",), "call_without_result"),
    ]
    assert "none of it reached the context" in found[3].detail
    assert state.context.ids() == ["m1", "m2"]


def test_stream_loss_error_fails_the_call() -> None:
    state = initial_state(cfg(on_stream_loss=StreamLoss.ERROR), fixed("m3"))
    found = [i for e in STREAM for i in apply(state, e).incidents]
    assert [(i.step, i.kind.value, i.ids, i.reason) for i in found] == EVICTED_PARTIAL
    assert state.calls["c1"].status is CallStatus.FAILED
    assert state.context["m4"].text.startswith("error: stream error")
    assert state.count("invocations") == 1


def test_assistant_stream_reappended_after_eviction_is_truncated() -> None:
    events: list[Event] = [
        UserMessage(100, "go"),
        AssistantChunk(60, last=False, text="thinking"),
        AssistantChunk(10, last=False),
        AssistantChunk(10),
    ]
    _, rows = run(cfg(), fixed("m2"), events)
    assert rows == [
        (1, "invalid_prune", ("m2", "m2"), "open_message"),
        (3, "truncated_payload", ("m3",), ""),
    ]


# -------------------------------------------------------------------- repair
ORPHAN: list[Event] = [
    UserMessage(100, "go"),
    IssueBatch((CallSpec("read_file", "a.py"),), 20),
    ResultChunk("c1", 50),
    Invoke(),
]
UNANSWERED: list[Event] = [
    UserMessage(100, "go"),
    IssueBatch((CallSpec("read_file", "a.py"), CallSpec("grep", "b")), 20),
    ResultChunk("c1", 10),
    ResultChunk("c2", 50),
    Invoke(),
]


@pytest.mark.parametrize(
    "provider, orphan_text, unanswered_text",
    [
        (Provider.ANTHROPIC, ANTHROPIC_ORPHAN_C1, ANTHROPIC_UNANSWERED_C2),
        (Provider.OPENAI, OPENAI_ORPHAN, OPENAI_UNANSWERED_C2),
    ],
)
def test_repair_none_is_rejected_with_the_provider_text(
    provider: Provider, orphan_text: str, unanswered_text: str
) -> None:
    config = cfg(repair=Repair.NONE, provider=provider)
    _, rows = run(config, fixed("m2"), ORPHAN)
    assert rows == [
        (2, "invalid_prune", ("m2", "m3"), "split_unit"),
        (2, "orphaned_result", ("m3", "c1"), ""),
        (3, "provider_rejection", ("c1",), "result_without_call"),
    ]
    assert texts(config, fixed("m2"), ORPHAN) == [orphan_text]
    _, rows = run(config, fixed("m4"), UNANSWERED)
    assert rows == [
        (3, "invalid_prune", ("m2", "m2", "m3"), "split_unit"),
        (3, "unanswered_call", ("m2", "c2"), ""),
        (4, "provider_rejection", ("c2",), "call_without_result"),
    ]
    assert texts(config, fixed("m4"), UNANSWERED) == [unanswered_text]


def test_repair_drop_orphans_hides_the_rejection_by_dropping_history() -> None:
    state, rows = run(cfg(repair=Repair.DROP_ORPHANS), fixed("m2"), ORPHAN)
    assert [r[1] for r in rows] == ["invalid_prune", "orphaned_result"]
    assert state.context.ids() == ["m1"] and state.count("invocations") == 1
    state, rows = run(cfg(repair=Repair.DROP_ORPHANS), fixed("m4"), UNANSWERED)
    assert [r[1] for r in rows] == ["invalid_prune", "unanswered_call"]
    assert state.context.ids() == ["m1"]  # the whole batch is gone, answered c1 too


def test_repair_synthesize_fakes_missing_results() -> None:
    state, rows = run(cfg(repair=Repair.SYNTHESIZE), fixed("m4"), UNANSWERED)
    assert rows[-1] == (4, "synthesized_result", ("m5", "c2"), "")
    assert [r[1] for r in rows] == ["invalid_prune", "unanswered_call", "synthesized_result"]
    m5 = state.context["m5"]
    assert m5.synthetic and m5.call_id == "c2" and m5.unit_id == "m2"
    assert state.context.ids() == ["m1", "m2", "m3", "m5"]
    state, rows = run(cfg(repair=Repair.SYNTHESIZE), fixed("m2"), ORPHAN)
    assert [r[1] for r in rows] == ["invalid_prune", "orphaned_result"]  # orphan dropped


# ------------------------------------------------------------------- each event
def test_each_event_on_a_quiet_runtime() -> None:
    events: list[Event] = [
        SystemPrompt(50, "sys"),
        UserMessage(10, "q"),
        IssueBatch(
            (
                CallSpec("read_file", "a", background=True),
                CallSpec("grep", "b"),
                CallSpec("stat", "c"),
            ),
            5,
        ),
        ResultChunk("c2", 7, last=False),
        UserMessage(3, "hurry"),
        ToolFailure("c2"),
        ToolFailure("c3", FailureReason.TIMEOUT, 4),
        Invoke(),
        ResultChunk("c2", 3),
        UserMessage(4, "later"),
        Invoke(),
        ResultChunk("c1", 30),
        Invoke(),
        Retry(),
        BudgetCheck(),
        AssistantChunk(5, last=False, text="so"),
        AssistantChunk(6, last=False),
        Invoke(),
        AssistantChunk(7),
        Invoke(),
        ExternalWrite("a"),
    ]
    state = initial_state(RuntimeConfig(budget=10_000, hard_ceiling=20_000), fixed())
    kinds = []
    for event in events:
        result = apply(state, event)
        assert result.incidents == ()
        kinds.append([n.kind for n in result.notes])
    ctx = state.context
    # The user message that arrived mid-batch stays after the batch's unit.
    assert ctx.ids() == ["m1", "m2", "m3", "m6", "m7", "m9", "m5", "m8", "m10"]
    assert ctx["m1"].role is Role.SYSTEM and ctx["m3"].tool_calls == ("c1", "c2", "c3")
    assert kinds[5] == [NoteKind.EVICT, NoteKind.APPEND]  # failure drops the partial m4
    assert ctx["m6"].text == "error: tool error" and ctx["m7"].text == "error: tool timeout"
    assert kinds[8] == [NoteKind.CHUNK]  # a late chunk of a failed call is ignored
    assert [state.calls[c].status for c in ("c1", "c2", "c3")] == [
        CallStatus.DONE,
        CallStatus.FAILED,
        CallStatus.FAILED,
    ]
    assert (ctx["m10"].tokens, ctx["m10"].chunks, ctx["m10"].closed) == (18, 3, True)
    assert kinds[7] == kinds[10] == kinds[17] == [NoteKind.BLOCK]
    assert state.count("blocked_invocations") == 3 and state.count("invocations") == 2
    assert state.world == {"a": 1} and state.turn == 3 and state.last_user == "m8"
    assert state.count("checks") == 13  # after each of 12 appends, and the explicit one
    assert state.pending == {} and state.assistant_stream is None


def test_background_call_stays_pending_across_turns() -> None:
    state, rows = run(
        RuntimeConfig(),
        fixed(),
        [
            UserMessage(10),
            IssueBatch((CallSpec("watch", "log", background=True),), 5),
            UserMessage(10),
            UserMessage(10),
            Invoke(),
        ],
    )
    assert list(state.pending) == ["c1"] and state.turn == 3 and rows == []
    assert state.context.pending_in("m2") == {"c1"}


def test_commit_gate_fails_loudly_past_the_hard_ceiling() -> None:
    policy = builtin_policy("lowest_salience")
    assert policy is not None
    config = RuntimeConfig(budget=100, hard_ceiling=120, gate=Gate.COMMIT)
    state, rows = run(
        config,
        policy,
        [
            UserMessage(50, "q"),
            IssueBatch((CallSpec("read_file", "a"), CallSpec("grep", "b")), 5),
            ResultChunk("c1", 70),
            ResultChunk("c2", 10),
            UserMessage(5, "q2"),
        ],
    )
    assert rows == [(2, "deferral", ("c2",), "pending_call"), (2, "hard_ceiling_overrun", (), "")]
    assert state.context.ids() == ["m1", "m5"]  # whole batch unit evicted once c2 was in


def test_spill_gate_spills_and_reinjects_whole_units() -> None:
    policy = builtin_policy("lowest_salience")
    assert policy is not None
    config = RuntimeConfig(budget=100, hard_ceiling=120, gate=Gate.SPILL)
    state, rows = run(
        config,
        policy,
        [
            UserMessage(20, "q"),
            IssueBatch((CallSpec("read_file", "a"),), 5),
            ResultChunk("c1", 40),
            UserMessage(5, "q2"),
            IssueBatch((CallSpec("read_file", "b"), CallSpec("grep", "c")), 5),
            ResultChunk("c2", 70),
            ResultChunk("c3", 10),
            IssueBatch((CallSpec("read_file", "a"),), 5),
            ResultChunk("c4", 10),
        ],
    )
    assert rows == [
        (5, "deferral", ("c3",), "pending_call"),
        (5, "spill", ("m1",), ""),
        (5, "spill", ("m2", "m3"), ""),
        (7, "reinjection", ("m2", "m3"), ""),
        (7, "deferral", ("c4",), "pending_call"),
        (7, "spill", ("m5", "m6", "m7"), ""),
    ]
    assert state.context.ids() == ["m4", "m2", "m3", "m8", "m9"]
    assert set(state.spilled) == {"m1", "m5"}


def test_clear_and_summarize_actions() -> None:
    def select(view: ContextView, need: int) -> list[Action]:
        return [Clear("m3"), Summarize(("m1",), tokens=4, text="earlier")]

    state = initial_state(cfg(budget=100), FunctionPolicy(select, "tidy"))
    for event in (
        UserMessage(60),
        IssueBatch((CallSpec("read_file", "a"),), 5),
        ResultChunk("c1", 50),
    ):
        apply(state, event)
    ctx = state.context
    assert ctx.ids() == ["m4", "m2", "m3"]
    assert ctx["m3"].cleared and ctx["m3"].tokens == 8
    assert ctx["m4"].summary_of == ("m1",) and ctx["m4"].tokens == 4
    assert ctx.used == 4 + 5 + 8


# ----------------------------------------------------------------- purity
def _orders(state: RuntimeState) -> tuple[object, ...]:
    ctx = state.context
    return (
        ctx.ids(),
        list(ctx._blocks),
        ctx.open_ids(),
        ctx.pending_units(),
        list(state.pending),
        list(state.calls),
        list(state.spilled),
    )


@given(scenarios())
def test_step_is_pure_and_equals_apply_on_a_copy(scenario: Scenario) -> None:
    state = scenario.run_state(record=True)
    for event in scenario.events:
        before = copy.deepcopy(state)
        new, result = step(state, event)
        assert state == before and _orders(state) == _orders(before), f"{event} mutated input"
        twin = copy.deepcopy(state)
        assert apply(twin, event) == result
        assert new == twin and _orders(new) == _orders(twin)
        state = new


# ------------------------------------------------------------- impossible events
@pytest.mark.parametrize(
    "events, message",
    [
        (
            [IssueBatch((CallSpec("a"),), 5), AssistantChunk(5)],
            "assistant text while call(s) c1 are pending",
        ),
        (
            [IssueBatch((CallSpec("a"),), 5), IssueBatch((CallSpec("b"),), 5)],
            "a tool batch while call(s) c1 are pending",
        ),
        (
            [AssistantChunk(5, last=False), IssueBatch((CallSpec("b"),), 5)],
            "a tool batch while assistant text is still streaming",
        ),
        ([ResultChunk("c1", 5)], "a result chunk for unknown call 'c1'"),
        (
            [IssueBatch((CallSpec("a"),), 5), ResultChunk("c1", 5), ResultChunk("c1", 5)],
            "a result chunk for call 'c1', whose result is already complete",
        ),
        ([ToolFailure("c7")], "a tool error for unknown call 'c7'"),
    ],
)
def test_impossible_events_raise_trace_error(events: list[Event], message: str) -> None:
    state = initial_state(RuntimeConfig(), fixed())
    for event in events[:-1]:
        apply(state, event)
    before = copy.deepcopy(state)
    with pytest.raises(TraceError) as info:
        step(state, events[-1])
    assert info.value.subject == f"step {len(events)}"  # steps count from 1
    assert message in info.value.rule and info.value.hint
    assert state == before


def test_a_non_event_raises_trace_error() -> None:
    with pytest.raises(TraceError, match="is not an event"):
        # not an event, on purpose: the runtime must say so
        apply(initial_state(RuntimeConfig(), fixed()), "user")  # type: ignore[arg-type]


# ------------------------------------------------------------- bad policies
OVER = [UserMessage(100), UserMessage(100)]


def _policy_error(select: object, name: str = "bad") -> PolicyError:
    # ``select`` may break the policy contract on purpose (garbage answers)
    state = initial_state(cfg(), FunctionPolicy(select, name))  # type: ignore[arg-type]
    apply(state, OVER[0])
    with pytest.raises(PolicyError) as info:
        apply(state, OVER[1])
    return info.value


def test_policy_that_raises() -> None:
    def select(view: ContextView, need: int) -> list[str]:
        raise KeyError("salience")

    error = _policy_error(select)
    assert error.subject == "policy 'bad' at step 2"
    assert error.rule == "select(view, need=50) raised KeyError: 'salience'."
    assert "Traceback" not in error.paragraph() and error.hint


@pytest.mark.parametrize(
    "returned, rule",
    [
        (["m9"], "select() returned unknown message id 'm9'; it is not in the context."),
        ([3], "select() returned 3 (int), which is neither a message id nor an action."),
        (None, "select() must return an iterable of message ids or actions, got NoneType."),
        ("m1", "select() must return an iterable of message ids or actions, got str."),
        ([Clear("m7")], "select() returned unknown message id 'm7'; it is not in the context."),
        ([Summarize(())], "Summarize() needs at least one message id."),
    ],
)
def test_policy_returning_garbage(returned: object, rule: str) -> None:
    error = _policy_error(lambda view, need: returned, "trimmer")
    assert error.subject == "policy 'trimmer' at step 2"
    assert error.rule == rule


# ------------------------------------------------------------------ config
def test_config_validation_and_json_round_trip() -> None:
    with pytest.raises(ConfigError, match="positive"):
        RuntimeConfig(budget=0)
    with pytest.raises(ConfigError) as info:
        RuntimeConfig(budget=100, hard_ceiling=50)
    assert info.value.subject == "hard_ceiling"
    config = RuntimeConfig(
        123,
        456,
        Gate.SPILL,
        CheckAt.AFTER_BATCH,
        RetryMode.IDEMPOTENT,
        StreamLoss.DROP,
        Repair.SYNTHESIZE,
        Provider.OPENAI,
    )
    assert RuntimeConfig.from_json(config.to_json()) == config
    with pytest.raises(ConfigError) as info:
        RuntimeConfig.from_json({"gate": "maybe"})
    assert (
        info.value.subject == "config.gate" and "none, reference, commit, spill" in info.value.rule
    )
    bad: object
    for bad in ({"budgett": 1}, {"budget": "1"}, {"budget": True}, []):
        with pytest.raises(ConfigError):
            RuntimeConfig.from_json(bad)


# ------------------------------------------------------------------ sessions
def test_max_retries_is_a_runtime_knob_that_old_configs_default() -> None:
    from prunecheck.model.config import DEFAULT_MAX_RETRIES

    assert (
        RuntimeConfig.from_json({"budget": 100, "hard_ceiling": 200}).max_retries
        == DEFAULT_MAX_RETRIES
        == 2
    )
    config = RuntimeConfig(max_retries=5)
    assert RuntimeConfig.from_json(config.to_json()) == config
    with pytest.raises(ConfigError, match="max_retries"):
        RuntimeConfig(max_retries=-1)
    with pytest.raises(ConfigError, match="max_retries"):
        RuntimeConfig.from_json({"max_retries": "two"})


def _broken_history() -> list[Event]:
    """A prune splits a batch: every invocation afterwards is rejected."""
    return [
        UserMessage(10),
        IssueBatch((CallSpec("read_file", "a"), CallSpec("grep", "b")), 10),
        ResultChunk("c1", 300),
        UserMessage(150),
        ResultChunk("c2", 10),
    ]


def test_the_rejection_after_the_last_retry_aborts_the_session_and_a_new_one_starts() -> None:
    from prunecheck.model.events import NewSession, SystemPrompt

    config = RuntimeConfig(budget=400, hard_ceiling=2000, max_retries=1)
    state = initial_state(config, BUILTINS["recency"]())
    seen: list[list[str]] = []
    for event in [*_broken_history(), Invoke(), Retry(), Invoke()]:
        seen.append([i.kind.value for i in apply(state, event).incidents])
    assert "provider_rejection" in seen[5] and "session_abort" not in seen[5]
    assert seen[7].count("session_abort") == 1 and state.count("session_aborts") == 1
    assert "nothing to do" in " ".join(n.text for n in apply(state, Retry()).notes)
    apply(state, NewSession())
    assert len(state.context) == 0 and not state.orphans and state.count("sessions") == 1
    apply(state, SystemPrompt(10))
    apply(state, UserMessage(10))
    assert not apply(state, Invoke()).incidents  # a fresh context is never rejected
    assert state.next_call > 3  # ids stay unique across sessions (c1, c2 and retries)


def test_a_new_session_while_a_call_is_pending_is_impossible() -> None:
    from prunecheck.model.events import NewSession

    state = initial_state(RuntimeConfig(), BUILTINS["recency"]())
    for event in _broken_history()[:2]:
        apply(state, event)
    with pytest.raises(TraceError, match="new session"):
        apply(state, NewSession())
