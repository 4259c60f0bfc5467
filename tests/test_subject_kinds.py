"""Every command takes every subject kind its help says it takes (issue 36).

``docs/reference/cli.md`` (generated from the argument parser) says which
specs each command's ``POLICY`` takes; ``docs/how-to/own-runtime.md`` runs
``sweep`` on a runtime under test.  Each pair below runs with the smallest
options there are and must not be refused as the wrong kind ("names a
runtime under test, not a policy", "not a policy", exit 2): it ends with a
verdict (0, 1, 4).  The dearer pairs run in ``make test-all``; each kind
(but an agent loop, which imports its framework) and each command has a
cheap pair in ``make test``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main

ROOT = Path(__file__).resolve().parent.parent
CLI = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
TRACE = str(ROOT / "tests" / "corpus" / "seed_parallel_batch.json")

#: One spec of each kind, and the words the help uses for it.
KINDS = {
    "builtin": ("recency", "NAME"),
    "policy": (f"{ROOT}/tests/policies/regress_correct.py:select", "file.py:attr"),
    "list": (f"{ROOT}/examples/openai_commit_boundary.py:trim@openai", "file.py:attr@openai"),
    "framework": ("langchain:strategy=last", "ADAPTER:key=value"),
    "runtime": (f"runtime:{ROOT}/examples/agent_loop.py:GuardedLoop", "runtime:FILE.py:CLASS"),
    "guard": ("runtime:guard:recency", "runtime:guard:POLICY"),
    "loop": (f"loop:{ROOT}/examples/loops/pydantic_ai_guarded.py:agent", "loop:"),
}
_SIM = "--levels 0.5 --seeds 1 --horizon 5"
#: The smallest run of each command ({spec}: the subject; {tmp}: a folder).
COMMANDS = {
    "check": f"check {{spec}} {_SIM} --max-examples 1 --check-at after_append --quiet",
    "search": "search {spec} --max-examples 1",
    "explore": "explore {spec} --depth 2",
    "replay": f"replay {TRACE} {{spec}} --quiet",
    "baseline": f"baseline --out {{tmp}}/b.json {{spec}} {_SIM}",
    "sweep": f"sweep --out {{tmp}}/r.jsonl {{spec}} --gate none {_SIM} --jobs 1 --quiet",
}
#: What the docs say besides the help: the own-runtime how-to sweeps and
#: replays a runtime.
HOW_TO = {("sweep", "runtime"), ("replay", "runtime"), ("check", "loop"), ("search", "loop")}
#: The pairs only make test-all runs: a whole check, a framework's agent loop.
DEAR = {("check", k) for k in KINDS if k != "guard"} | {
    ("explore", "framework"),
    ("search", "loop"),
}


def _help_of(command: str) -> str:
    start = CLI.index(f"## `{command}`")
    end = CLI.find("\n## ", start + 1)
    section = CLI[start : end if end >= 0 else None]
    row = re.search(r"^\| `POLICY` \| (.*) \|$", section, re.M)
    assert row is not None, command
    return row[1]


def _takes(command: str, kind: str) -> bool:
    """Whether the help of ``command`` (or a how-to) says it takes ``kind``."""
    words = _help_of(command)
    if (command, kind) in HOW_TO:
        return True
    if kind == "builtin":
        return True  # every command takes a built-in
    if kind == "loop":
        return False  # only where a how-to runs one
    if words.startswith(("the policy spec", "replay with this policy spec")) and kind in (
        "policy",
        "list",
        "framework",
    ):
        return True  # "the policy spec": every policy spelling
    return KINDS[kind][1] in words


PAIRS = [(c, k) for c in COMMANDS for k in KINDS if _takes(c, k)]


def test_the_table_covers_what_the_help_promises() -> None:
    assert ("check", "runtime") in PAIRS and ("search", "guard") in PAIRS
    assert ("sweep", "runtime") in PAIRS  # docs/how-to/own-runtime.md
    cheap = set(PAIRS) - DEAR
    assert {k for _, k in cheap} == set(KINDS) - {"loop"}  # a loop imports its framework
    assert {c for c, _ in cheap} == set(COMMANDS)
    assert set(PAIRS) >= DEAR


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        pytest.param(c, k, id=f"{c}-{k}", marks=[pytest.mark.slow] if (c, k) in DEAR else [])
        for c, k in PAIRS
    ],
)
def test_a_command_takes_the_subject_kinds_its_help_names(
    command: str,
    kind: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = KINDS[kind][0]
    template = COMMANDS[command] if kind != "loop" else f"{command} {{spec}} --max-examples 1"
    argv = [a.format(spec=spec, tmp=tmp_path) for a in template.split()]
    status = main(argv)
    _out, err = capsys.readouterr()
    assert "not a policy" not in err and "names a runtime under test" not in err, err[-2000:]
    assert status in (0, 1, 4), (status, err[-2000:])
