"""Run the known-bug corpus: for each bug and each release (buggy, fixed), the
bug's ground truth and ``prunecheck check`` with its defaults, each in that
release's venv (:mod:`venvs`), and write ``reports/known-bugs.md`` and
``reports/known-bugs.json``.

Results are written a pair at a time (``.known-bugs/results/``), keyed by the
bug folder's files, the pins and prunecheck's source: a run that was
interrupted resumes where it stopped, and an unchanged pair is not run again
(``--force`` runs it again).  The venvs are built first if they are missing
(that needs PyPI); everything else runs offline.

Usage::

    python known_bugs/run.py                      # every bug, both releases
    python known_bugs/run.py NAME --release buggy # one row's one release
    python known_bugs/run.py --report-only        # rewrite the pages from the results
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from known_bugs.corpus import RELEASES, REPO, Bug, CorpusError, load_bugs, venv_dir
from known_bugs.report import write_reports
from known_bugs.venvs import build, built_in, stamp_of

__all__ = ["RESULTS", "main", "measured_on", "pair_key", "run_pair"]

RESULTS = REPO / ".known-bugs" / "results"
GT_TIMEOUT = 300.0
CHECK_TIMEOUT = 1800.0


def _digest_tree(root: Path, pattern: str) -> str:
    h = hashlib.sha256()
    for path in sorted(root.rglob(pattern)):
        if "__pycache__" in path.parts or any(p.startswith(".") for p in path.parts[-2:]):
            continue
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def pair_key(bug: Bug, release: str, src_digest: str) -> str:
    """What a pair's result depends on: the agent, the ground truth, the spec, the pins and
    prunecheck's code (not the prose of bug.toml: editing its notes reruns nothing)."""
    h = hashlib.sha256()
    for name in ("agent.py", "ground_truth.py"):
        h.update((bug.folder / name).read_bytes())
    h.update(bug.spec.encode())
    h.update(json.dumps(sorted(bug.requirements(release))).encode())
    h.update(src_digest.encode())
    return h.hexdigest()[:16]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(cmd: list[str], cwd: Path, timeout: float, env: dict[str, str]) -> dict[str, object]:
    before = _children_cpu()
    started = time.monotonic()
    try:
        done = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
        status: int | None = done.returncode
        out, err = done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        status = None
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
    return {
        "exit_status": status,
        "timed_out": status is None,
        "stdout": out,
        "stderr": err,
        "cpu_s": round(_children_cpu() - before, 2),
        "wall_s": round(time.monotonic() - started, 1),
    }


def _tail(text: str, lines: int = 6) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _summarize_check(raw: dict[str, object]) -> dict[str, object]:
    """Verdict, exit status and the violation kinds per scenario class of a check."""
    out: dict[str, object] = {
        "exit_status": raw["exit_status"],
        "timed_out": raw["timed_out"],
        "cpu_s": raw["cpu_s"],
        "wall_s": raw["wall_s"],
    }
    try:
        doc = json.loads(str(raw["stdout"]))
    except json.JSONDecodeError:
        out["verdict"] = "timeout" if raw["timed_out"] else "error"
        out["error"] = _tail(str(raw["stderr"]), 1)  # a traceback's last line names it
        out["stderr_tail"] = _tail(str(raw["stderr"]), 12)
        return out
    details = doc.get("details") or {}
    # a safe verdict that exercised nothing says so: "vacuous", not "safe"
    out["verdict"] = "vacuous" if details.get("vacuous") else doc.get("verdict")
    out["verdict_line"] = details.get("verdict_line")
    out["error"] = doc.get("error")
    classes: dict[str, dict[str, object]] = {}
    for placement in doc.get("placements") or []:
        if not isinstance(placement, dict) or "scenario_class" not in placement:
            continue
        entry: dict[str, object] = {
            "verdict": placement.get("verdict"),
            "violations": placement.get("violations") or [],
            "schedules": placement.get("schedules"),
        }
        # The framework/user split of the loop verdict, where the JSON has one.
        for key, value in placement.items():
            if "framework" in key or "user" in key or "whose" in key:
                entry[key] = value
        # whose each finding is (the JSON's owner: "configuration" or "framework")
        owned: dict[str, set[str]] = {"configuration": set(), "framework": set()}
        for finding in placement.get("findings") or []:
            if isinstance(finding, dict) and finding.get("owner") in owned:
                owned[str(finding["owner"])].update(str(v) for v in finding.get("violations") or [])
        if "findings" in placement:
            entry["user_violations"] = sorted(owned["configuration"])
            entry["framework_violations"] = sorted(owned["framework"])
        classes[str(placement["scenario_class"])] = entry
    out["classes"] = classes
    for key, value in doc.items():
        if "framework" in key or "user" in key or "whose" in key:
            out[key] = value
    kinds: set[str] = set()
    for entry in classes.values():
        kinds.update(str(v) for v in entry["violations"])  # type: ignore[attr-defined]
    out["kinds"] = sorted(kinds)
    if any("user_violations" in entry for entry in classes.values()):
        # the user-configuration verdict's kinds; the framework's (every configuration
        # of that release shares them) apart
        for key, field in (("user_kinds", "user_violations"),
                           ("framework_kinds", "framework_violations")):  # fmt: skip
            found: set[str] = set()
            for entry in classes.values():
                owned_kinds = entry.get(field)
                if isinstance(owned_kinds, list):
                    found.update(str(v) for v in owned_kinds)
            out[key] = sorted(found)
    out["first_violation"] = doc.get("first_violation")
    return out


