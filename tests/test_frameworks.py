"""Framework adapters: the one spec syntax, each library's trimmer run as the
library runs it, its own token count against the declared sizes, and its
output read back as evictions, summaries and clears.

Each adapter's tests skip only when its extra is missing (``make test``
installs them all)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from prunecheck.model.actions import Clear, Summarize
from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import PolicyError
from prunecheck.model.events import (
    CallSpec,
    Event,
    IssueBatch,
    ResultChunk,
    SystemPrompt,
    UserMessage,
)
from prunecheck.model.policies import BUILTINS, ContextView
from prunecheck.model.runtime import apply
from prunecheck.model.state import initial_state
from prunecheck.sim.subjects.catalog import ADAPTERS
from prunecheck.sim.subjects.frameworks import adapter_help, framework_policy, framework_spec
from prunecheck.sim.subjects.list_render import render_list
from prunecheck.sim.subjects.loader import load_local, load_policy

DATA = Path(__file__).resolve().parent / "data" / "frameworks"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "frameworks"

# m1 system, m2 user, m3 batch (c1, c2), m4/m5 results, m6 user, m7 batch (c3), m8 result,
# m9 user, m10 batch (c4), m11 result.  Realistic sizes: 200 .. 2,000 tokens.
EVENTS: list[Event] = [
    SystemPrompt(400, "You are a coding agent."),
    UserMessage(300, "fix the failing test"),
    IssueBatch((CallSpec("read_file", "src/app.py"), CallSpec("grep", "tests")), 120),
    ResultChunk("c1", 2000),
    ResultChunk("c2", 900),
    UserMessage(200, "also check the config"),
    IssueBatch((CallSpec("read_file", "cfg.yml"),), 80),
    ResultChunk("c3", 1500),
    UserMessage(250, "now run the tests"),
    IssueBatch((CallSpec("run_tests", "tests/"),), 60),
    ResultChunk("c4", 1800),
]


def _view(events: list[Event] = EVENTS) -> ContextView:
    state = initial_state(
        RuntimeConfig(budget=100_000, hard_ceiling=200_000), BUILTINS["recency"]()
    )
    for event in events:
        apply(state, event)
    return ContextView(
        state.context,
        pending_calls=frozenset(state.pending),
        budget=500,
        now=state.now,
        turn=state.turn,
    )


def _declared(view: ContextView) -> int:
    return sum(m.tokens for m in view.messages)


def _rendered(view: ContextView) -> list[dict[str, Any]]:
    return render_list(view.messages, "openai").messages


def _within(count: int, declared: int) -> None:
    assert abs(count - declared) <= 0.10 * declared, (count, declared)


# ------------------------------------------------------------------ spec syntax
def test_one_spec_syntax_parses_and_prints_canonically() -> None:
    assert (
        framework_spec("autogen", context="head_and_tail", tail_size="4")
        == "autogen:context=head_and_tail,tail_size=4"
    )
    assert (
        framework_spec("llamaindex", token_limit=900) == "llamaindex:memory=buffer,token_limit=900"
    )
    assert (
        framework_spec("langchain", start_on=("human",)) == "langchain:strategy=last,start_on=human"
    )


BAD_SETTINGS = [
    ("autogen:context=buffered,buffer_size=zero", "buffer_size must be a number"),
    ("autogen:size=3", "'size' is not a setting of autogen"),
    ("llamaindex:memory=vector", "memory must be one of buffer, memory"),
    ("llamaindex:token_limit=-5", "token_limit must be a positive token count or 'budget'"),
    ("semantic-kernel:reducer=truncation,target_count", "'target_count' is not a setting"),
    ("openai-agents:limit=0", "limit must be at least 1"),
    ("pydantic-ai:processor=", "names no processor"),
    ("autogen:context=nowhere.py:Ctx", "file nowhere.py does not exist"),
]
#: Caged in the fast suite: one spec refused by the spec parser, one by an adapter.
_CAGED_FAST = {"autogen:size=3", "openai-agents:limit=0"}


@pytest.mark.parametrize(("spec", "words"), BAD_SETTINGS)
def test_bad_settings_are_one_paragraph_errors(spec: str, words: str) -> None:
    """Each adapter's own refusal, loaded in this process (the next test
    loads them as a user does, in the cage, which carries the same
    paragraph back)."""
    with pytest.raises(PolicyError) as info:
        load_local(spec)
    assert words in info.value.paragraph()


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        pytest.param(*case, marks=() if case[0] in _CAGED_FAST else pytest.mark.slow)
        for case in BAD_SETTINGS
    ],
)
def test_bad_settings_are_one_paragraph_errors_through_the_cage(spec: str, words: str) -> None:
    """As a user loads a spec (a cage worker per spec): the paragraph the
    adapter wrote comes back whole.  Two specs in the fast suite (the cage
    does nothing adapter-specific); ``make test-all`` cages every one."""
    with pytest.raises(PolicyError) as info:
        load_policy(spec)
    assert words in info.value.paragraph()


def test_policies_and_help_show_every_adapter(capsys: pytest.CaptureFixture[str]) -> None:
    from prunecheck.sim.cli.app import main

    text = adapter_help()
    for name in ADAPTERS:
        assert f"  {name}:..." in text
    assert main(["policies"]) == 0
    assert "autogen:...  autogen-core ChatCompletionContext" in capsys.readouterr().out
    try:
        status = main(["search", "--help"])
    except SystemExit as exc:  # argparse's own exit, on older entry points
        status = int(exc.code or 0)
    assert status == 0
    assert "ADAPTER:key=value" in capsys.readouterr().out


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "autogen_core.model_context", None)
    with pytest.raises(PolicyError) as info:
        load_local("autogen:context=buffered")  # in-process: the patched modules apply
    assert "prunecheck[autogen]" in info.value.hint


# ------------------------------------------------------------------ langchain v1 middleware
def test_langchain_counts_the_declared_size() -> None:
    lc = pytest.importorskip("langchain_core.messages")
    utils = pytest.importorskip("langchain_core.messages.utils")
    view = _view()
    converted = lc.convert_to_messages(_rendered(view))
    _within(utils.count_tokens_approximately(converted), _declared(view))


def test_summarization_middleware_is_read_as_summarize() -> None:
    pytest.importorskip("langchain.agents.middleware")
    view = _view()
    policy = framework_policy("langchain-summarization", keep=3, trigger=1000)
    (group,) = policy.select(view, 1)
    assert isinstance(group, Summarize)
    # it keeps the last 3 messages (m9 user, m10 batch, m11 result) and never splits a pair
    assert group.message_ids == ("m2", "m3", "m4", "m5", "m6", "m7", "m8")
    assert 190 <= group.tokens <= 230  # the fake model's 200-token summary, with its preamble


def test_context_editing_middleware_is_read_as_clears() -> None:
    pytest.importorskip("langchain.agents.middleware")
    view = _view()
    out = framework_policy("langchain-context-editing:keep=1,trigger=1000").select(view, 1)
    assert out == [Clear("m4", 2), Clear("m5", 2), Clear("m8", 2)]  # "[cleared]", 9 chars


def test_any_agent_middleware_rewriting_messages() -> None:
    pytest.importorskip("langchain.agents.middleware")
    view = _view()
    spec = f"langchain-middleware:middleware={DATA / 'user_middleware.py'}:middleware"
    assert framework_policy(spec).select(view, 1) == ["m4", "m5"]


# ------------------------------------------------------------------ autogen
def test_autogen_stub_client_counts_the_declared_size() -> None:
    pytest.importorskip("autogen_core")
    import autogen_core
    import autogen_core.models

    from prunecheck.sim.subjects.frameworks.autogen_context import StubClient, to_autogen

    view = _view()
    _, history = _rendered(view)[:1], _rendered(view)[1:]
    pairs = to_autogen(history, autogen_core.models, autogen_core)
    counted = StubClient(10**6).count_tokens([m for m, _ in pairs])
    _within(counted, _declared(view) - 400)  # the system prompt is held apart


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # the last 4 autogen messages start on c3's result message, which it drops
        ("autogen:context=buffered,buffer_size=4", ["m2", "m3", "m4", "m5", "m6", "m7", "m8"]),
        # pops the middle message until under the limit: c1/c2's results go, their call stays
        ("autogen:context=token_limited,token_limit=3000", ["m4", "m5", "m6", "m7", "m8", "m9"]),
    ],
)
def test_autogen_contexts(spec: str, expected: list[str]) -> None:
    pytest.importorskip("autogen_core")
    assert framework_policy(spec).select(_view(), 1) == expected


def test_autogen_head_and_tail_placeholder_reads_as_summary() -> None:
    pytest.importorskip("autogen_core")
    out = framework_policy("autogen:context=head_and_tail,head_size=1,tail_size=3").select(
        _view(), 1
    )
    (group,) = out
    assert isinstance(group, Summarize) and group.text.startswith("Skipped")
    assert group.message_ids == ("m3", "m4", "m5", "m6", "m7", "m8")


def test_autogen_user_subclass() -> None:
    pytest.importorskip("autogen_core")
    spec = f"autogen:context={DATA / 'user_context.py'}:KeepLastThree"
    # m9 user, [m10 call], [m11 result]: autogen merges no more than it must
    assert framework_policy(spec).select(_view(), 1) == ["m2", "m3", "m4", "m5", "m6", "m7", "m8"]


# ------------------------------------------------------------------ llama-index
def test_llamaindex_tokenizer_counts_the_declared_size() -> None:
    utils = pytest.importorskip("llama_index.core.utils")
    view = _view()
    tokenizer = utils.get_tokenizer()
    counted = sum(len(tokenizer(m.get("content") or "")) for m in _rendered(view))
    _within(counted, _declared(view))


@pytest.mark.parametrize("memory", ["buffer", "memory"])
def test_llamaindex_memories_keep_a_recent_suffix(memory: str) -> None:
    pytest.importorskip("llama_index.core.memory")
    out = framework_policy(
        f"llamaindex:memory={memory},token_limit=3000,"
        "chat_history_token_ratio=1,token_flush_size=100"
    ).select(_view(), 1)
    assert all(isinstance(x, str) for x in out) and "m11" not in out and "m2" in out


# ------------------------------------------------------------------ semantic-kernel
def test_semantic_kernel_messages_carry_the_declared_size() -> None:
    sk = pytest.importorskip("semantic_kernel")
    from prunecheck.sim.subjects.frameworks.sk_reducer import to_semantic_kernel
    from prunecheck.sim.subjects.sized_content import approx_tokens

    view = _view()
    converted = to_semantic_kernel(_rendered(view), sk)
    counted = sum(
        approx_tokens(str(m.content or ""))
        + sum(
            approx_tokens(str(getattr(i, "result", "") or ""))
            for i in m.items
            if type(i).__name__ == "FunctionResultContent"
        )
        for m in converted
    )
    _within(counted, _declared(view))


def test_semantic_kernel_truncation_and_summarization() -> None:
    pytest.importorskip("semantic_kernel")
    view = _view()
    truncated = framework_policy(
        "semantic-kernel:reducer=truncation,target_count=4,threshold_count=0"
    ).select(view, 1)
    assert truncated == ["m2", "m3", "m4", "m5", "m6", "m7", "m8"]  # system kept
    (group,) = framework_policy(
        "semantic-kernel:reducer=summarization,target_count=4,threshold_count=0"
    ).select(view, 1)
    assert isinstance(group, Summarize) and group.tokens == 200


# ------------------------------------------------------------------ pydantic-ai
def test_pydantic_ai_parts_carry_the_declared_size() -> None:
    pm = pytest.importorskip("pydantic_ai.messages")
    from prunecheck.sim.subjects.frameworks.pydantic_ai_history import to_pydantic_ai
    from prunecheck.sim.subjects.sized_content import approx_tokens

    view = _view()
    history, _ = to_pydantic_ai(_rendered(view), pm)
    counted = 0
    for message in history:
        for part in message.parts:
            body = (
                part.args_as_json_str() + part.tool_name
                if isinstance(part, pm.ToolCallPart)
                else str(part.content)
            )
            counted += approx_tokens(body)
    _within(counted, _declared(view))


def test_pydantic_ai_documented_processors() -> None:
    pytest.importorskip("pydantic_ai")
    keep = f"pydantic-ai:processor={EXAMPLES / 'pydantic_ai_history.py'}:keep_recent_messages"
    # 7 pydantic-ai messages; the last 5 start at the request holding c1/c2's results,
    # whose call (m3) is dropped: the documented example orphans them
    assert framework_policy(keep).select(_view(), 1) == ["m1", "m2", "m3"]
    summarize = keep.replace("keep_recent_messages", "summarize_old_messages")
    assert framework_policy(summarize).select(_view(), 1) == []  # 7 messages: under 10


# ------------------------------------------------------------------ openai-agents
def test_openai_agents_items_carry_the_declared_size() -> None:
    pytest.importorskip("agents")
    from prunecheck.sim.subjects.frameworks.openai_agents_session import to_items
    from prunecheck.sim.subjects.sized_content import approx_tokens

    view = _view()
    rendered = _rendered(view)
    counted = 400  # the system prompt: instructions, not a session item
    for item, _ in to_items(rendered[1:]):
        text = item.get("output") or item.get("arguments", "") + item.get("name", "")
        if item.get("type") == "message":
            text = item["content"][0]["text"]
        counted += approx_tokens(str(text or item.get("content", "")))
    _within(counted, _declared(view))


@pytest.mark.parametrize(
    ("runtime", "expected"),
    [
        # 14 items; the last 10 lose m2 and m3's text and both function_call items
        ("session", ["m2", "m3"]),
        # the runner then drops the outputs whose call was cut off
        ("sdk", ["m2", "m3", "m4", "m5"]),
    ],
)
def test_openai_agents_session_limit(runtime: str, expected: list[str]) -> None:
    pytest.importorskip("agents")
    out = framework_policy(f"openai-agents:limit=10,runtime={runtime}").select(_view(), 1)
    assert out == expected


# ------------------------------------------------------------------ summaries are judged
def _summarize_before_last_user(ms: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replace everything between the system prompt and the last user
    message with one summary: whole units, when nothing is pending."""
    head = ms[:1] if ms and ms[0]["role"] == "system" else []
    users = [i for i, m in enumerate(ms) if m["role"] == "user"]
    if not users or users[-1] <= len(head):
        return ms
    return [*head, {"role": "user", "content": "Summary: " + "x " * 40}, *ms[users[-1] :]]


