"""Tests of prunecheck.model.provider: provider tool pairing rules and rendering."""

from __future__ import annotations

import doctest
import itertools
import json
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prunecheck.model import provider as provider_module
from prunecheck.model.context import Message, Role
from prunecheck.model.errors import TranscriptError
from prunecheck.model.provider import (
    CALL_WITHOUT_RESULT,
    RESULT_WITHOUT_CALL,
    Provider,
    ProviderError,
    implicated_calls,
    render,
    validate,
)
from prunecheck.model.provider import request_body as provider_request_body
from prunecheck.model.provider import rules as provider_rules

ANT, OAI = Provider.ANTHROPIC, Provider.OPENAI


def msg(
    mid: str,
    role: Role,
    text: str = "",
    *,
    calls: tuple[str, ...] = (),
    call_id: str | None = None,
    cleared: bool = False,
    summary_of: tuple[str, ...] = (),
) -> Message:
    number = int(mid[1:])
    return Message(
        mid, role, 10, 1, float(number), tool_calls=calls, call_id=call_id,
        unit_id=mid, text=text, cleared=cleared, summary_of=summary_of,
    )  # fmt: skip


def anthropic_result_without_call(n: int, k: int, cid: str) -> str:
    return (
        f"messages.{n}.content.{k}: unexpected `tool_use_id` found in `tool_result` blocks: "
        f"{cid}. Each `tool_result` block must have a corresponding `tool_use` block in the "
        "previous message."
    )


def anthropic_call_without_result(n: int, ids: str) -> str:
    return (
        f"messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately "
        f"after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block "
        "in the next message."
    )


OPENAI_RESULT_WITHOUT_CALL = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
    "message with 'tool_calls'."
)


def openai_call_without_result(ids: str) -> str:
    return (
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response "
        f"messages: {ids}"
    )


# A context with a single call, a user message, then a parallel batch of two.
CTX = [
    msg("m0", Role.SYSTEM, "You are a coding agent."),
    msg("m1", Role.USER, "Why does CI fail?"),
    msg("m2", Role.ASSISTANT, "Reading the workflow.", calls=("c1",)),
    msg("m3", Role.TOOL, "python-version: 3.10", call_id="c1"),
    msg("m4", Role.USER, "Also check the Makefile."),
    msg("m5", Role.ASSISTANT, calls=("c2", "c3")),
    msg("m6", Role.TOOL, "test: pytest", call_id="c3"),
    msg("m7", Role.TOOL, "all: build", call_id="c2"),
    msg("m8", Role.ASSISTANT, "CI pins 3.10."),
]
TOOLS = {"c1": ("read_file", ".ci/build.yml"), "c2": ("read_file", "Makefile")}


def without(*ids: str) -> list[Message]:
    return [m for m in CTX if m.id not in ids]


def texts(errors: list[ProviderError]) -> list[str]:
    return [e.text for e in errors]


# ------------------------------------------------------------------ render
@pytest.mark.parametrize("provider", [ANT, OAI])
def test_well_formed_context_validates(provider: Provider) -> None:
    body = render(CTX, provider, tools=TOOLS)
    assert validate(body, provider) == []
    assert json.loads(json.dumps(body)) == body


def test_render_anthropic_body() -> None:
    body = render(CTX, ANT, tools=TOOLS)
    assert list(body) == ["model", "max_tokens", "system", "messages"]
    assert body["model"] == "claude-sonnet-4-5"
    assert body["system"] == "You are a coding agent."
    assert body["messages"] == [
        {"role": "user", "content": "Why does CI fail?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Reading the workflow."},
            {"type": "tool_use", "id": "c1", "name": "read_file",
             "input": {"path": ".ci/build.yml"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "python-version: 3.10"},
            {"type": "text", "text": "Also check the Makefile."}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "c2", "name": "read_file", "input": {"path": "Makefile"}},
            {"type": "tool_use", "id": "c3", "name": "read_file", "input": {"path": "c3.txt"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c3", "content": "test: pytest"},
            {"type": "tool_result", "tool_use_id": "c2", "content": "all: build"}]},
        {"role": "assistant", "content": "CI pins 3.10."},
    ]  # fmt: skip


