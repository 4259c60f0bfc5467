"""The known-bug corpus (issue 32): every ``known_bugs/*/bug.toml`` is valid,
bad input gets one paragraph and exit 2, the page is made from the results as
its rules say, one pair (a bug's buggy and fixed release) runs end to end from
its built venvs in the fast suite, and (slow, integration: `make test-all`)
every row runs end to end, its venvs built first where they are missing.

The fast tests build no venv and import no framework in process beyond the one
ground truth of a release this venv has installed; the fast pair runs in
subprocesses of the venvs known_bugs/venvs.py built, and skips without them.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from known_bugs import corpus, report  # noqa: E402
from known_bugs import run as kb_run  # noqa: E402
from prunecheck.model.incidents import IncidentKind  # noqa: E402

BUGS = corpus.load_bugs()


def test_the_corpus_has_bugs() -> None:
    assert BUGS, "known_bugs/ holds no bug folder"


@pytest.mark.parametrize("bug", BUGS, ids=[b.name for b in BUGS])
def test_bug_toml_is_valid(bug: corpus.Bug) -> None:
    # load_bugs validated every key; these are the rules a reader relies on
    assert bug.folder.name == bug.name
    assert (bug.folder / "agent.py").is_file()
    assert (bug.folder / "ground_truth.py").is_file()
    assert bug.issue.startswith("https://") and bug.fix.startswith("https://")
    assert sorted(bug.requirements_buggy) != sorted(bug.requirements_fixed)
    assert bug.kind in {k.value for k in IncidentKind}
    spec_file = bug.spec.split(":")[1]
    assert (bug.folder / spec_file).is_file(), f"{bug.spec} names no file of the folder"
    text = (bug.folder / "ground_truth.py").read_text(encoding="utf-8")
    assert "__file__" in text, "a ground truth finds agent.py from its own folder"


def test_the_judges_kinds_are_incident_kinds() -> None:
    assert {k.value for k in IncidentKind} >= corpus.KINDS


def _folder(tmp: Path, toml: str, files: tuple[str, ...] = ("agent.py", "ground_truth.py")) -> Path:
    folder = tmp / "x-1-bug"
    folder.mkdir()
    (folder / "bug.toml").write_text(toml, encoding="utf-8")
    for name in files:
        (folder / name).write_text("", encoding="utf-8")
    return folder


GOOD = """name = "x-1-bug"
framework = "pydantic-ai"
title = "t"
issue = "https://github.com/o/r/issues/1"
fix = "https://github.com/o/r/pull/2"
kind = "orphaned_result"
requirements_buggy = ["pydantic-ai-slim==2.0.0"]
requirements_fixed = ["pydantic-ai-slim==2.1.0"]
spec = "loop:agent.py:agent"
held_back = false
"""

BAD_TOMLS = {
    "not toml": ("name = ", "not valid TOML"),
    "missing key": (GOOD.replace('kind = "orphaned_result"\n', ""), "missing key(s) kind"),
    "unknown key": (GOOD + 'colour = "red"\n', "unknown key(s) colour"),
    "name differs": (GOOD.replace('name = "x-1-bug"', 'name = "y"'), "must equal the folder"),
    "bad kind": (GOOD.replace("orphaned_result", "oops"), "kind 'oops'"),
    "bad url": (GOOD.replace("https://github.com/o/r/pull/2", "see PR 2"), "not a public https"),
    "not pinned": (GOOD.replace("==2.1.0", ">=2.1"), "exact pins"),
    "same pins": (GOOD.replace("2.1.0", "2.0.0"), "are the same"),
    "held_back str": (GOOD.replace("held_back = false", 'held_back = "no"'), "must be a bool"),
    "not a loop": (GOOD.replace("loop:agent.py:agent", "agent.py:agent"), "loop: spec"),
}


@pytest.mark.parametrize("case", sorted(BAD_TOMLS))
def test_a_malformed_bug_toml_is_one_paragraph(tmp_path: Path, case: str) -> None:
    toml, needle = BAD_TOMLS[case]
    with pytest.raises(corpus.CorpusError) as err:
        corpus.load_bug(_folder(tmp_path, toml))
    text = str(err.value)
    assert needle in text and "Hint:" in text and "\n" not in text


def test_a_bug_without_its_ground_truth_is_refused(tmp_path: Path) -> None:
    with pytest.raises(corpus.CorpusError, match=r"ground_truth\.py is missing"):
        corpus.load_bug(_folder(tmp_path, GOOD, files=("agent.py",)))


@pytest.mark.parametrize("script", ["run", "venvs"])
def test_an_unknown_bug_name_exits_2(script: str, capsys: pytest.CaptureFixture[str]) -> None:
    from known_bugs import venvs

    main = kb_run.main if script == "run" else venvs.main
    assert main(["no-such-bug"]) == 2
    captured = capsys.readouterr()
    assert "unknown bug(s) no-such-bug" in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert "Traceback" not in captured.err + captured.out


def test_requirement_sets_name_one_venv_each() -> None:
    a = corpus.requirements_key(["b==1", "a==2"])
    assert a == corpus.requirements_key(["a==2", "b==1"])
    assert a != corpus.requirements_key(["a==2", "b==2"])


def _result(bug: corpus.Bug, release: str, gt: int, kinds: list[str]) -> dict[str, object]:
    return {
        "bug": bug.name,
        "release": release,
        "ground_truth": {"exit_status": gt, "output": "x"},
        "check": {
            "exit_status": 1 if kinds else 0,
            "verdict": "unsafe" if kinds else "safe",
            "kinds": kinds,
            "classes": {"trim": {"verdict": "unsafe" if kinds else "safe", "violations": kinds}},
        },
    }


def test_the_page_says_caught_and_quiet_by_its_rule(tmp_path: Path) -> None:
    bug = BUGS[0]
    other = "hang" if bug.kind != "hang" else "silent_loss"
    results = {
        (bug.name, "buggy"): _result(bug, "buggy", 1, [bug.kind]),
        (bug.name, "fixed"): _result(bug, "fixed", 0, [other]),
    }
    report.write_reports([bug], results, tmp_path)
    doc = json.loads((tmp_path / "known-bugs.json").read_text())
    (row,) = doc["rows"]
    assert row["reproduces"] is True and row["caught"] is True
    assert row["quiet_on_fix"] is True  # another kind on the fix is listed, not the bug's
    page = (tmp_path / "known-bugs.md").read_text()
    assert bug.name in page and other in page
    # the same bug flagged on its fix is not quiet
    results[(bug.name, "fixed")] = _result(bug, "fixed", 0, [bug.kind])
    report.write_reports([bug], results, tmp_path)
    (row,) = json.loads((tmp_path / "known-bugs.json").read_text())["rows"]
    assert row["quiet_on_fix"] is False and doc["summary"]["all"]["bugs"] == 1
    # ... nor caught: the kind in the same class on both releases is not this bug
    assert row["caught"] is False


def test_quiet_on_fix_reads_the_user_configuration_verdict(tmp_path: Path) -> None:
    """On a fixed release, the bug's kind owned by the framework (its plain agent fails the
    same way) is listed apart and does not make the row flagged; owned by the user's
    configuration, it does.  The split is read from each class's findings by run.py."""
    bug = BUGS[0]
    raw = {"exit_status": 0, "timed_out": False, "cpu_s": 1.0, "wall_s": 1.0, "stdout": json.dumps({
        "verdict": "unsafe", "details": {}, "placements": [{
            "scenario_class": "cancel", "verdict": "unsafe", "violations": [bug.kind],
            "findings": [{"violations": [bug.kind], "owner": "framework"}],
        }],
    }), "stderr": ""}  # fmt: skip
    fixed = kb_run._summarize_check(raw)
    assert fixed["user_kinds"] == [] and fixed["framework_kinds"] == [bug.kind]
    results: dict[tuple[str, str], dict[str, object]] = {
        (bug.name, "buggy"): _result(bug, "buggy", 1, [bug.kind]),
        (bug.name, "fixed"): {"bug": bug.name, "ground_truth": {"exit_status": 0}, "check": fixed},
    }
    report.write_reports([bug], results, tmp_path)
    (row,) = json.loads((tmp_path / "known-bugs.json").read_text())["rows"]
    assert row["quiet_on_fix"] is True
    assert f"configuration: none; framework: {bug.kind}" in (tmp_path / "known-bugs.md").read_text()
    owned = json.loads(raw["stdout"])  # type: ignore[arg-type]
    owned["placements"][0]["findings"][0]["owner"] = "configuration"
    fixed = kb_run._summarize_check({**raw, "stdout": json.dumps(owned)})
    results[(bug.name, "fixed")] = {
        "bug": bug.name,
        "ground_truth": {"exit_status": 0},
        "check": fixed,
    }
    report.write_reports([bug], results, tmp_path)
    (row,) = json.loads((tmp_path / "known-bugs.json").read_text())["rows"]
    assert row["quiet_on_fix"] is False


