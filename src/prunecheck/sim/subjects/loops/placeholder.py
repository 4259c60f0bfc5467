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
  else there was nothing to clear), and (3) every statement of it speaks **about the call, never
  about the world**.  The text is read statement by statement
  (:func:`clauses`: sentences, and what a colon, a semicolon, a bracket or
  a spaced dash sets apart; a parenthesis belongs to its statement).  A
  statement holding a marker says what happened to the call, and its other
  words say who did it, how or why ("removed by BufferedChatCompletionContext
  to stay within the 20-message buffer", "denied (DELETE statements require
  approval)").  A statement that tells the model what to do next — it
  begins with one of the closed :data:`ADVICE_VERBS` ("Try a narrower date
  range", "Ask the user to confirm the recipient list") or with "if you" —
  asserts nothing and may name things of the world.  Every other statement
  is made, once the call's id, its tool's name, its arguments' values and
  the names of settings (``max_output_chars``, ``BufferedChatCompletionContext``)
  are set aside, of sizes ("12,400 chars", "over the 8k token budget",
  "older than 5 turns", "per turn (10)"), exceptions' names
  (``TimeoutError``) and the closed :data:`META_WORDS` alone (function
  words; tool, call, result, output, context, tokens …; the runtime's parts
  that act on a call: hook, guardrail, callback, processor …).  Anything
  else — a text the tool did not produce presented as its output — is
  **invented** (``synthesized_result``).

Why (3): an invented result carries information about the world ("3
documents found", "sunny, 22 °C", ``{"status": "ok"}``); a placeholder
carries none.  A marker word inside a plausible output ("results (older
ones omitted): 3 documents") does not make it honest: its other words are
not about the call.  Numbers are allowed only as sizes and limits
("cleared 1,200 tokens", "over the 20,000-character limit",
"max_output_chars=4000"), never alone.  Advice asserts nothing: "Ask for
a narrower time range" says what to request, not what the range holds,
whereas "No results in that time range" is a statement, and is judged.
"No errors" is no failure: it reports the world.  Known limit: a statement
that holds a marker may carry a claim about the world in its reason
("1,204 hits were omitted as duplicates"), and passes.

Pure: no I/O.

>>> ruling("[cleared]", ran="ok", call_words=()).honest
True
>>> ruling("Execution stopped before this tool call could run.", ran="none", call_words=()).rule
'not run'
>>> ruling("3 documents found (older results omitted)", ran="ok", call_words=()).honest
False
>>> ruling("Output withheld (over 8k tokens). Ask for a narrower time range.", ran="ok",
...        call_words=()).honest
True
>>> ruling("Output withheld. No results in that time range.", ran="ok", call_words=()).honest
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
    "ADVICE_VERBS",
    "COPY_RUN",
    "MARKERS",
    "META_WORDS",
    "TRUE_OF",
    "Ruling",
    "call_words",
    "clauses",
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
        r"too (large|long|big) to (display|show|include|return|send)", r"flushed",
        r"not (forwarded|included|displayed|kept|passed|sent|captured)", r"moved (out|away)",
        r"offloaded", r"suppressed", r"masked", r"stripped", r"shortened", r"collapsed",
    ),
    "not run": (
        r"not (been )?(run|executed?|started|called|invoked|performed)",
        r"did ?n'?t (run|execute|start)", r"never (ran|run|started|executed|began)",
        r"could not (run|complete|be run)",
        r"stopped before", r"execution stopped", r"cancell?ed", r"cancellation",
        r"interrupted", r"abort(ed)?", r"skipped",
    ),
    "refused": (r"denied", r"rejected", r"declined", r"not (approved|allowed|permitted)",
                r"refused", r"blocked", r"guardrail tripped", r"forbidden", r"disallowed",
                r"prohibited", r"unauthori[sz]ed",
                r"limit (was |has been |is )?(exceeded|reached)", r"exceeded the limit"),
    "failed": (r"errors?", r"errored( out)?", r"fail(ed|ure)?", r"killed", r"crash(ed)?",
               r"exited abnormally", r"exit(ed)? (with )?(code|status) [1-9]\d*", r"non ?zero exit",
               r"exception", r"timed out",
               r"time ?out"),
}  # fmt: skip

#: Words a placeholder may hold beside its markers: words about the call,
#: the context and what to do next, never about the world.
_META = """
    a an the this that these those it its it's of to for by from in on at with as into
    before after while during until since due because so and or but if then than
    not no never nothing none any all some each every one more longer anymore still yet
    is are was were be been being has have had do does did done will would should could can
    cannot may might must need needs needed please again retry re try you your we our
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
    via placeholder
    additional further another other same batch parallel
    over under above exceeds exceeding
    ask asking less fewer smaller shorter narrower instead
    hook hooks guardrail guardrails callback callbacks processor processors middleware
    manager handler handlers filter filters layer step steps turn turns round rounds
    input inputs max maximum min minimum cap exceeded exceed reached
    successfully success unavailable exist exists existed display displayed
    shown show forwarded received retrieved given raised traceback stack trace
    too large long big huge full entire whole part only just here now
    mode dry sibling siblings waiting wait rows row lines line entries records items pages
    what which when why how original log logs made edit edits editing
"""
META_WORDS = frozenset(_META.split())

#: Verbs a clause of advice begins with (what the model may do next): such a
#: clause asserts nothing about the world, so it may name the world's things.
_ADVICE = """
    ask try retry re rerun run request requesting call use narrow select add check verify
    rephrase specify filter limit split reduce query fetch get pass provide include consider
    wait confirm repeat resend paginate page search read open do don't avoid make break
    choose pick look refine lower shorten restrict continue proceed tell let send
"""
ADVICE_VERBS = frozenset(_ADVICE.split())

_SIZE = re.compile(
    r"\b\d[\d,._]*[km]?(\s*|-)(tokens?|characters?|chars?|bytes?|kb|mb|messages?|calls?|"
    r"results?|outputs?|lines?|items?|rows?|entries|records?|turns?|seconds?|s|ms)\b"
    r"|(?<![a-z])(tokens?|characters?|chars?|bytes?|limit|max|budget|cap)\s*[=:]\s*\d[\d,._]*[km]?\b"
    r"|\b(per [a-z]+|limit|max[a-z]*)\s*\(?\d[\d,._]*[km]?\)?",
    re.IGNORECASE,
)
_EXCEPTION = re.compile(r"\b[A-Za-z]*(Error|Exception)\b")
_IDENTIFIER = re.compile(
    r"`[^`]*`|\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*\b|\b[a-z]+[A-Z][A-Za-z0-9]*\b"
    r"|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b"
)
_NO_FAILURE = re.compile(r"\b(no|without|zero|0) (errors?|failures?|exceptions?)\b")
_ARROW = re.compile(r"\s*(->|=>|\u2192)\s*")
_STATEMENTS = """
    is are was were has have had returns shows contains found finds gave gives yields
    results result hits matches output outputs complete done ok
"""
_STATEMENT_VERBS = frozenset(_STATEMENTS.split())
_FIRST = "please then instead or and also so note you can may should"
_BEFORE_ADVICE = frozenset(_FIRST.split())
_CLAUSE = re.compile(r"[;:!?\[\]<>{}\n]+|\.(?=\s|$)|\s[-\u2013\u2014]+\s|\u2014|\u2013")
_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|etc|vs)\.", re.IGNORECASE)


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
    lowered = _EXCEPTION.sub(" error ", text)  # an exception's name says how the call failed
    lowered = _SIZE.sub(" n tokens ", lowered)
    lowered = _IDENTIFIER.sub(" ", lowered).lower()  # a hook's, a policy's, a setting's name
    for word in sorted({w.lower() for w in call_words if w}, key=len, reverse=True):
        lowered = re.sub(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])", " ", lowered)
    words = " ".join(re.findall(r"[a-z]+(?:'[a-z]+)?|\d+", lowered.replace("\u2019", "'")))
    return _NO_FAILURE.sub(" flawless ", words)  # "no errors" reports the world, not a failure