def test_render_openai_body() -> None:
    body = render(CTX, OAI, tools=TOOLS, model="gpt-4o")
    assert list(body) == ["model", "messages"]
    assert body["model"] == "gpt-4o"
    messages = body["messages"]
    assert isinstance(messages, list)
    assert [m["role"] for m in messages] == [
        "system", "user", "assistant", "tool", "user", "assistant", "tool", "tool", "assistant"
    ]  # fmt: skip
    assert messages[5] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c2", "type": "function",
             "function": {"name": "read_file", "arguments": '{"path": "Makefile"}'}},
            {"id": "c3", "type": "function",
             "function": {"name": "read_file", "arguments": '{"path": "c3.txt"}'}},
        ],
    }  # fmt: skip
    assert messages[2]["content"] == "Reading the workflow."
    assert messages[6] == {"role": "tool", "tool_call_id": "c3", "content": "test: pytest"}
    assert json.loads(messages[5]["tool_calls"][0]["function"]["arguments"]) == {"path": "Makefile"}


def test_render_cleared_summary_and_placeholder() -> None:
    ctx = [
        msg("m1", Role.ASSISTANT, "read two files", summary_of=("m2", "m3", "m4")),
        msg("m5", Role.USER),
        msg("m6", Role.ASSISTANT, "old thought", calls=("c1",), cleared=True),
        msg("m7", Role.TOOL, "huge output", call_id="c1", cleared=True),
    ]  # fmt: skip
    anthropic = render(ctx, ANT)
    assert "system" not in anthropic
    assert anthropic["messages"] == [
        {"role": "user", "content": [
            {"type": "text", "text": "[summary of 3 messages] read two files"},
            {"type": "text", "text": "(m5)"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "[cleared]"},
            {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "c1.txt"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "[cleared]"}]},
    ]  # fmt: skip
    openai = render(ctx, OAI)
    assert openai["model"] == "gpt-4.1"
    messages = openai["messages"]
    assert isinstance(messages, list)
    assert [m["content"] for m in messages] == [
        "[summary of 3 messages] read two files", "(m5)", "[cleared]", "[cleared]"
    ]  # fmt: skip
    assert validate(anthropic, ANT) == [] and validate(openai, OAI) == []


def test_render_merges_consecutive_assistants_and_users_for_anthropic() -> None:
    ctx = [
        msg("m1", Role.USER, "one"),
        msg("m2", Role.USER, "two"),
        msg("m3", Role.ASSISTANT, "thinking"),
        msg("m4", Role.ASSISTANT, calls=("c1",)),
        msg("m5", Role.SYSTEM, "late system note"),
        msg("m6", Role.TOOL, "out", call_id="c1"),
    ]
    body = render(ctx, ANT)
    assert body["system"] == "late system note"
    messages = body["messages"]
    assert isinstance(messages, list)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in messages[0]["content"]] == ["text", "text"]
    assert [b["type"] for b in messages[1]["content"]] == ["text", "tool_use"]
    assert validate(body, ANT) == []


def test_render_puts_tool_results_before_user_text_when_the_user_spoke_first() -> None:
    ctx = [
        msg("m1", Role.ASSISTANT, calls=("c1",)),
        msg("m2", Role.USER, "still there?"),
        msg("m3", Role.TOOL, "done", call_id="c1"),
    ]
    body = render(ctx, ANT)
    messages = body["messages"]
    assert isinstance(messages, list)
    assert [b["type"] for b in messages[1]["content"]] == ["tool_result", "text"]
    assert validate(body, ANT) == []
    # OpenAI allows nothing between a call and its tool messages.
    assert [e.kind for e in validate(render(ctx, OAI), OAI)] == [
        CALL_WITHOUT_RESULT, RESULT_WITHOUT_CALL
    ]  # fmt: skip


def test_render_rejects_tool_message_without_call() -> None:
    with pytest.raises(ValueError, match="m1"):
        render([msg("m1", Role.TOOL, "x")], OAI)


