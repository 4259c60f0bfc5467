"""Honest vs invented: the stated rule for a tool result that is not the tool's output.

A result the model is shown for a call is one of three things:

* **the tool's output** (whole: the judge finds it in the text);
* **a shortened or rewritten copy** of it (a prefix, or a text holding a
  piece of :data:`COPY_RUN` or more characters of it): a truncated payload;
* **a placeholder**, or **an invented result**.  This module tells those two
  apart, by one rule (:func:`ruling`):

  A text is an **honest placeholder** when (1) it holds no piece of any
  output the tool produced for the call, (2) it *says* what happened, with
  one of the documented :data:`MARKERS` — the content was *cleared*, the
  call was *not run* (stopped, cancelled, interrupted, skipped), *refused*,
  or it *failed* — and that statement is true of the call (a body that ran
  may be said *cleared*, never *not run*; a call no body ran for may be
  said *not run*, *refused* or *failed*, and *cleared* only once the model
  was shown a result of it before — a placeholder the framework wrote —,
  else there was nothing to clear), and (3) every other word of it speaks **about the call, never
  about the world**: after the call's id, its tool's name and its
  arguments' values are set aside, each word is a marker or one of the
  closed :data:`META_WORDS` (function words; tool, call, result, output,
  context, tokens …; why and what next: to save context, please retry).
  Anything else — a text the tool did not produce presented as its output —
  is **invented** (``synthesized_result``).

Why (3): an invented result carries information about the world ("3
documents found", "sunny, 22 °C", ``{"status": "ok"}``); a placeholder
carries none.  A marker word inside a plausible output ("results (older
ones omitted): 3 documents") does not make it honest: its other words are
not about the call.  Numbers are allowed only as sizes ("cleared 1,200
tokens", "over the 20,000-character limit"), never alone; what to do next
may ask for less ("ask for a smaller output instead").

Pure: no I/O.

>>> ruling("[cleared]", ran="ok", call_words=()).honest
True
>>> ruling("Execution stopped before this tool call could run.", ran="none", call_words=()).rule
'not run'
>>> ruling("3 documents found (older results omitted)", ran="ok", call_words=()).honest
False
>>> ruling("Tool call limit exceeded. Do not make additional tool calls.", ran="none",
...        call_words=()).rule
'refused'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "COPY_RUN",
    "MARKERS",
    "META_WORDS",
    "TRUE_OF",
    "Ruling",
    "call_words",
    "holds_copy",
    "ruling",
]

#: Characters of a tool's output that, found in a result, make it a copy
#: (shortened or rewritten), never a placeholder.
COPY_RUN = 16

#: What a placeholder may say, by the rule it invokes; each a regular
#: expression over the normalised text (lower case, words separated by one space).
MARKERS: Mapping[str, tuple[str, ...]] = {
    "cleared": (
        r"clear(ed)?", r"omit(ted)?", r"remov(ed|e)", r"elided?", r"redact(ed)?", r"pruned?",
        r"compact(ed)?", r"hidden", r"dropped", r"truncated", r"trimmed", r"evicted",
        r"summari[sz]ed", r"replaced", r"discarded", r"withheld", r"not shown",
    ),
    "not run": (
        r"not (been )?(run|executed|started|called|invoked)", r"did ?n'?t run",
        r"never (ran|run|started|executed)", r"could not (run|complete|be run)",
        r"stopped before", r"execution stopped", r"cancell?ed", r"cancellation",
        r"interrupted", r"abort(ed)?", r"skipped",
    ),
    "refused": (r"denied", r"rejected", r"declined", r"not (approved|allowed|permitted)",
                r"limit (was |has been |is )?(exceeded|reached)", r"exceeded the limit"),
    "failed": (r"errors?", r"errored", r"fail(ed|ure)?", r"exception", r"timed out",
               r"time ?out"),
}  # fmt: skip

#: Words a placeholder may hold beside its markers: words about the call,
#: the context and what to do next, never about the world.
_META = """
    a an the this that these those it its it's of to for by from in on at with as into
    before after while during until since due because so and or but if then than
    not no never nothing none any all some each every one more longer anymore still yet
    is are was were be been being has have had do does did done will would should could can
    cannot may might must need needs needed please again retry re try call it you your we our
    wasn't isn't hasn't hadn't couldn't can't won't didn't
    tool tools call calls called function functions result results output outputs content
    contents response responses message messages value return returned returns execution
    executing executed run running ran invocation invoked request requested
    produce produced producing complete completed completing finish finished finishing
    occurred happened available reason see note id name arguments args
    context window space room memory budget limit size length history conversation
    token tokens character characters chars bytes kb mb n
    old older oldest earlier previous stale first last
    save saving saved free freeing make fit reduce reducing keep kept
    user human client approval policy agent model system runtime framework
    by via per due placeholder
    additional further another other same batch parallel
    over under above exceeds exceeding
    ask asking less fewer smaller shorter narrower instead
