"""The provider strictness matrix: which provider rejects which broken or
repaired history, with which text.

Each history of :data:`HISTORIES` is built once, as our model's context (a
list of :class:`~prunecheck.model.context.Message`): the same conversation —
a system prompt, a user request, a parallel batch of two calls and their
results, the assistant's answer, a follow-up — after one kind of cut or
repair.  Each is then rendered as every provider's request body
(:func:`~prunecheck.model.provider.render`) and judged by that provider's
rules (:func:`~prunecheck.model.provider.validate`); a cell is the
provider's first error (its request location and exact text) or "accepts".
No cell is written by hand: the page is this module's output, held equal to
the committed ``docs/reference/provider-strictness.md`` by the tests
(``make docs`` writes it).  Its last section runs each framework's own repair
layer on the same histories (:mod:`.repair_layers`).

Run: ``python -m prunecheck.sim.reports.strictness`` (prints the page) or
``--out docs/reference/provider-strictness.md``.  O(histories × providers ×
messages).

Examples
--------
>>> cells = judge(history("result_without_call"))
>>> sorted({c.accepts for c in cells.values()})
[False]
>>> all(c.accepts for c in judge(history("intact")).values())
True
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from prunecheck.model.context import Message, Role
from prunecheck.model.provider import Provider, ProviderError, render, validate
from prunecheck.model.provider.openai_responses import reasoning_record

__all__ = [
    "HISTORIES",
    "Cell",
    "History",
    "history",
    "judge",
    "main",
    "page",
    "providers",
]

# ------------------------------------------------------------- the messages
_TOOLS = {"c1": ("read_file", "notes.txt"), "c2": ("read_file", "todo.txt")}


def _m(mid: str, role: Role, text: str = "", **more: object) -> Message:
    turn = 1 if mid in ("s", "u1") else 2
    return Message(mid, role, 20, turn, float(len(mid)), text=text, **more)  # type: ignore[arg-type]


_SYSTEM = _m("s", Role.SYSTEM, "You are a careful assistant.")
_USER = _m("u1", Role.USER, "Read my notes and my todo list.")
_BATCH = _m("a1", Role.ASSISTANT, "", tool_calls=("c1", "c2"), unit_id="a1")
_R1 = _m("r1", Role.TOOL, "notes: ship friday", call_id="c1", unit_id="a1")
_R2 = _m("r2", Role.TOOL, "todo: write tests", call_id="c2", unit_id="a1")
_ANSWER = _m("a2", Role.ASSISTANT, "You ship on Friday; first write the tests.")
_FOLLOW = _m("u2", Role.USER, "Thanks. What else is on the list?")
_CALL1 = _m("a1", Role.ASSISTANT, "", tool_calls=("c1",), unit_id="a1")
_CLEARED = _m("r1", Role.TOOL, "", call_id="c1", unit_id="a1", cleared=True)
_INVENTED = _m("r2", Role.TOOL, "[tool result unavailable]", call_id="c2", unit_id="a1",
               synthetic=True)  # fmt: skip
_SUMMARY = _m("sum", Role.USER, "read notes.txt and todo.txt: ship friday, write tests",
              summary_of=("a1", "r1", "r2"))  # fmt: skip
_SAY = _m("a0", Role.ASSISTANT, "Let me look at both files.")
_HALF_SUMMARY = _m("sum", Role.USER, "asked to read notes.txt and todo.txt", summary_of=("a1",))
# A reasoning model's turn: its reasoning item (OpenAI Responses) or signed thinking block
# (Anthropic), then the batch it decided on.
_THOUGHT = _m("t1", Role.ASSISTANT, "Both files are short: read them in parallel.",
              thought=True, unit_id="a1")  # fmt: skip
_BATCH_AFTER = _m("a1", Role.ASSISTANT, "", tool_calls=("c1", "c2"), unit_id="a1",
                  after_thought="t1")  # fmt: skip
_REASONED = (_SYSTEM, _USER, _THOUGHT, _BATCH_AFTER, _R1, _R2, _ANSWER, _FOLLOW)


@dataclass(frozen=True, slots=True)
class History:
    """One kind of broken or repaired history.

    Attributes
    ----------
    key : str
        Its name (``result_without_call`` …).
    title : str
        What it is, in a few words (the matrix's row).
    how : str
        How a trimmer or a repair layer produces it.
    messages : tuple of Message
        The context sent, in order.
    """

    key: str
    title: str
    how: str
    messages: tuple[Message, ...]


#: The conversation, whole.
_WHOLE = (_SYSTEM, _USER, _BATCH, _R1, _R2, _ANSWER, _FOLLOW)


def _without(*ids: str) -> tuple[Message, ...]:
    return tuple(m for m in _WHOLE if m.id not in ids)


def _replacing(mid: str, *new: Message) -> tuple[Message, ...]:
    return tuple(n for m in _WHOLE for n in (new if m.id == mid else (m,)))


#: The histories of the matrix, in its order.
HISTORIES: tuple[History, ...] = (
    History(
        "intact",
        "intact history (control)",
        "nothing removed: the batch of two calls, both results, the answer",
        _WHOLE,
    ),
    History(
        "result_without_call",
        "a result without its call",
        "a trimmer evicted the assistant message that issued the batch and kept its results",
        _without("a1"),
    ),
    History(
        "call_without_result",
        "a call without its result",
        "a trimmer evicted both results and kept the calls",
        _without("r1", "r2"),
    ),
    History(
        "partial_batch",
        "a partial batch",
        "a trimmer evicted one result of a parallel batch of two (the other kept)",
        _without("r2"),
    ),
    History(
        "dangling_call",
        "a call last in the request",
        "the history ends on the calls (results still running, or cut off the end)",
        _without("r1", "r2", "a2", "u2"),
    ),
    History(
        "whole_call_dropped",
        "a whole call dropped with its output",
        "one call removed from the batch together with its result; the other call and result kept",
        (_SYSTEM, _USER, _CALL1, _R1, _ANSWER, _FOLLOW),
    ),
    History(
        "whole_unit_dropped",
        "a whole unit dropped",
        "the batch and both results evicted together (a unit-safe trim)",
        _without("a1", "r1", "r2"),
    ),
    History(
        "cleared_result",
        "a cleared result (placeholder)",
        "a result's content replaced by the placeholder `[cleared]`, the call kept",
        _replacing("r1", _CLEARED),
    ),
    History(
        "synthesized_result",
        "a synthesized result (repair)",
        "a repair layer answered a call whose result was lost with text no tool produced",
        _replacing("r2", _INVENTED),
    ),
    History(
        "summary_for_unit",
        "a summary in place of a unit",
        "the batch and its results replaced by one summary message",
        (_SYSTEM, _USER, _SUMMARY, _ANSWER, _FOLLOW),
    ),
    History(
        "summary_splits_unit",
        "a summary that splits a unit",
        "the calls folded into a summary, the results kept after it",
        _replacing("a1", _HALF_SUMMARY),
    ),
    History(
        "user_between",
        "a user message between calls and results",
        "a message the user sent while the calls ran, appended before their results",
        (_SYSTEM, _USER, _BATCH, _FOLLOW, _R1, _R2, _ANSWER),
    ),
    History(
        "user_after_results",
        "user text right after the results",
        "the assistant's answer evicted, so the follow-up comes straight after the results",
        _without("a2"),
    ),
    History(
        "opening_request_dropped",
        "the opening request dropped",
        "a trimmer evicted the first user message, so the history starts with the calls",
        _without("u1"),
    ),
    History(
        "text_and_calls_apart",
        "the assistant's text and its calls in two messages",
        "a framework keeps the assistant's words and its calls as two consecutive messages",
        (_SYSTEM, _USER, _SAY, _BATCH, _R1, _R2, _ANSWER, _FOLLOW),
    ),
    History(
        "results_reordered",
        "results in another order than the calls",
        "the batch's results kept whole, the second before the first",
        (_SYSTEM, _USER, _BATCH, _R2, _R1, _ANSWER, _FOLLOW),
    ),
    History(
        "reasoning_intact",
        "a reasoning model's history, intact (control)",
        "the model reasoned before its batch (a reasoning item, a signed thinking block); "
        "nothing removed",
        _REASONED,
    ),
    History(
        "reasoning_dropped",
        "a dropped reasoning item",
        "a trimmer evicted the reasoning item the model wrote before its calls and kept the "
        "calls (replayed with their item ids, as a client replays a response's output)",
        tuple(m for m in _REASONED if m.id != "t1"),
    ),
    History(
        "reasoning_dropped_mid_turn",
        "a dropped reasoning item while the tool turn runs",
        "as above, in the request that sends the calls' results (the tool turn in progress)",
        (_SYSTEM, _USER, _BATCH_AFTER, _R1, _R2),
    ),
    History(
        "reasoning_without_item",
        "a reasoning item without its call",
        "a trimmer evicted the calls and their results and kept the reasoning item before them",
        tuple(m for m in _REASONED if m.id not in ("a1", "r1", "r2")),
    ),
)


def history(key: str) -> History:
    """The history named ``key`` (KeyError if none)."""
    for h in HISTORIES:
        if h.key == key:
            return h
    raise KeyError(key)


def providers() -> tuple[Provider, ...]:
    """Every provider whose requests prunecheck can render and check: the
    matrix's columns (a provider whose rules are known but whose request
    body is not written yet joins once it is)."""
    from prunecheck.sim.api.providers import judgeable

    return judgeable()


@dataclass(frozen=True, slots=True)
class Cell:
    """One provider's answer to one history: its first error, or None."""

    provider: Provider
    error: ProviderError | None

    @property
    def accepts(self) -> bool:
        return self.error is None