# ------------------------------------------------------------ the errors
def test_removed_call_message_gives_result_without_call() -> None:
    errors = validate(render(without("m5"), ANT), ANT)
    assert texts(errors) == [
        anthropic_result_without_call(2, 1, "c3"),
        anthropic_result_without_call(2, 2, "c2"),
    ]
    assert [(e.kind, e.path, e.ids, e.status) for e in errors] == [
        (RESULT_WITHOUT_CALL, "messages.2.content.1", ("c3",), 400),
        (RESULT_WITHOUT_CALL, "messages.2.content.2", ("c2",), 400),
    ]
    errors = validate(render(without("m5"), OAI), OAI)
    assert texts(errors) == [OPENAI_RESULT_WITHOUT_CALL] * 2
    assert [(e.path, e.ids) for e in errors] == [("messages.5", ("c3",)), ("messages.6", ("c2",))]


def test_removed_result_gives_call_without_result() -> None:
    assert texts(validate(render(without("m6"), ANT), ANT)) == [
        anthropic_call_without_result(3, "c3")
    ]
    assert texts(validate(render(without("m6"), OAI), OAI)) == [openai_call_without_result("c3")]
    errors = validate(render(without("m6", "m7"), ANT), ANT)
    assert texts(errors) == [anthropic_call_without_result(3, "c2, c3")]
    assert errors[0].ids == ("c2", "c3")
    errors = validate(render(without("m6", "m7"), OAI), OAI)
    assert texts(errors) == [openai_call_without_result("c2, c3")]
    assert (errors[0].path, errors[0].kind) == ("messages.5", CALL_WITHOUT_RESULT)


def test_a_call_with_nothing_after_it_is_unanswered() -> None:
    ctx = [msg("m1", Role.USER, "go"), msg("m2", Role.ASSISTANT, calls=("c1",))]
    assert texts(validate(render(ctx, ANT), ANT)) == [anthropic_call_without_result(1, "c1")]
    assert texts(validate(render(ctx, OAI), OAI)) == [openai_call_without_result("c1")]


def test_all_errors_in_message_order() -> None:
    body = [
        {"role": "tool", "tool_call_id": "x0", "content": "a"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}, {"id": "c2"}]},
        {"role": "tool", "tool_call_id": "x1", "content": "b"},
        {"role": "tool", "tool_call_id": "c2", "content": "c"},
        {"role": "user", "content": "d"},
        {"role": "tool", "tool_call_id": "x2", "content": "e"},
    ]
    errors = validate(body, OAI)
    assert [(e.path, e.kind, e.ids) for e in errors] == [
        ("messages.0", RESULT_WITHOUT_CALL, ("x0",)),
        ("messages.1", CALL_WITHOUT_RESULT, ("c1",)),
        ("messages.2", RESULT_WITHOUT_CALL, ("x1",)),
        ("messages.5", RESULT_WITHOUT_CALL, ("x2",)),
    ]
    assert implicated_calls(errors) == {"x0", "c1", "x1", "x2"}


def test_anthropic_result_must_answer_the_previous_message_only() -> None:
    body = {"messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "again"},
                                     {"type": "tool_result", "tool_use_id": "t1"}]},
    ]}  # fmt: skip
    assert texts(validate(body, ANT)) == [anthropic_result_without_call(3, 1, "t1")]


def test_parallel_batch_round_trip_in_any_order() -> None:
    calls = ("c1", "c2", "c3")
    for order in itertools.permutations(calls):
        ctx = [msg("m1", Role.USER, "read three"), msg("m2", Role.ASSISTANT, calls=calls)]
        ctx += [msg(f"m{3 + i}", Role.TOOL, cid, call_id=cid) for i, cid in enumerate(order)]
        ctx.append(msg("m9", Role.USER, "and now?"))
        for provider in (ANT, OAI):
            assert validate(render(ctx, provider), provider) == [], (order, provider)
        messages = render(ctx, ANT)["messages"]
        assert isinstance(messages, list)
        last = messages[-1]
        assert [b.get("tool_use_id") for b in last["content"]] == [*order, None]


