"""Build a virtual environment per distinct requirement set of the known-bug
corpus, from PyPI: ``.known-bugs/venvs/<short hash>/`` (git-ignored).

Each venv holds the pinned framework release(s) and prunecheck itself from this
repository (an editable install, so ``prunecheck check`` there is this
checkout's code against that release).  prunecheck's ``[loops]`` extra pins
today's framework versions, so prunecheck goes in with ``--no-deps`` and only
its harness dependencies beside the pins; the pins are then read back from the
venv's metadata and ``pip check`` is run, and a venv whose pins did not end up
installed is an error.

Idempotent and resumable: a finished venv has a stamp (``.stamp.json``) and is
skipped; an unfinished one (no stamp) is removed and built again.  A lock per
venv lets two builds run at once.  Once built, everything runs offline.

Usage::

    python known_bugs/venvs.py                 # every bug's buggy and fixed venv
    python known_bugs/venvs.py NAME [NAME...]  # those bugs' venvs only
    python known_bugs/venvs.py --list          # requirement sets and their folders
"""

from __future__ import annotations

import argparse
import fcntl
import json
import shutil
import subprocess
import sys
import time
import tomllib
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from known_bugs.corpus import REPO, VENVS, CorpusError, load_bugs, requirements_key, venv_dir

__all__ = [
    "STAMP",
    "build",
    "built_in",
    "harness_requirements",
    "main",
    "requirement_sets",
    "stamp_of",
]

STAMP = ".stamp.json"


def harness_requirements() -> list[str]:
    """The ``harness`` extra of pyproject.toml: what ``prunecheck check`` imports."""
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    extra: list[str] = data["project"]["optional-dependencies"]["harness"]
    return [r for r in extra if not r.startswith("prunecheck")]


def requirement_sets(names: list[str] | None = None) -> dict[str, tuple[str, ...]]:
    """Short hash -> requirement set, over both releases of the bugs named (or all)."""
    out: dict[str, tuple[str, ...]] = {}
    for bug in load_bugs(names):
        for reqs in (bug.requirements_buggy, bug.requirements_fixed):
            out[requirements_key(reqs)] = tuple(sorted(reqs))
    return dict(sorted(out.items()))


def stamp_of(folder: Path) -> dict[str, object] | None:
    """The stamp of a finished venv, or None."""
    path = folder / STAMP
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def built_in(folder: Path) -> str | None:
    """The checkout a venv was built in: its stamp's ``built_in``, else (a stamp from before
    venvs.py recorded it) the folder prunecheck's editable install points at, read from
    its ``direct_url.json``; None if neither says.  A venv reached through a link to another
    checkout's ``.known-bugs/venvs`` names that other checkout."""
    stamp = stamp_of(folder)
    if stamp is not None and isinstance(stamp.get("built_in"), str):
        return str(stamp["built_in"])
    for path in sorted(
        folder.glob("lib/python*/site-packages/prunecheck-*.dist-info/direct_url.json")
    ):
        try:
            url = json.loads(path.read_text(encoding="utf-8")).get("url")
        except (OSError, json.JSONDecodeError, AttributeError):
            continue
        if isinstance(url, str) and url.startswith("file:"):
            return urllib.request.url2pathname(urllib.parse.urlparse(url).path)
    return None


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(cmd: list[str], log: Path) -> None:
    print("  $", " ".join(cmd), flush=True)
    with open(log, "a", encoding="utf-8") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-15:]
        raise RuntimeError(
            f"{cmd[2:5]} failed (exit {done.returncode}); the end of {log}:\n" + "\n".join(tail)
        )


_VERIFY = r"""
import importlib.metadata as md, json, re, sys
pins = json.loads(sys.argv[1])
found = {}
for pin in pins:
    name, version = pin.split("==")
    name = re.sub(r"\[.*\]", "", name)
    try:
        found[name] = md.version(name)
    except md.PackageNotFoundError:
        found[name] = None
import prunecheck.sim.cli  # noqa: F401  (the harness imports)
print(json.dumps(found))
"""


def build(requirements: tuple[str, ...], *, root: Path = VENVS) -> Path:
    """The venv of ``requirements``, built if it has no stamp yet."""
    folder = venv_dir(requirements, root)
    with _locked(folder):
        if stamp_of(folder) is not None:
            print(f"ok    {folder.name}  {', '.join(requirements)} (built before)", flush=True)
            return folder
        if folder.exists():
            print(f"clean {folder.name}  (an unfinished build)", flush=True)
            shutil.rmtree(folder)
        print(f"build {folder.name}  {', '.join(requirements)}", flush=True)
        started = time.time()
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        log = folder / "build.log"
        py = str(folder / "bin" / "python")
        pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        _run([*pip, *harness_requirements(), *requirements], log)
        _run([*pip, "--no-deps", "-e", str(REPO)], log)
        done = subprocess.run(
            [py, "-c", _VERIFY, json.dumps(list(requirements))],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{folder}: the harness does not import:\n{done.stderr[-2000:]}")
        found = json.loads(done.stdout.strip().splitlines()[-1])
        wrong = []
        for pin in requirements:
            name, version = pin.split("==")
            base = name.split("[")[0]
            if found.get(base) != version:
                wrong.append(f"{base}: pinned {version}, installed {found.get(base)}")
        if wrong:
            raise RuntimeError(f"{folder}: the pins did not end up installed: {'; '.join(wrong)}")
        check = subprocess.run(
            [py, "-m", "pip", "check", "--disable-pip-version-check"],
            capture_output=True,
            text=True,
            check=False,
        )
        stamp = {
            "requirements": list(requirements),
            "installed": found,
            "pip_check": check.stdout.strip() or check.stderr.strip(),
            "pip_check_ok": check.returncode == 0,
            "python": sys.version.split()[0],
            # where and when it was built, for the page's provenance sentence
            "built_in": str(REPO),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "build_s": round(time.time() - started, 1),
        }
        if check.returncode != 0:
            print(f"      pip check: {stamp['pip_check']}", flush=True)
        (folder / STAMP).write_text(json.dumps(stamp, indent=2) + "\n", encoding="utf-8")
        print(f"done  {folder.name}", flush=True)
        return folder


def main(argv: list[str] | None = None) -> int:
    """Build the venvs of the bugs named (default: all); exit 2 on bad input."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bugs", nargs="*", help="bug names (default: every bug)")
    parser.add_argument("--list", action="store_true", help="list the sets; build nothing")
    args = parser.parse_args(argv)
    try:
        sets = requirement_sets(args.bugs or None)
    except CorpusError as exc:
        print(f"known_bugs/venvs.py: {exc}", file=sys.stderr)
        return 2
    failed = 0
    for key, reqs in sets.items():
        if args.list:
            state = "built" if stamp_of(VENVS / key) else "not built"
            print(f"{key}  {VENVS / key}  {', '.join(reqs)}  ({state})")
            continue
        try:
            build(reqs)
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            failed += 1
            print(f"FAILED {key}: {exc}", file=sys.stderr, flush=True)
    if failed:
        print(f"{failed} of {len(sets)} venvs failed to build", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