def judge(h: History) -> dict[Provider, Cell]:
    """Each provider's answer to ``h``: render its request, validate it."""
    out: dict[Provider, Cell] = {}
    for provider in providers():
        body = render(h.messages, provider, tools=_TOOLS)
        errors = validate(body, provider, stored=reasoning_record(h.messages))
        out[provider] = Cell(provider, errors[0] if errors else None)
    return out


# ------------------------------------------------------------------- the page
def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _code(text: str) -> str:
    """``text`` as inline code in a table cell (backticks in it kept)."""
    text = _cell(text)
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _shape(messages: Sequence[Message]) -> str:
    parts = []
    for m in messages:
        if m.thought:
            parts.append("reasoning")
        elif m.summary_of:
            parts.append(f"summary({'+'.join(m.summary_of)})")
        elif m.role is Role.TOOL:
            mark = "[cleared]" if m.cleared else "synthetic" if m.synthetic else ""
            parts.append(f"result {m.call_id}" + (f" {mark}" if mark else ""))
        elif m.tool_calls:
            parts.append(f"calls {','.join(m.tool_calls)}")
        else:
            parts.append(str(m.role))
    return " → ".join(parts)


def page(*, repairs: bool = True) -> str:
    """The matrix page, as ``docs/reference/provider-strictness.md`` holds it
    (``repairs=False``: without its last section, the framework repair
    layers, which imports the frameworks)."""
    cols = providers()
    judged = [(h, judge(h)) for h in HISTORIES]
    lines = [
        "# Provider strictness",
        "",
        "<!-- Generated by prunecheck.sim.reports.strictness (make docs writes it); "
        "do not edit. -->",
        "",
        "Which provider rejects which broken or repaired history, and with which text. "
        "Each history is built once in prunecheck's model (the same conversation: a system "
        "prompt, a request, a parallel batch of two calls `c1`, `c2` and their results, the "
        "answer, a follow-up), after one kind of cut or repair; it is rendered as each "
        "provider's request body and judged by that provider's rules, as `prunecheck "
        "validate` and `check --provider` judge a request. No cell is written by hand: "
        "`make docs` writes this page (`python -m prunecheck.sim.reports.strictness`), and "
        "a test holds the committed page equal to a fresh one. The commit guard told the "
        'providers its runtime sends to (`CommitGuard(..., provider="gemini")`) refuses a '
        "prune or spill that would leave a history such a provider rejects, naming the "
        "same rule and text ([deploy the commit gate]"
        "(../how-to/deploy-guard.md#tell-the-guard-where-the-history-goes)).",
        "",
        "A reasoning model's histories (the last rows) carry the reasoning the model wrote "
        "before its calls: an OpenAI Responses `reasoning` item, an Anthropic signed "
        "`thinking` block; the other APIs' bodies do not carry it. The Responses server "
        "knows which reasoning item each output item of a stored response followed, so "
        "the calls are judged with that record, as the server judges them.",
        "",
        "A provider that *accepts* a history has not judged whether anything was lost: a "
        "whole call dropped, a cleared result or a synthesized one all pass every "
        "provider's rules, and only the [loop verdicts](../explanation/loop-verdicts.md) "
        "(silent loss, honest placeholder or invented result) tell them apart.",
        "",
        "## The matrix",
        "",
        "| history | " + " | ".join(f"`{p}`" for p in cols) + " |",
        "|---|" + "---|" * len(cols),
    ]
    for h, cells in judged:
        row = [h.title]
        for p in cols:
            error = cells[p].error
            row.append(
                "accepts" if error is None else f"**rejects** ({error.kind.replace('_', ' ')})"
            )
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    lines += ["", "## The histories and the texts", ""]
    for h, cells in judged:
        lines += [
            f"### {h.title}",
            "",
            f"{h.how[0].upper()}{h.how[1:]}. Sent: {_code(_shape(h.messages))}.",
            "",
            "| provider | answer | location | text |",
            "|---|---|---|---|",
        ]
        for p in cols:
            error = cells[p].error
            if error is None:
                lines.append(f"| `{p}` | accepts | | |")
            else:
                lines.append(
                    f"| `{p}` | HTTP {error.status} | `{error.path}` | {_code(error.text)} |"
                )
        lines.append("")
    if repairs:
        lines += _repair_section(cols)
    return "\n".join(lines).rstrip() + "\n"