def _installed(pin: str) -> bool:
    name, version = pin.split("==")
    try:
        return importlib.metadata.version(name.split("[")[0]) == version
    except importlib.metadata.PackageNotFoundError:
        return False


CHEAP = [
    (b, r) for b in BUGS for r in corpus.RELEASES if all(_installed(p) for p in b.requirements(r))
]


@pytest.mark.skipif(not CHEAP, reason="no bug pins a release this venv has installed")
def test_one_ground_truth_in_this_venv(capsys: pytest.CaptureFixture[str]) -> None:
    """A bug's release that this venv has installed: its ground truth, in process (the
    framework is most likely imported already by the loop tests, so this costs little)."""
    bug, release = CHEAP[0]
    spec = importlib.util.spec_from_file_location(
        f"kb_ground_truth_{bug.name.replace('-', '_')}", bug.folder / "ground_truth.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    status = module.main()
    assert status == (1 if release == "buggy" else 0), capsys.readouterr().out


# The pair `make test` runs: the caught row whose check costs least (about 6 s of CPU per
# release in the committed page), from its venvs when `known_bugs/venvs.py` built them.
FAST_PAIR = "strands-2085-sliding-window-starts-with-assistant"
PAGE = REPO / "reports" / "known-bugs.json"


def _page_row(name: str) -> dict[str, object]:
    rows = json.loads(PAGE.read_text(encoding="utf-8"))["rows"]
    (row,) = [r for r in rows if r["bug"] == name]
    assert isinstance(row, dict)
    return row


def _run_row_and_compare(bug: corpus.Bug) -> None:
    """Both releases of a bug in their venvs (ground truth, then `prunecheck check` with its
    defaults: run.py's own run_pair, nothing cached), judged by the page's rules, against
    the bug's row of reports/known-bugs.json cell for cell."""
    results = {(bug.name, r): kb_run.run_pair(bug, r) for r in corpus.RELEASES}
    row = report.row_of(bug, results)
    page = _page_row(bug.name)
    said: list[str] = []
    for release in corpus.RELEASES:
        now, then = row[release], page[release]
        assert isinstance(now, dict) and isinstance(then, dict)
        assert now["ran"], f"{bug.name} [{release}] did not run: {now['error']}"
        for cell in ("ground_truth", "check_exit", "verdict", "user_kinds", "framework_kinds"):
            if now[cell] != then[cell]:
                said.append(f"{release} {cell}: now {now[cell]!r}, page {then[cell]!r}")
    for cell in ("reproduces", "caught", "quiet_on_fix"):
        if row[cell] != page[cell]:
            said.append(f"{cell}: now {row[cell]!r}, page {page[cell]!r}")
    assert not said, (
        f"{bug.name} differs from reports/known-bugs.json (make known-bugs BUGS={bug.name} "
        "rewrites it): " + "; ".join(said)
    )
    # the issue's bar, whatever the page says: the ground truth reproduces the bug on the
    # buggy release only, and the user-configuration verdict is quiet on the fix
    assert row["reproduces"] is True and row["quiet_on_fix"] is True, row


def _built(bug: corpus.Bug) -> bool:
    from known_bugs import venvs

    return all(
        venvs.stamp_of(corpus.venv_dir(bug.requirements(r))) is not None for r in corpus.RELEASES
    )


@pytest.mark.skipif(
    not _built(corpus.load_bug(corpus.BUGS / FAST_PAIR)) and os.environ.get("CI") != "true",
    reason=f"{FAST_PAIR}'s venvs are not built (python known_bugs/venvs.py {FAST_PAIR}, "
    "a few minutes from PyPI; make test-all and make known-bugs build them)",
)
def test_one_pair_from_its_built_venvs() -> None:
    """`make test`'s pair: one bug's buggy and fixed release, each in the venv
    known_bugs/venvs.py built for it (a build costs minutes and needs PyPI, so this uses the
    built ones and skips, naming the command, where there are none): its ground truth exits
    1 on the buggy release and 0 on the fixed one, `prunecheck check` with its defaults
    flags the bug's kind on the buggy release and not on the fixed one, and every cell
    matches the row of reports/known-bugs.json."""
    bug = corpus.load_bug(corpus.BUGS / FAST_PAIR)
    assert _built(bug), f"CI=true and {FAST_PAIR}'s venvs are not built: make known-bugs-pair"
    assert _page_row(FAST_PAIR)["caught"] is True, "the fast pair is a caught row"
    _run_row_and_compare(bug)


def test_make_builds_the_venvs_of_the_pair_the_suite_runs() -> None:
    """CI's `make known-bugs-pair` builds the pair this suite runs, not another one."""
    makefile = (corpus.REPO / "Makefile").read_text()
    assert f"KNOWN_BUGS_PAIR := {FAST_PAIR}\n" in makefile
    assert "make known-bugs-pair" in (corpus.REPO / ".ci" / "run").read_text()


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize("bug", BUGS, ids=[b.name for b in BUGS])
def test_every_row_end_to_end(bug: corpus.Bug) -> None:
    """`make test-all`'s corpus: every bug's row, building its venvs first where they are
    missing (known_bugs/venvs.py; needs PyPI), then both releases run and compared with
    reports/known-bugs.json as in the fast pair.  `make known-bugs` rewrites the page."""
    from known_bugs import venvs

    for release in corpus.RELEASES:
        venvs.build(tuple(sorted(bug.requirements(release))))
    _run_row_and_compare(bug)


def test_caught_where_only_the_buggy_release_flags_it_as_the_configurations(
    tmp_path: Path,
) -> None:
    """The bug's kind in the same class on both releases is caught only where the buggy
    release's finding is the configuration's and the fixed release's only the framework's
    (langchain-34159: a failed tool's unanswered call is the framework's on both)."""
    bug = BUGS[0]

    def check(*owners: str) -> dict[str, object]:
        findings = [{"violations": [bug.kind], "owner": owner} for owner in owners]
        raw = {"exit_status": 0, "timed_out": False, "cpu_s": 1.0, "wall_s": 1.0,
               "stdout": json.dumps({"verdict": "unsafe", "details": {}, "placements": [{
                   "scenario_class": "cancel", "verdict": "unsafe", "violations": [bug.kind],
                   "findings": findings}]}), "stderr": ""}  # fmt: skip
        return {
            "bug": bug.name,
            "ground_truth": {"exit_status": 0},
            "check": kb_run._summarize_check(raw),
        }

    def caught(buggy: dict[str, object], fixed: dict[str, object]) -> object:
        report.write_reports(
            [bug], {(bug.name, "buggy"): buggy, (bug.name, "fixed"): fixed}, tmp_path
        )
        (row,) = json.loads((tmp_path / "known-bugs.json").read_text())["rows"]
        return row["caught"]

    assert caught(check("framework", "configuration"), check("framework")) is True
    assert caught(check("framework"), check("framework")) is False
    assert caught(check("configuration"), check("configuration")) is False


def test_the_page_names_the_commit_each_run_was_measured_on(tmp_path: Path) -> None:
    """One commit for every run: one sentence naming it; runs of several commits: each
    commit with its runs, so a page mixing commits says so (issue 32's one-commit run)."""
    bug = BUGS[0]
    results: dict[tuple[str, str], dict[str, object]] = {
        (bug.name, r): {**_result(bug, r, int(r == "buggy"), []), "measured_on": {
            "commit": "a" * 40, "modified": False}}
        for r in corpus.RELEASES
    }  # fmt: skip
    report.write_reports([bug], results, tmp_path)
    page = (tmp_path / "known-bugs.md").read_text()
    assert f"measured on one prunecheck commit, `{'a' * 12}`." in page
    results[(bug.name, "fixed")]["measured_on"] = {"commit": "b" * 40, "modified": True}
    report.write_reports([bug], results, tmp_path)
    said = json.loads((tmp_path / "known-bugs.json").read_text())["measured_on"]
    assert "from 2 prunecheck commits" in said
    assert f"`{'a' * 12}`: {bug.name} [buggy]" in said
    assert f"`{'b' * 12}+`: {bug.name} [fixed]" in said
    del results[(bug.name, "buggy")]["measured_on"]
    report.write_reports([bug], results, tmp_path)
    assert f"`unrecorded`: {bug.name} [buggy]" in (tmp_path / "known-bugs.md").read_text()


def test_a_run_records_this_checkouts_commit() -> None:
    said = kb_run.measured_on()
    if said["commit"] is None:
        pytest.skip("not a git checkout")
    assert isinstance(said["commit"], str) and len(said["commit"]) == 40
    assert isinstance(said["modified"], bool)


def test_the_page_says_where_venvs_of_another_checkout_came_from(tmp_path: Path) -> None:
    """A run through a link to another checkout's venvs (.known-bugs/venvs a symlink) is
    named, with its folder; venvs built in the checkout that ran them say whether that was a
    clean clone, and what kept it from being one."""
    bug = BUGS[0]
    own = str(corpus.VENVS / "abc")
    clean = {"commit": "a" * 40, "modified": False, "untracked": False, "checkout": "clone"}
    results: dict[tuple[str, str], dict[str, object]] = {
        (bug.name, r): {
            **_result(bug, r, int(r == "buggy"), []),
            "venv_resolved": own,
            "venv_built_in": str(corpus.REPO),
            "measured_on": dict(clean),
        }
        for r in corpus.RELEASES
    }

    def venvs_said() -> str:
        report.write_reports([bug], results, tmp_path)
        doc = json.loads((tmp_path / "known-bugs.json").read_text())
        assert doc["venvs"] in (tmp_path / "known-bugs.md").read_text()
        return str(doc["venvs"])

    said = venvs_said()
    assert "the 1 venvs of these 2 runs were built from PyPI" in said
    assert "in a clean clone, the checkout that ran them" in said
    results[(bug.name, "fixed")]["measured_on"] = {**clean, "checkout": "worktree"}
    assert "not a clean clone (checkout: clone, worktree)" in venvs_said()
    results[(bug.name, "fixed")]["measured_on"] = {**clean, "untracked": True}
    assert "not a clean clone (untracked files" in venvs_said()
    results[(bug.name, "fixed")]["measured_on"] = dict(clean)
    del results[(bug.name, "fixed")]["venv_built_in"]
    assert "not recorded for every run" in venvs_said()
    results[(bug.name, "fixed")]["venv_built_in"] = "/elsewhere/x"
    said = venvs_said()
    assert "in /elsewhere/x and copied into this checkout (the rest in this checkout)." in said
    assert str(corpus.REPO) not in said  # where the checkout is cloned does not change the page
    results[(bug.name, "buggy")]["venv_built_in"] = "/elsewhere/y"
    assert "in /elsewhere/x, /elsewhere/y and copied into this checkout." in venvs_said()
    elsewhere = tmp_path / "other" / ".known-bugs" / "venvs"
    results[(bug.name, "fixed")]["venv_resolved"] = str(elsewhere / "abc")
    said = venvs_said()
    assert "1 run used venvs built by `known_bugs/venvs.py`" in said
    assert f"1 from {elsewhere}" in said


def test_a_venv_says_which_checkout_built_it(tmp_path: Path) -> None:
    """venvs.built_in: the stamp's built_in, else the folder prunecheck's editable install
    points at (a venv built before the stamp recorded it), else None."""
    from known_bugs import venvs

    folder = tmp_path / "v"
    dist = folder / "lib" / "python3.11" / "site-packages" / "prunecheck-0.dist-info"
    dist.mkdir(parents=True)
    assert venvs.built_in(folder) is None
    (dist / "direct_url.json").write_text('{"url": "file:///tmp/c%2032", "dir_info": {}}')
    assert venvs.built_in(folder) == "/tmp/c 32"
    (folder / venvs.STAMP).write_text('{"built_in": "/work/x"}')
    assert venvs.built_in(folder) == "/work/x"