@pytest.mark.parametrize("provider", [ANT, OAI])
def test_bare_list_and_request_body_agree(provider: Provider) -> None:
    for ctx in (CTX, without("m5"), without("m6", "m7")):
        body = render(ctx, provider)
        assert validate(body["messages"], provider) == validate(body, provider)


def test_provider_error_prints_as_http_answer() -> None:
    error = validate([{"role": "tool", "tool_call_id": "c9", "content": ""}], OAI)[0]
    assert error.provider is OAI
    assert str(error) == f"HTTP 400 (openai): {OPENAI_RESULT_WITHOUT_CALL}"
    assert error.ids == ("c9",)


# ------------------------------------------------------- not a transcript
USE = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}

NOT_TRANSCRIPTS = [
    (ANT, "hello", "t.json", "JSON string"),
    (OAI, 42, "t.json", "JSON number"),
    (ANT, {"model": "x"}, "t.json", "without 'messages'"),
    (OAI, {"messages": {"role": "user"}}, "t.json", "JSON object where a list"),
    (ANT, {"system": 3, "messages": []}, "t.json: system", "string or a list"),
    (OAI, [["user", "hi"]], "t.json: messages[0]", "JSON array"),
    (OAI, [{"content": "hi"}], "t.json: messages[0]", "no 'role'"),
    (OAI, [{"role": "wizard", "content": "hi"}], "t.json: messages[0]", "role 'wizard'"),
    (ANT, [{"role": "tool", "content": "x"}], "t.json: messages[0]", "role 'tool'"),
    (ANT, [{"role": "system", "content": "x"}], "t.json: messages[0]", "role 'system'"),
    (ANT, [{"role": "user", "content": 7}], "t.json: messages[0]", "content of type number"),
    (ANT, [{"role": "user"}], "t.json: messages[0]", "content of type null"),
    (OAI, [{"role": "user", "content": {"a": 1}}], "t.json: messages[0]", "type object"),
    (ANT, [{"role": "user", "content": ["hi"]}], "t.json: messages[0].content[0]", "block"),
    (ANT, [{"role": "user", "content": [USE]}], "t.json: messages[0].content[0]", "tool_use"),
    (ANT, [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}],
     "t.json: messages[0].content[0]", "string 'tool_use_id'"),
    (ANT, [{"role": "assistant", "content": [{"type": "tool_use", "id": 5}]}],
     "t.json: messages[0].content[0]", "string 'id' (found number)"),
    (OAI, [{"role": "tool", "content": "x"}], "t.json: messages[0]", "'tool_call_id'"),
    (OAI, [{"role": "assistant", "tool_calls": {"id": "c1"}}], "t.json: messages[0]", "tool_calls"),
    (OAI, [{"role": "user", "content": "x", "tool_calls": [{"id": "c1"}]}], "t.json: messages[0]",
     "user message"),
    (OAI, [{"role": "assistant", "tool_calls": ["c1"]}], "t.json: messages[0].tool_calls[0]",
     "JSON string"),
    (OAI, [{"role": "assistant", "tool_calls": [{"type": "function"}]}],
     "t.json: messages[0].tool_calls[0]", "string 'id'"),
]  # fmt: skip


@pytest.mark.parametrize(("provider", "payload", "subject", "rule"), NOT_TRANSCRIPTS)
def test_not_a_transcript(provider: Provider, payload: object, subject: str, rule: str) -> None:
    with pytest.raises(TranscriptError) as info:
        validate(payload, provider, source="t.json")
    error = info.value
    assert error.subject == subject
    assert rule in error.rule
    assert error.hint
    assert "\n" not in error.paragraph()


def test_anthropic_tool_role_hints_at_openai() -> None:
    with pytest.raises(TranscriptError, match="validated as openai"):
        validate([{"role": "tool", "tool_call_id": "c1", "content": ""}], ANT)