def _repairable() -> list[History]:
    """The histories without reasoning: the ones the repair layers are given."""
    return [h for h in HISTORIES if not any(m.thought or m.after_thought for m in h.messages)]


def _rejecting(answers: dict[Provider, str | None]) -> str:
    names = [f"`{p}`" for p, text in answers.items() if text is not None]
    return ", ".join(names) if names else "none"


def _repair_section(cols: Sequence[Provider]) -> list[str]:
    """Each framework repair layer on each history the layer changes."""
    from prunecheck.sim.reports.repair_layers import LAYERS, available, repair

    lines = [
        "## Framework repair layers",
        "",
        "Some frameworks rewrite the history before each request so that the provider "
        "accepts it: the 400 goes away, the loss does not. Each framework's own repair "
        "code (not a copy) ran on each history above; a row shows a history the layer "
        "changed: what it did, whether the repair is honest (a dropped call or result "
        "leaves nothing in the context to say so; a synthesized result must be an "
        "[honest placeholder](../explanation/loop-verdicts.md), true of a call whose tool "
        "ran, as every call of these histories did), and which providers reject the "
        "history before and after. `check --provider` judges prunecheck's own runtime "
        "repair layers (`--repair`) the same way on a reproduction.",
        "",
    ]
    if not available():
        return [
            *lines,
            "Not generated here: install `prunecheck[loops]` to run the frameworks.",
            "",
        ]
    for layer in LAYERS:
        lines += [
            f"### {layer.name} {layer.version()}",
            "",
            f"`{layer.function}`.",
            "",
            "| history | before: rejected by | the layer | honest | after: rejected by |",
            "|---|---|---|---|---|",
        ]
        for h in _repairable():
            done = repair(layer, h.messages, cols)
            if not done.changed:
                continue
            why = "yes" if done.honest else "no"
            if done.synthesized and not done.honest:
                why = "no: " + done.synthesized[0][2]
            elif done.dropped_calls or done.dropped_results:
                why = "no: nothing says what was dropped"
            lines.append(
                f"| {h.title} | {_rejecting(done.before)} | {_cell(done.what())} | "
                f"{_cell(why)} | {_rejecting(done.after)} |"
            )
        unchanged = []
        for h in _repairable():
            done = repair(layer, h.messages, cols)
            if not done.changed:
                still = _rejecting(done.after)
                unchanged.append(
                    h.title + (f" (still rejected by {still})" if still != "none" else "")
                )
        lines += ["", "Left as they were: " + "; ".join(unchanged) + ".", ""]
    lines += [
        "The histories with a reasoning item are not given to these layers here: the "
        "matrix's messages carry no reasoning in the frameworks' own types.",
        "",
        "LangChain's `create_agent` (LangChain 1.x, on LangGraph) has no repair layer: what "
        "its middleware leaves is sent. LangGraph's prebuilt `create_react_agent` refuses a "
        "history with a call that no result answers (`_validate_chat_history` raises "
        "`ValueError` with `INVALID_CHAT_HISTORY`) before it calls the model: a refusal, "
        "not a repair.",
        "",
    ]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m prunecheck.sim.reports.strictness",
        description="Write the provider strictness matrix (docs/reference/provider-strictness.md).",
    )
    parser.add_argument("--out", default=None, help="write the page here (default: stdout)")
    args = parser.parse_args(argv)
    text = page()
    if args.out is None:
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