def _swallow_half_a_unit(ms: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Summarize up to and including the first call, keeping its results."""
    head = ms[:1] if ms and ms[0]["role"] == "system" else []
    at = next((i for i, m in enumerate(ms) if m.get("tool_calls")), None)
    if at is None or at + 1 >= len(ms) or ms[at + 1]["role"] != "tool":
        return ms
    return [*head, {"role": "user", "content": "Summary: " + "x " * 40}, *ms[at + 1 :]]


def test_a_summarizing_trimmer_is_checked_not_refused() -> None:
    from prunecheck.sim.api.check import check_policy
    from prunecheck.sim.api.verdict import Verdict

    (group,) = (
        __import__("prunecheck.sim.subjects.lists", fromlist=["list_policy"])
        .list_policy(_summarize_before_last_user, "openai")
        .select(_view(), 1)
    )
    assert isinstance(group, Summarize) and group.message_ids[0] == "m2"
    result = check_policy(
        _summarize_before_last_user,
        format="openai",
        levels=(0.6,),
        seeds=(1,),
        # two search runs: that the check runs is tested, not how far (20 found a
        # violation and spent a second shrinking it; the next test's search finds one)
        max_examples=2,
        placements=["after_append"],  # one placement: checking is what is tested, not where
    )
    assert result.verdict is not Verdict.ERROR and result.error is None
    assert sum(run.invocations for run in result.scenarios) > 0


def test_a_summary_that_swallows_half_a_unit_is_a_violation() -> None:
    from prunecheck.sim.api.check import check_policy
    from prunecheck.sim.api.verdict import Verdict

    result = check_policy(
        _swallow_half_a_unit,
        format="openai",
        levels=(0.6,),
        seeds=(1,),
        max_examples=10,  # the simulated run finds it; the search's runs are shrunk on top
        placements=["after_append"],  # one placement: the summary's verdict, not where it breaks
    )
    assert result.verdict is Verdict.UNSAFE
    assert "invalid_prune" in result.violations
    assert "summarized" in result.narrative


# ------------------------------------------------------------------ verdict table
def test_the_table_says_what_unsafe_means_in_the_quoted_invariant(tmp_path: Path) -> None:
    from prunecheck.sim.reports.claims import INVARIANT
    from prunecheck.sim.reports.frameworks import markdown

    text = markdown([], seed=1, root=tmp_path)
    assert f"\n> “{INVARIANT}”\n" in text and "*Unsafe* means" in text
    assert "domain document" not in text and "write-up" not in text


@pytest.mark.slow
def test_table_row_writes_a_reproduction_that_reproduces(tmp_path: Path) -> None:
    """autogen's TokenLimitedChatCompletionContext pops middle messages: the
    script shows the broken result with autogen-core alone."""
    pytest.importorskip("autogen_core")
    from prunecheck.sim.reports.frameworks import markdown, run_row, write_script

    row = run_row(
        "autogen:context=token_limited", seed=1, levels=(0.6,), seeds=(1,), max_examples=30
    )
    assert row.cells["before_invoke"].verdict == "unsafe"
    assert row.found is not None and row.found.complete
    row = write_script(row, tmp_path / "reports" / "frameworks")
    assert row.reproduced is True
    source = Path(row.script).read_text(encoding="utf-8")
    assert "prunecheck" not in source.split('"""', 2)[2]  # the code imports no prunecheck
    text = markdown([row], seed=1, root=tmp_path)
    assert "the trimmer itself breaks a complete, valid history" in text
    assert "](frameworks/autogen_context_token_limited.py)" in text  # relative to reports/
    assert "`python reports/frameworks/autogen_context_token_limited.py`" in text


def test_pairing_problems_name_what_a_trimmer_broke() -> None:
    from prunecheck.sim.subjects.frameworks.repro_templates import pairing_problems

    call: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "grep", "arguments": "{}"}},
        ],
    }
    r1: dict[str, Any] = {"role": "tool", "tool_call_id": "c1", "content": "one"}
    r2: dict[str, Any] = {"role": "tool", "tool_call_id": "c2", "content": "two"}
    given: list[dict[str, Any]] = [{"role": "user", "content": "go"}, call, r1, r2]
    assert pairing_problems(given, given, ()) == []
    assert pairing_problems(given, [r1, r2], ()) == [
        "orphaned tool message: the result of c1 is kept, its call is gone",
        "orphaned tool message: the result of c2 is kept, its call is gone",
    ]
    assert pairing_problems(given, [call, r1], ()) == [
        "call without its result: c2 is kept, its result was dropped"
    ]
    half = {**call, "tool_calls": call["tool_calls"][1:]}
    assert pairing_problems(given, [half, r2], ()) == [
        "parallel batch split: calls c2 are kept, c1 of the same assistant message are gone"
    ]
    assert pairing_problems(given[:2], [given[0]], [1]) == [
        "call c1 was dropped while its result is still pending: the result will arrive orphaned",
        "call c2 was dropped while its result is still pending: the result will arrive orphaned",
        "message 1 (assistant) was dropped while still streaming",
    ]