def test_unknown_block_types_and_openai_extras_are_accepted() -> None:
    anthropic = [
        {"role": "user", "content": [{"type": "image", "source": {}}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]},
    ]
    openai = [{"role": "developer", "content": "be terse"},
              {"role": "user", "content": [{"type": "text", "text": "hi"}]},
              {"role": "assistant", "content": "hello", "tool_calls": []}]  # fmt: skip
    assert validate(anthropic, ANT) == []
    assert validate(openai, OAI) == []


@pytest.mark.parametrize(
    "module", [provider_rules, provider_request_body], ids=lambda m: m.__name__
)
def test_doctests(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.attempted >= 2
    assert result.failed == 0


def test_the_package_keeps_the_names_of_the_module_it_replaced() -> None:
    """``prunecheck.model.provider`` was one module; it is a package of three
    (vocabulary, rules, request bodies) that re-exports the same names."""
    assert set(provider_module.__all__) >= {
        "CALL_WITHOUT_RESULT",
        "RESULT_WITHOUT_CALL",
        "Provider",
        "ProviderError",
        "implicated_calls",
        "render",
        "validate",
    }
    for name in provider_module.__all__:
        assert getattr(provider_module, name) is not None, name
    assert provider_module.validate is provider_rules.validate
    assert provider_module.render is provider_request_body.render
    assert provider_module.REJECTION_KINDS[:2] == (RESULT_WITHOUT_CALL, CALL_WITHOUT_RESULT)


# ---------------------------------------------------------------- property
@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    """Well-formed contexts, generated as a list of turns."""
    ids = itertools.count(1)

    def new(
        role: Role,
        text: str = "",
        *,
        calls: tuple[str, ...] = (),
        call_id: str | None = None,
        cleared: bool = False,
        summary_of: tuple[str, ...] = (),
    ) -> Message:
        return msg(
            f"m{next(ids)}",
            role,
            text,
            calls=calls,
            call_id=call_id,
            cleared=cleared,
            summary_of=summary_of,
        )

    out = [new(Role.SYSTEM, "be careful")] if draw(st.booleans()) else []
    for turn in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["user", "assistant", "summary", "batch"]))
        if kind == "user":
            out.append(new(Role.USER, draw(st.sampled_from(["", "go on"]))))
        elif kind == "assistant":
            out.append(new(Role.ASSISTANT, "done", cleared=draw(st.booleans())))
        elif kind == "summary":
            out.append(new(Role.USER, "earlier work", summary_of=("x1", "x2")))
        else:
            calls = tuple(f"call_{turn}_{j}" for j in range(draw(st.integers(1, 3))))
            text = draw(st.sampled_from(["", "let me look"]))
            out.append(new(Role.ASSISTANT, text, calls=calls))
            for cid in draw(st.permutations(calls)):
                out.append(new(Role.TOOL, "out", call_id=cid, cleared=draw(st.booleans())))
            if draw(st.booleans()):
                out.append(new(Role.USER, "and?"))
    return out


def _drop_call(ctx: list[Message], index: int, cid: str) -> list[Message]:
    m = ctx[index]
    calls = tuple(c for c in m.tool_calls if c != cid)
    changed = Message(m.id, m.role, m.tokens, m.turn, m.created_at, tool_calls=calls,
                      unit_id=m.unit_id, text=m.text, cleared=m.cleared)  # fmt: skip
    return [*ctx[:index], changed, *ctx[index + 1 :]]


@settings(max_examples=150, deadline=None)
@given(transcripts())
def test_well_formed_transcripts_validate_and_every_single_drop_is_caught(
    ctx: list[Message],
) -> None:
    for provider in (ANT, OAI):
        assert validate(render(ctx, provider), provider) == []
        for i, m in enumerate(ctx):
            if m.role == Role.TOOL:
                errors = validate(render(ctx[:i] + ctx[i + 1 :], provider), provider)
                assert any(e.kind == CALL_WITHOUT_RESULT and m.call_id in e.ids for e in errors)
            for cid in m.tool_calls:
                errors = validate(render(_drop_call(ctx, i, cid), provider), provider)
                assert any(e.kind == RESULT_WITHOUT_CALL and e.ids == (cid,) for e in errors)