def clauses(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The statements of ``text``, each with the parentheses inside it: its
    sentences, and what a colon, a semicolon, a bracket or a spaced dash sets
    apart (abbreviations such as "e.g." and arrows kept inside).

    >>> clauses("[Output cleared (12,400 chars).] Try a narrower range, e.g. last week.")
    [('Output cleared', ('12,400 chars',)), ('Try a narrower range, eg last week', ())]
    """
    text = _ABBREVIATIONS.sub(lambda m: m.group(1).replace(".", ""), text)
    text = _ARROW.sub(
        " to ", _SIZE.sub(lambda m: m.group(0).replace("(", "").replace(")", ""), text)
    )
    inner: list[str] = []

    def hold(match: re.Match[str]) -> str:
        inner.append(match.group(1).strip(" ."))
        return f"\x00{len(inner) - 1}\x00"

    text = re.sub(r"\(([^()]*)\)", hold, text)
    out = []
    for part in _CLAUSE.split(text):
        held = tuple(inner[int(i)] for i in re.findall(r"\x00(\d+)\x00", part))
        host = re.sub(r"\x00\d+\x00", " ", part).strip(" .,")
        if host or held:
            out.append((" ".join(host.split()), tuple(h for h in held if h)))
    return out


def _advice(words: str) -> bool:
    """Whether a normalised clause tells the model what to do next."""
    tokens = words.split()
    while tokens and tokens[0] in _BEFORE_ADVICE:
        tokens = tokens[1:]
    if tokens[:2] == ["if", "you"]:
        return True
    if not tokens or tokens[0] not in ADVICE_VERBS:
        return False
    # "Search returned 3 hits", "Query results: none": the verb is a noun, the clause a statement
    after = tokens[1] if len(tokens) > 1 else ""
    return not (after.endswith("ed") or after in _STATEMENT_VERBS)


def _markers(words: str) -> set[str]:
    """The statements (:data:`MARKERS`' keys) a normalised text makes."""
    return {
        rule
        for rule, patterns in MARKERS.items()
        if any(re.search(rf"\b{p}\b", words) for p in patterns)
    }


def _world(text: str, call_words: Iterable[str]) -> list[str]:
    """The words of ``text`` that speak of the world: those of each statement that
    neither says what happened to the call (a marker: its other words say who, how
    or why) nor tells the model what to do next, and is not made of
    :data:`META_WORDS` and sizes alone.  A parenthesis belongs to its statement."""
    alien: list[str] = []
    for host, held in clauses(text):
        said = _normalise(host, call_words)
        if _markers(said) or _advice(said):
            continue
        alien += [w for w in said.split() if w not in META_WORDS]
        for inner in held:
            alien += _world(inner, call_words)
    return alien


def call_words(name: str, cid: str, arguments: str) -> tuple[str, ...]:
    """The call's own words: its id, its tool's name and its arguments' values
    (a placeholder may name the call it stands for).  Not the name's parts:
    "Weather: sunny" for ``get_weather`` speaks of the weather."""
    words = [cid, name, name.replace("_", " "), name.replace("_", "-")]
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
    found = _markers(_normalise(text, call_words))
    if not found:
        return Ruling(False, "", "it says nothing of a cleared, stopped, refused or failed call")
    alien = _world(text, call_words)
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