"""
META_WORDS = frozenset(_META.split())

_SIZE = re.compile(
    r"\b\d[\d,._]*(\s*|-)(tokens?|characters?|chars?|bytes?|kb|mb|messages?|calls?|results?|"
    r"outputs?|lines?|items?|seconds?|s|ms)\b"
)


@dataclass(frozen=True, slots=True)
class Ruling:
    """How the rule judged one result text.

    Attributes
    ----------
    honest : bool
        Whether the text is an honest placeholder.
    rule : str
        The marker group it invokes (``cleared``, ``not run``, ``refused``,
        ``failed``), or ``""`` when it invokes none.
    why : str
        In words, why it is honest or not (for the incident and the narrative).
    """

    honest: bool
    rule: str
    why: str


def _normalise(text: str, call_words: Iterable[str]) -> str:
    lowered = text.lower()
    for word in sorted({w.lower() for w in call_words if w}, key=len, reverse=True):
        lowered = lowered.replace(word, " ")
    lowered = _SIZE.sub(" n tokens ", lowered)
    return " ".join(re.findall(r"[a-z]+(?:'[a-z]+)?|\d+", lowered.replace("’", "'")))


def call_words(name: str, cid: str, arguments: str) -> tuple[str, ...]:
    """The call's own words: its id, its tool's name and its arguments' values
    (a placeholder may name the call it stands for)."""
    words = [cid, name, *name.replace("-", "_").split("_")]
    try:
        args = json.loads(arguments) if arguments else {}
    except ValueError:
        args = {}
    if isinstance(args, Mapping):
        words += [str(v) for v in args.values() if isinstance(v, str | int | float)]
    return tuple(w for w in words if len(str(w)) > 1)


def holds_copy(text: str, outputs: Iterable[str]) -> bool:
    """Whether ``text`` holds a piece of :data:`COPY_RUN` characters of an output
    (the whole output when shorter), or is a prefix of one."""
    stripped = text.strip().strip('"')
    for out in outputs:
        if not out:
            continue
        if stripped and out.startswith(stripped[: max(1, len(stripped) - 3)]):
            return True
        run = min(COPY_RUN, len(out))
        if any(out[i : i + run] in text for i in range(0, len(out) - run + 1)):
            return True
    return False


#: What a placeholder may truthfully say, by how the call's body ended:
#: ``ok`` (its output existed), ``failed`` (it raised or timed out), ``none``
#: (no body ran to an outcome: never started, cancelled, dropped by a crash),
#: ``answered`` (none ran, but the model was shown a result for the call
#: before, such as the framework's "interrupted" placeholder: clearing that
#: result later is a clear, not an invention).
TRUE_OF: Mapping[str, frozenset[str]] = {
    "ok": frozenset({"cleared"}),
    "failed": frozenset({"cleared", "failed"}),
    "none": frozenset({"not run", "refused", "failed"}),
    "answered": frozenset({"not run", "refused", "failed", "cleared"}),
}


def ruling(
    text: str, *, ran: str, call_words: Iterable[str], outputs: Iterable[str] = ()
) -> Ruling:
    """Judge ``text`` shown as a call's result by the rule (see the module's docs).

    Parameters
    ----------
    text : str
        The result the model is shown.
    ran : str
        How the call's body ended: ``ok``, ``failed`` or ``none`` (:data:`TRUE_OF`).
    call_words : Iterable[str]
        The call's own words (:func:`call_words`).
    outputs : Iterable[str]
        What the call's bodies produced (outputs, error texts).
    """
    if holds_copy(text, outputs):
        return Ruling(False, "", "it holds a piece of the tool's output: a copy, not a placeholder")
    words = _normalise(text, call_words)
    found = {
        rule
        for rule, patterns in MARKERS.items()
        if any(re.search(rf"\b{p}\b", words) for p in patterns)
    }
    if not found:
        return Ruling(False, "", "it says nothing of a cleared, stopped, refused or failed call")
    strip = words
    for patterns in MARKERS.values():
        for p in patterns:
            strip = re.sub(rf"\b{p}\b", " ", strip)
    alien = [w for w in strip.split() if w not in META_WORDS]
    if alien:
        shown = ", ".join(repr(w) for w in dict.fromkeys(alien))
        return Ruling(False, "", f"the words {shown} speak of the world, not of the call")
    true = sorted(found & TRUE_OF[ran])
    if not true:
        claim = sorted(found)[0]
        fact = {"ok": "its tool ran and returned", "failed": "its tool ran and failed",
                "none": "no tool body ran for it, nor was a result of it shown before",
                "answered": "no tool body ran for it"}[ran]  # fmt: skip
        return Ruling(False, claim, f"it says the call was {claim}, but {fact}")
    rule = true[0] if len(true) == 1 else next(r for r in MARKERS if r in true)
    return Ruling(True, rule, f"a placeholder saying the call was {rule}")