def test_the_table_states_its_longest_reproduction(tmp_path: Path) -> None:
    from prunecheck.sim.reports.frameworks import Cell, Row, longest_line, markdown

    def row(spec: str, **cells: Cell) -> Row:
        safe = {p: Cell("safe", 1.0) for p in ("after_append", "after_batch", "before_invoke")}
        return Row(spec, "lib", "1.0", {**safe, **cells})

    rows = [row("a:x=1", after_append=Cell("unsafe", 1.0, 4, harm=3))]
    rows.append(row("b:y=2", after_batch=Cell("unsafe", 1.0, 9)))
    line = longest_line(rows)
    assert line.startswith("Longest reproduction: **9 events** up to its violation (`b:y=2`")
    assert "over 2 unsafe cells; aim: 15 or fewer: every reproduction is within it." in line
    assert line in markdown(rows, seed=1, root=tmp_path)
    long = [*rows, row("c:z=3", after_append=Cell("unsafe", 1.0, 40, bound="the replay limit"))]
    assert "Above the aim: `c:z=3` at after_append" in longest_line(long)
    assert longest_line([row("d")]) == "No reproduction: no row is unsafe."


def test_the_committed_table_carries_shrunk_reproductions() -> None:
    """Every reproduction in reports/frameworks.md is at most AIM events up
    to its violation, or the report names the bound it reached; the table
    states its longest one."""
    from prunecheck.sim.api.minimal import AIM

    text = (Path(__file__).resolve().parent.parent / "reports" / "frameworks.md").read_text(
        encoding="utf-8"
    )
    lengths = [int(n) for n in re.findall(r"\*\*UNSAFE\*\* \((\d+) ev", text)]
    assert lengths, "no unsafe cell in the table"
    longest = re.search(r"Longest reproduction: \*\*(\d+) events\*\*", text)
    assert longest is not None and int(longest.group(1)) == max(lengths)
    above = sum(1 for n in lengths if n > AIM)
    assert text.count(f"reproduction above {AIM} events:") == above