def commands(bug: Bug, release: str) -> dict[str, str]:
    """The shell commands that rerun one release of a row from a clean clone."""
    venv = venv_dir(bug.requirements(release)).relative_to(REPO)
    folder = bug.folder.relative_to(REPO)
    up = "/".join(".." for _ in folder.parts)
    return {
        "row": f"python known_bugs/run.py {bug.name} --release {release} --force",
        "venv": f"python known_bugs/venvs.py {bug.name}",
        "ground_truth": f"cd {folder} && {up}/{venv}/bin/python ground_truth.py",
        "check": f"cd {folder} && {up}/{venv}/bin/prunecheck check {shlex.quote(bug.spec)} --json",
    }


def run_pair(bug: Bug, release: str, *, check_timeout: float = CHECK_TIMEOUT) -> dict[str, object]:
    """One release of one bug: its ground truth and ``prunecheck check``."""
    venv = venv_dir(bug.requirements(release))
    stamp = stamp_of(venv)
    row: dict[str, object] = {
        "bug": bug.name,
        "release": release,
        "requirements": list(bug.requirements(release)),
        "venv": str(venv.relative_to(REPO)),
        # where the venv really is: outside this checkout when .known-bugs/venvs is a link
        "venv_resolved": str(venv.resolve()),
        # the checkout whose known_bugs/venvs.py built it (from PyPI)
        "venv_built_in": built_in(venv),
        "commands": commands(bug, release),
    }
    if stamp is None:
        row["error"] = f"venv {venv} is not built (python known_bugs/venvs.py {bug.name})"
        return row
    row["installed"] = stamp.get("installed")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # prunecheck from the checkout that runs the corpus, not the one the venv was built from
    # (its editable install may point at another worktree)
    env["PYTHONPATH"] = str(REPO / "src")
    gt = _run([str(venv / "bin" / "python"), "ground_truth.py"], bug.folder, GT_TIMEOUT, env)
    row["ground_truth"] = {
        "exit_status": gt["exit_status"],
        "timed_out": gt["timed_out"],
        "output": _tail(str(gt["stdout"]) + "\n" + str(gt["stderr"])),
        "cpu_s": gt["cpu_s"],
    }
    with tempfile.TemporaryDirectory(prefix="kb-failures-") as failures:
        # a new user's first run: no failure database from an earlier run
        env_check = {**env, "PRUNECHECK_FAILURES": failures}
        cmd = [str(venv / "bin" / "prunecheck"), "check", bug.spec, "--json"]
        raw = _run(cmd, bug.folder, check_timeout, env_check)
    row["check"] = _summarize_check(raw)
    return row


