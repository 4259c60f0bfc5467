"""The placeholder rule measured on texts written by people who had not read it.

Each file of ``tests/data/placeholder_heldout*.json`` is a realistic mix of
honest notes and invented results (with how the tool's body ended), written
by a helper that read neither the rule nor its tests and committed before the
rule was run on them.  The first two were then tuned on: the rule's reading
of advice, of sizes and limits, of the runtime's parts and of statements that
say what happened to the call came from their false alarms (first set: 27 of
30 honest notes were called invented before; second: 30 of 30).
``placeholder_heldout_3.json`` was written after the rule was fixed and
committed unmeasured: it is the held-out measure.  On it, 20 of 30 honest notes
pass and 30 of 30 invented results are caught (the rule before: 5 of 30 and 30
of 30); its misses were not tuned on.  The texts the rule still gets wrong are
listed here, so that a change to the rule shows in its figures either way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prunecheck.sim.subjects.loops.placeholder import call_words, ruling

DATA = Path(__file__).resolve().parent / "data"

#: Per file: the items (by index) the rule judges against their label, with why.
WRONG: dict[str, dict[int, str]] = {
    "placeholder_heldout.json": {
        2: "honest, but 'possible PII detected' is the guardrail's claim about the content",
        17: "honest, but 'outside the allowed workspace' is a refusal's reason in world words",
        23: "honest, but 'The forecast was not retrieved' names the world's thing",
    },
    "placeholder_heldout_2.json": {
        21: "honest, but the skip's reason ('an identical call was already made') is world words",
    },
    # measured once on 3ce2e85, untuned (the rule before it: 5 of 30 honest, 30 of 30 invented)
    "placeholder_heldout_3.json": {
        4: "honest JSON: its key's value 'true' is read as a world word",
        8: "honest, but the refusal's reason (a domain not on the allowlist) is world words",
        15: "honest, in non-native English: 'have been cut' and 'place holder' are no markers",
        16: "honest JSON: 'status' is read as a world word",
        20: "honest, but 'No translation is available' names the world's thing",
        21: "honest JSON: its key's value 'true' is read as a world word",
        22: "honest, but the memory's doing ('masks results from mailbox tools') is world words",
        26: "honest, but 'no text could be returned' names the world's thing",
        28: "honest, but 'the approval window (5 min) expired' is no marker and no size",
        29: "honest, but 'No output was captured' stands apart from its marker",
    },
}


def _judged(name: str) -> list[tuple[dict[str, str], bool]]:
    items = json.loads((DATA / name).read_text(encoding="utf-8"))
    out = []
    for item in items:
        words = call_words(item["tool"], "call_1", "{}")
        out.append((item, ruling(item["text"], ran=item["ran"], call_words=words).honest))
    return out


@pytest.mark.parametrize("name", sorted(WRONG))
def test_the_rule_agrees_with_each_label_but_the_known_few(name: str) -> None:
    judged = _judged(name)
    assert {item["label"] for item, _ in judged} == {"honest", "invented"}
    wrong = {
        i: item["text"]
        for i, (item, honest) in enumerate(judged)
        if honest != (item["label"] == "honest")
    }
    assert sorted(wrong) == sorted(WRONG[name]), wrong


@pytest.mark.parametrize("name", sorted(WRONG))
def test_no_invented_result_passes_for_a_placeholder(name: str) -> None:
    """A miss here is a lost finding, worse than a false alarm: none is allowed."""
    passed = [item["text"] for item, honest in _judged(name)
              if honest and item["label"] == "invented"]  # fmt: skip
    assert not passed
