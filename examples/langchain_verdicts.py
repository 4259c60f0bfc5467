"""Print the verdict table of LangChain's ``trim_messages`` under common settings.

    pip install 'prunecheck[langchain]'
    python examples/langchain_verdicts.py            # the table in README.md

Each row is ``prunecheck check "langchain:<settings>"``: the fixed, seeded
scenario suite plus the adversarial search, in the default runtime (checks
after every append, gate ``none``), and the last row puts the recommended
setting behind the commit gate.  Deterministic: the same prunecheck gives
the same table.
"""

from __future__ import annotations

from prunecheck import check_policy
from prunecheck.model.exposure import ANY_VIOLATION

#: (settings, gate) rows of the table.
ROWS: tuple[tuple[str, str], ...] = (
    ("strategy=last", "none"),
    ("strategy=last,counter=len,max=6", "none"),
    ("strategy=last,start_on=human", "none"),
    ("strategy=last,start_on=human,end_on=human+tool", "none"),
    ("strategy=last,start_on=human,end_on=human+tool,include_system=true", "none"),
    ("strategy=first", "none"),
    ("strategy=last,start_on=human,end_on=human+tool,include_system=true", "commit"),
)


def first_violation(narrative: str) -> str:
    """The first violation line of a reproduction's narrative."""
    for line in narrative.splitlines():
        if "VIOLATION:" in line:
            return line.split("VIOLATION:", 1)[1].strip()
    return ""


def table() -> str:
    lines = [
        "| settings (`langchain:...`) | gate | verdict | invocations hit by a violation, "
        "per 1,000 | minimal reproduction: first violation |",
        "|---|---|---|---|---|",
    ]
    for settings, gate in ROWS:
        result = check_policy(f"langchain:{settings}", gate=gate)
        invocations = sum(r.invocations for r in result.scenarios)
        hit = sum(r.exposed.get(ANY_VIOLATION, 0) for r in result.scenarios)
        rate = f"{1000 * hit / invocations:.0f} ({hit}/{invocations})" if invocations else "-"
        if result.reproduction is not None:
            repro = f"{len(result.reproduction.events)} events: {first_violation(result.narrative)}"
        else:
            repro = "none found"
        verdict = result.verdict.value.upper() if not result.safe else "safe"
        lines.append(f"| `{settings}` | {gate} | {verdict} | {rate} | {repro} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