def measured_on() -> dict[str, object]:
    """The prunecheck commit a row is measured on: ``git rev-parse HEAD`` of this checkout,
    whether its ``src/`` or ``known_bugs/`` differ from that commit (uncommitted edits
    make the commit alone not name the code that ran) or hold untracked files, and whether
    the checkout is a clone of its own (``.git`` a folder) or a worktree of another
    (``.git`` a file).  ``None`` where git does not say."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(REPO), *args], capture_output=True, text=True, check=False
            )
        except OSError:
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no", "--", "src", "known_bugs")
    untracked = git("ls-files", "--others", "--exclude-standard", "--", "src", "known_bugs")
    dot_git = REPO / ".git"
    return {
        "commit": commit,
        "modified": None if status is None else bool(status),
        "untracked": None if untracked is None else bool(untracked),
        "checkout": "clone" if dot_git.is_dir() else "worktree" if dot_git.is_file() else None,
    }


def _src_digest() -> str:
    return _digest_tree(REPO / "src" / "prunecheck", "*.py")


def _load_results() -> dict[tuple[str, str], dict[str, object]]:
    out: dict[tuple[str, str], dict[str, object]] = {}
    if RESULTS.is_dir():
        for path in sorted(RESULTS.glob("*.json")):
            try:
                row = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                continue
            out[(str(row.get("bug")), str(row.get("release")))] = row
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the pairs asked for, then write the pages; exit 2 on bad input."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bugs", nargs="*", help="bug names (default: every bug)")
    parser.add_argument("--release", choices=[*RELEASES, "both"], default="both")
    parser.add_argument("--force", action="store_true", help="run pairs again even if unchanged")
    parser.add_argument("--no-build", action="store_true", help="never build a venv")
    parser.add_argument("--report-only", action="store_true", help="only rewrite the pages")
    parser.add_argument("--check-timeout", type=float, default=CHECK_TIMEOUT, metavar="S")
    parser.add_argument("--out", type=Path, default=REPO / "reports", metavar="DIR")
    args = parser.parse_args(argv)
    try:
        selected = load_bugs(args.bugs or None)
        everything = load_bugs() if args.bugs else selected
    except CorpusError as exc:
        print(f"known_bugs/run.py: {exc}", file=sys.stderr)
        return 2
    if args.check_timeout <= 0:
        print("known_bugs/run.py: --check-timeout must be positive seconds", file=sys.stderr)
        return 2
    results = _load_results()
    releases = list(RELEASES) if args.release == "both" else [args.release]
    if not args.report_only:
        src = _src_digest()
        RESULTS.mkdir(parents=True, exist_ok=True)
        for bug in selected:
            for release in releases:
                key = pair_key(bug, release, src)
                old = results.get((bug.name, release))
                if old is not None and old.get("key") == key and not args.force:
                    print(f"same  {bug.name} [{release}] (unchanged since its last run)")
                    continue
                if not args.no_build and stamp_of(venv_dir(bug.requirements(release))) is None:
                    try:
                        build(tuple(sorted(bug.requirements(release))))
                    except (RuntimeError, subprocess.CalledProcessError) as exc:
                        print(f"FAILED venv of {bug.name} [{release}]: {exc}", file=sys.stderr)
                print(f"run   {bug.name} [{release}]", flush=True)
                row = run_pair(bug, release, check_timeout=args.check_timeout)
                row["key"] = key
                row["measured_on"] = measured_on()
                results[(bug.name, release)] = row
                out = RESULTS / f"{bug.name}.{release}.json"
                out.write_text(json.dumps(row, indent=2, default=str) + "\n", encoding="utf-8")
                gt, ch = row.get("ground_truth"), row.get("check")
                said = (
                    f"ground truth exit {gt.get('exit_status')}; "
                    f"check {ch.get('verdict')} {ch.get('kinds', '')}"
                    if isinstance(gt, dict) and isinstance(ch, dict)
                    else str(row.get("error"))
                )
                print(f"      {said}", flush=True)
                write_reports(everything, results, args.out)
    write_reports(everything, results, args.out)
    print(f"wrote {args.out / 'known-bugs.md'} and {args.out / 'known-bugs.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
