"""``reports/known-bugs.md`` and ``reports/known-bugs.json`` from the corpus's
results (:mod:`run`): a row per bug, its ground truth and prunecheck's verdict
on the buggy and the fixed release, held-back bugs in a section of their own.

A bug is **caught** when ``prunecheck check`` with its defaults, on the buggy
release, reports the bug's violation kind (``kind`` in ``bug.toml``) in some
scenario class where the fixed release's check does not report it, or reports
it there as the configuration's finding where the fixed release's is only the
framework's (the user-configuration verdict flags the buggy release and not the
fixed one); it is
**quiet on the fix** when, on the fixed release, the user-configuration
verdict reports no violation of that kind (findings of the framework, which
its plain agent shares with every configuration, are listed apart; a result
without the split counts every kind).  A ground truth **reproduces** when it
exits 1 on the buggy release and 0 on the fixed one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from known_bugs.corpus import RELEASES, REPO, Bug

__all__ = ["provenance", "row_of", "summary", "venv_origin", "write_reports"]

Results = Mapping[tuple[str, str], Mapping[str, object]]


def _get(mapping: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(mapping, Mapping):
            return None
        mapping = mapping.get(key)
    return mapping


def _verdict_word(res: object) -> object:
    line = str(_get(res, "check", "verdict_line") or "")
    return "vacuous" if line.startswith("verdict: vacuous") else _get(res, "check", "verdict")


def _venv_of(res: object) -> str | None:
    """Where a run's venv really was, relative to this checkout if it is in it, else the
    absolute path (a venv of another checkout reached through a link): as run.py recorded
    it, else (a result from before it did) the folder under this checkout resolved now."""
    path = _get(res, "venv_resolved")
    if not isinstance(path, str):
        venv = _get(res, "venv")
        if not (isinstance(venv, str) and (REPO / venv).exists()):
            return None
        path = str((REPO / venv).resolve())
    inside = Path(path).is_relative_to(REPO.resolve())
    return str(Path(path).relative_to(REPO.resolve())) if inside else path


def _same_place(a: str, b: Path) -> bool:
    try:
        return Path(a).resolve() == b.resolve()
    except OSError:
        return False


def venv_origin(rows: list[dict[str, object]]) -> str:
    """A sentence saying where the venvs of the runs were built: venvs of another checkout
    (``.known-bugs/venvs`` a link to another's) named with their folder; else, if every
    venv was built by ``known_bugs/venvs.py`` in this checkout, whether that checkout was a
    clean clone (a git clone, not a worktree, no uncommitted or untracked file in src/ or
    known_bugs/ when each run was measured) or what kept it from being one; ``""`` if no
    row ran."""
    elsewhere: dict[str, int] = {}
    ran: list[Mapping[str, object]] = []
    for r in rows:
        for release in RELEASES:
            rel = r[release]
            if not (isinstance(rel, Mapping) and rel["ran"]):
                continue
            ran.append(rel)
            venv = rel.get("venv")
            if isinstance(venv, str) and Path(venv).is_absolute():
                elsewhere[str(Path(venv).parent)] = elsewhere.get(str(Path(venv).parent), 0) + 1
    if elsewhere:
        where = "; ".join(f"{n} from {folder}" for folder, n in sorted(elsewhere.items()))
        n = sum(elsewhere.values())
        return (
            f"Venvs: {n} run{'' if n == 1 else 's'} used venvs built by `known_bugs/venvs.py` "
            f"from PyPI in another checkout ({where}), "
            "with the same pins; prunecheck itself came from this checkout's src/, which run.py "
            "puts first on PYTHONPATH."
        )
    if not ran:
        return ""
    venvs = {str(rel.get("venv")) for rel in ran}
    head = (
        f"Venvs: the {len(venvs)} venvs of these {len(ran)} runs were built from PyPI by "
        "`known_bugs/venvs.py`"
    )
    built = {str(rel.get("venv_built_in")) for rel in ran if rel.get("venv_built_in")}
    if not all(rel.get("venv_built_in") for rel in ran):
        return f"{head}; where each was built was not recorded for every run."
    others = sorted(b for b in built if not _same_place(b, REPO))
    if others:
        here = " (the rest in this checkout)" if len(others) < len(built) else ""
        return f"{head} in {', '.join(others)} and copied into this checkout{here}."
    why: list[str] = []
    if any(rel.get("checkout") != "clone" for rel in ran):
        said = {str(rel.get("checkout") or "not recorded") for rel in ran}
        why.append(f"checkout: {', '.join(sorted(said))}")
    if any(rel.get("modified") is not False for rel in ran):
        why.append("uncommitted edits in src/ or known_bugs/ (or not recorded)")
    if any(rel.get("untracked") is not False for rel in ran):
        why.append("untracked files in src/ or known_bugs/ (or not recorded)")
    if why:
        return f"{head} in the checkout that ran them, not a clean clone ({'; '.join(why)})."
    return (
        f"{head} in a clean clone, the checkout that ran them (a git clone, not a worktree, "
        "with no uncommitted or untracked files in src/ or known_bugs/ when each run was "
        "measured)."
    )


def row_of(bug: Bug, results: Results) -> dict[str, object]:
    """One bug's row: what each release's runs gave, and what follows."""
    row: dict[str, object] = {
        "bug": bug.name,
        "framework": bug.framework,
        "title": bug.title,
        "issue": bug.issue,
        "fix": bug.fix,
        "kind": bug.kind,
        "held_back": bug.held_back,
        "notes": bug.notes,
        "spec": bug.spec,
    }
    for release in RELEASES:
        res = results.get((bug.name, release))
        row[release] = {
            "requirements": list(bug.requirements(release)),
            "venv": _venv_of(res),
            "ran": res is not None and "check" in res,
            "error": _get(res, "error"),
            "ground_truth": _get(res, "ground_truth", "exit_status"),
            "ground_truth_output": _get(res, "ground_truth", "output"),
            "check_exit": _get(res, "check", "exit_status"),
            "verdict": _verdict_word(res),
            "kinds": _get(res, "check", "kinds") or [],
            "user_kinds": _get(res, "check", "user_kinds"),
            "framework_kinds": _get(res, "check", "framework_kinds") or [],
            "classes": _get(res, "check", "classes") or {},
            "check_error": _get(res, "check", "error"),
            "check_cpu_s": _get(res, "check", "cpu_s"),
            "commands": _get(res, "commands"),
            "commit": _get(res, "measured_on", "commit"),
            "modified": _get(res, "measured_on", "modified"),
            "untracked": _get(res, "measured_on", "untracked"),
            "checkout": _get(res, "measured_on", "checkout"),
            "venv_built_in": _get(res, "venv_built_in"),
        }
    buggy, fixed = row["buggy"], row["fixed"]
    assert isinstance(buggy, dict) and isinstance(fixed, dict)
    ran = buggy["ran"] and fixed["ran"]
    row["reproduces"] = (buggy["ground_truth"] == 1 and fixed["ground_truth"] == 0) if ran else None
    row["caught"] = _caught(bug.kind, buggy, fixed) if buggy["ran"] else None
    # quiet means something only where the check judged the fixed release (safe or unsafe)
    judged = fixed["ran"] and fixed["verdict"] in ("safe", "unsafe")
    user_kinds = fixed["user_kinds"] if fixed["user_kinds"] is not None else fixed["kinds"]
    row["quiet_on_fix"] = (bug.kind not in user_kinds) if judged else None
    row["exit_differs"] = (buggy["check_exit"] != fixed["check_exit"]) if ran else None
    return row


def _classes_with(kind: str, rel: Mapping[str, object]) -> set[tuple[str, str]]:
    """The (scenario class, whose finding) pairs that report ``kind``: ``configuration``
    or ``framework`` where the result splits them, else ``any``."""
    classes = rel["classes"]
    if not isinstance(classes, Mapping):
        return set()
    out: set[tuple[str, str]] = set()
    for name, entry in classes.items():
        if not isinstance(entry, Mapping) or kind not in (entry.get("violations") or []):
            continue
        split = False
        for owner, field in (("configuration", "user_violations"),
                             ("framework", "framework_violations")):  # fmt: skip
            owned = entry.get(field)
            if isinstance(owned, list):
                split = True
                if kind in owned:
                    out.add((str(name), owner))
        if not split:
            out.add((str(name), "any"))
    return out


def _caught(kind: str, buggy: Mapping[str, object], fixed: Mapping[str, object]) -> bool:
    """The buggy release's check reports ``kind`` in a scenario class where the fixed
    release's does not, or as another's finding (the configuration's where the fixed
    release's is only the framework's), where the fixed release was judged: a kind both
    releases show in the same classes, as the same one's finding, is the framework's
    everyday finding, not this bug."""
    on_buggy = _classes_with(kind, buggy)
    if not on_buggy:
        return False
    if not (fixed["ran"] and fixed["verdict"] in ("safe", "unsafe")):
        return True
    return bool(on_buggy - _classes_with(kind, fixed))


def summary(rows: list[dict[str, object]]) -> dict[str, object]:
    """The page's figures, over the bugs that are not held back and those that are."""

    def count(part: list[dict[str, object]]) -> dict[str, object]:
        return {
            "bugs": len(part),
            "frameworks": sorted({str(r["framework"]) for r in part}),
            "ran": sum(1 for r in part if r["reproduces"] is not None),
            "ground_truth_reproduces": sum(1 for r in part if r["reproduces"] is True),
            "caught": sum(1 for r in part if r["caught"] is True),
            "quiet_on_fix": sum(1 for r in part if r["quiet_on_fix"] is True),
            "fix_not_judged": sum(1 for r in part if r["quiet_on_fix"] is None),
            "flagged_on_fix": sum(1 for r in part if r["quiet_on_fix"] is False),
        }

    return {
        "all": count(rows),
        "corpus": count([r for r in rows if not r["held_back"]]),
        "held_back": count([r for r in rows if r["held_back"]]),
    }


def _commit_of(rel: Mapping[str, object]) -> str:
    """A release's commit as the page names it: 12 hex digits, ``+`` if src/ or
    known_bugs/ had uncommitted edits, ``unrecorded`` for a result from before run.py
    recorded it."""
    commit = rel.get("commit")
    if not isinstance(commit, str) or not commit:
        return "unrecorded"
    return commit[:12] + ("+" if rel.get("modified") else "")


def provenance(rows: list[dict[str, object]]) -> str:
    """Which prunecheck commit the rows were measured on: one sentence if they all come
    from one commit, else each commit with the rows (bug [release]) measured on it."""
    by: dict[str, list[str]] = {}
    for r in rows:
        for release in RELEASES:
            rel = r[release]
            if isinstance(rel, Mapping) and rel["ran"]:
                by.setdefault(_commit_of(rel), []).append(f"{r['bug']} [{release}]")
    if not by:
        return "No row has run yet."
    if len(by) == 1:
        ((commit, runs),) = by.items()
        if commit == "unrecorded":
            return f"The commit these {len(runs)} runs were measured on was not recorded."
        missing = 2 * len(rows) - len(runs)
        return (
            f"All {len(runs)} runs on this page (each bug on its buggy and its fixed release"
            f"{f'; {missing} not run' if missing else ''}) were "
            f"measured on one prunecheck commit, `{commit}`"
            + (" (`+`: with uncommitted edits in src/ or known_bugs/)." if "+" in commit else ".")
        )
    parts = [f"`{c}`: {', '.join(runs)}" for c, runs in sorted(by.items())]
    return (
        f"The runs on this page come from {len(by)} prunecheck commits (`+`: with uncommitted "
        "edits in src/ or known_bugs/): " + "; ".join(parts) + "."
    )


def _yn(value: object) -> str:
    return {True: "yes", False: "**no**", None: "n/a"}.get(value, str(value))  # type: ignore[call-overload, no-any-return]


def _verdict(rel: Mapping[str, object]) -> str:
    if not rel["ran"]:
        return f"not run ({rel['error']})" if rel["error"] else "not run"
    text = f"{rel['verdict']} (exit {rel['check_exit']})"
    if rel.get("user_kinds") is None:  # a result without the user/framework split
        kinds = ", ".join(str(k) for k in rel["kinds"])  # type: ignore[attr-defined]
        return f"{text}: {kinds}" if kinds else text
    mine = ", ".join(str(k) for k in rel["user_kinds"])  # type: ignore[attr-defined]
    theirs = ", ".join(str(k) for k in rel["framework_kinds"])  # type: ignore[attr-defined]
    parts = [f"configuration: {mine or 'none'}"]
    if theirs:
        parts.append(f"framework: {theirs}")
    return f"{text}; {'; '.join(parts)}"


def _report_word(row: Mapping[str, object]) -> str:
    """The link text of a bug's report: "issue" for an issue; "report (PR)" where the bug was
    reported in a pull request (its fix, or a fix's first attempt: no separate issue)."""
    url = str(row["issue"])
    if "/issues/" in url:
        return "issue"
    return "report (PR)" if "/pull/" in url else "report"


def _table(rows: list[dict[str, object]]) -> list[str]:
    out = [
        "| bug | framework | kind | releases (buggy → fixed) | ground truth buggy / fixed "
        "| check on buggy | check on fixed | caught? | quiet on fix? |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        b, f = r["buggy"], r["fixed"]
        assert isinstance(b, dict) and isinstance(f, dict)
        out.append(
            f"| [{r['bug']}](../known_bugs/{r['bug']}/) ([{_report_word(r)}]({r['issue']}), "
            f"[fix]({r['fix']})) "
            f"| {r['framework']} | {r['kind']} "
            f"| {', '.join(b['requirements'])} → {', '.join(f['requirements'])} "
            f"| {b['ground_truth']} / {f['ground_truth']} "
            f"| {_verdict(b)} | {_verdict(f)} | {_yn(r['caught'])} | {_yn(r['quiet_on_fix'])} |"
        )
    return out


def _details(rows: list[dict[str, object]]) -> list[str]:
    out: list[str] = []
    for r in rows:
        out += ["", f"### {r['bug']}", "", f"{r['title']}.", ""]
        if r["notes"]:
            out += [f"Notes: {r['notes']}", ""]
        for release in RELEASES:
            rel = r[release]
            assert isinstance(rel, dict)
            out.append(f"- **{release}** ({', '.join(rel['requirements'])}):")
            if not rel["ran"]:
                out.append(f"  not run: {rel['error'] or 'no result yet'}")
                continue
            gt = str(rel["ground_truth_output"] or "").strip().splitlines()
            out.append(f"  ground truth exit {rel['ground_truth']}: {gt[-1] if gt else ''}")
            classes = rel["classes"]
            assert isinstance(classes, dict)
            per = "; ".join(
                f"{c} {v.get('verdict')}"
                + (f" ({', '.join(v.get('violations') or [])})" if v.get("violations") else "")
                for c, v in classes.items()
            )
            out.append(f"  check: {_verdict(rel)}; {per or 'no scenario class ran'}")
            out.append(f"  measured on prunecheck commit `{_commit_of(rel)}`")
            if rel["check_error"]:
                err = str(rel["check_error"]).strip().splitlines()[-1]
                out.append(f"  check said: {err[:600]}")
            cmds = rel["commands"]
            if isinstance(cmds, dict):
                out.append(f"  rerun: `{cmds.get('row')}`; by hand: `{cmds.get('check')}`")
    return out


def write_reports(bugs: list[Bug], results: Results, out: Path) -> None:
    """Write ``known-bugs.md`` and ``known-bugs.json`` into ``out``."""
    rows = [row_of(b, results) for b in bugs]
    figures = summary(rows)
    out.mkdir(parents=True, exist_ok=True)
    doc = {
        "schema": "prunecheck/known-bugs",
        "version": 1,
        "summary": figures,
        "measured_on": provenance(rows),
        "venvs": venv_origin(rows),
        "rows": rows,
    }
    (out / "known-bugs.json").write_text(json.dumps(doc, indent=2, default=str) + "\n")
    main = [r for r in rows if not r["held_back"]]
    held = [r for r in rows if r["held_back"]]
    c, h = figures["corpus"], figures["held_back"]
    assert isinstance(c, dict) and isinstance(h, dict)
    lines = [
        "# Known bugs: the frameworks' own context bugs, buggy release vs fixed release",
        "",
        "Generated by `make known-bugs` (`known_bugs/venvs.py`, then `known_bugs/run.py`); "
        "do not edit by hand. Each bug folder of `known_bugs/` holds the bug's `bug.toml`, "
        "the agent as the report's user configured it (`agent.py`) and an independent ground "
        "truth written with the framework's own test model (`ground_truth.py`: exit 1 = the bug "
        "happened). Each release runs in a venv of its own built from PyPI. prunecheck's verdict "
        "is `prunecheck check <spec> --json` with its defaults and an empty failure database "
        "(a new user's first run).",
        "",
        "**Caught** = the buggy release's check reports the bug's kind in some scenario class "
        "where the fixed release's check does not, or reports it there as the configuration's "
        "finding where the fixed release's is only the framework's (a finding of the user's "
        "configuration or of the framework: a framework's bug is in every configuration; the "
        "kind in the same classes on both releases, as the same one's finding, is not this "
        "bug). **Quiet on fix** = on the fixed release, "
        "the user-configuration verdict reports no violation of that kind; the framework's "
        "findings (its plain agent fails the same way: every configuration of that release "
        "shares them) are listed apart "
        'in the verdict cell ("framework: ..."), not hidden.',
        "",
        f"Corpus: {c['bugs']} bugs of {len(c['frameworks'])} frameworks "
        f"({', '.join(c['frameworks'])}); {c['ran']} run on both releases; ground truth "
        f"reproduces on {c['ground_truth_reproduces']}; caught {c['caught']}; quiet on the fix "
        f"{c['quiet_on_fix']}, flagged on the fix {c['flagged_on_fix']}, fix not judged (the "
        f"check errored or exercised nothing) {c['fix_not_judged']}. "
        f"Held back (below): {h['bugs']} more.",
        "",
        " ".join(filter(None, [provenance(rows), venv_origin(rows)])),
        "",
        *_table(main),
        "",
        "## Held back",
        "",
        "Written after the machinery and the first rows had run, without changing prunecheck for "
        "them: a measure, not a training set.",
        "",
        f"Held back: {h['bugs']} bugs; ground truth reproduces on {h['ground_truth_reproduces']}; "
        f"caught {h['caught']}; quiet on the fix {h['quiet_on_fix']}, flagged on the fix "
        f"{h['flagged_on_fix']}, fix not judged {h['fix_not_judged']}.",
        "",
        *(_table(held) if held else ["(none yet)"]),
        "",
        "## Each bug",
        *_details(rows),
        "",
    ]
    (out / "known-bugs.md").write_text("\n".join(lines))
