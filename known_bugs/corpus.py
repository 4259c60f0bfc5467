"""The known-bug corpus: each folder of ``known_bugs/`` is one real, public
context or history bug of an agent framework (issue 32).

A bug folder holds ``bug.toml`` (what the bug is, where it was reported and
fixed, the buggy and the fixed release pinned), ``agent.py`` (the agent as the
report's user configured it) and ``ground_truth.py`` (the bug's scenario played
with the framework's own test model: exit 1 if the bug happened, 0 if not, 2 if
it could not run).  This module reads and validates those folders and names the
virtual environment of each requirement set; :mod:`venvs` builds them and
:mod:`run` runs the ground truths and ``prunecheck check`` in them.

Standard library only: it runs under any Python 3.11+ (the venvs' too).
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BUGS",
    "KINDS",
    "RELEASES",
    "REPO",
    "VENVS",
    "Bug",
    "CorpusError",
    "load_bug",
    "load_bugs",
    "requirements_key",
    "venv_dir",
]

BUGS = Path(__file__).resolve().parent
REPO = BUGS.parent
VENVS = REPO / ".known-bugs" / "venvs"
RELEASES = ("buggy", "fixed")

#: The violation kinds of the loop judge (``prunecheck.model.incidents`` and
#: :mod:`prunecheck.sim.subjects.loops.judge`), plus ``provider_rejection``: a request a
#: provider refuses.
KINDS = frozenset(
    {
        "orphaned_result",
        "unanswered_call",
        "invalid_prune",
        "duplicated_side_effect",
        "silent_loss",
        "hang",
        "synthesized_result",
        "truncated_payload",
        "provider_rejection",
    }
)

FRAMEWORKS = frozenset(
    {
        "pydantic-ai",
        "openai-agents",
        "langgraph",
        "langchain",
        "autogen",
        "google-adk",
        "strands",
        "llama-index",
        "agent-framework",
        "ai-sdk",
    }
)

_REQUIRED = {
    "name": str,
    "framework": str,
    "title": str,
    "issue": str,
    "fix": str,
    "kind": str,
    "requirements_buggy": list,
    "requirements_fixed": list,
    "spec": str,
    "held_back": bool,
}
_OPTIONAL = {"notes": str}
_URL = re.compile(r"^https://[\w.-]+\.[a-z]{2,}/\S+$")
_PIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9_,.-]+\])?==[A-Za-z0-9.+!-]+$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$")


class CorpusError(ValueError):
    """A bug folder or its ``bug.toml`` is not as the corpus needs it."""


@dataclass(frozen=True, slots=True)
class Bug:
    """One bug of the corpus, as its ``bug.toml`` says."""

    name: str
    framework: str
    title: str
    issue: str
    fix: str
    kind: str
    requirements_buggy: tuple[str, ...]
    requirements_fixed: tuple[str, ...]
    spec: str
    held_back: bool
    notes: str
    folder: Path

    def requirements(self, release: str) -> tuple[str, ...]:
        """The pinned requirements of ``release`` (``buggy`` or ``fixed``)."""
        if release == "buggy":
            return self.requirements_buggy
        if release == "fixed":
            return self.requirements_fixed
        raise CorpusError(f"release {release!r}: a release is one of {', '.join(RELEASES)}")

    def release_label(self, release: str) -> str:
        """The pins of ``release`` in short: ``pkg==1.2`` joined by commas."""
        return ", ".join(self.requirements(release))


def _fail(path: Path, rule: str, hint: str) -> CorpusError:
    return CorpusError(f"{path}: {rule}. Hint: {hint}")


def load_bug(folder: Path) -> Bug:
    """The :class:`Bug` of ``folder``, validated (raises :class:`CorpusError`)."""
    toml = folder / "bug.toml"
    if not toml.is_file():
        raise _fail(folder, "a bug folder needs a bug.toml", "see known_bugs/README.md")
    try:
        data = tomllib.loads(toml.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise _fail(toml, f"not valid TOML ({exc})", "fix the syntax") from None
    missing = sorted(set(_REQUIRED) - set(data))
    if missing:
        raise _fail(toml, f"missing key(s) {', '.join(missing)}", "see known_bugs/README.md")
    unknown = sorted(set(data) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise _fail(toml, f"unknown key(s) {', '.join(unknown)}", "see known_bugs/README.md")
    for key, typ in {**_REQUIRED, **_OPTIONAL}.items():
        if key in data and not isinstance(data[key], typ):
            raise _fail(toml, f"{key} must be a {typ.__name__}", f"write {key} as a TOML {typ}")
    if data["name"] != folder.name or not _NAME.match(folder.name):
        raise _fail(
            toml,
            f"name {data['name']!r} must equal the folder's name {folder.name!r} "
            "(lower case, digits, dots and hyphens)",
            "rename the folder or the key",
        )
    if data["framework"] not in FRAMEWORKS:
        raise _fail(
            toml,
            f"framework {data['framework']!r} is not one of {', '.join(sorted(FRAMEWORKS))}",
            "use one of those names",
        )
    if data["kind"] not in KINDS:
        raise _fail(
            toml,
            f"kind {data['kind']!r} is not one of {', '.join(sorted(KINDS))}",
            "use the loop judge's violation kind",
        )
    for key in ("issue", "fix"):
        if not _URL.match(data[key]):
            raise _fail(toml, f"{key} {data[key]!r} is not a public https URL", "paste the URL")
    for key in ("requirements_buggy", "requirements_fixed"):
        reqs = data[key]
        if not reqs or not all(isinstance(r, str) and _PIN.match(r) for r in reqs):
            raise _fail(
                toml,
                f"{key} must be a non-empty list of exact pins (name==version)",
                'write e.g. ["openai-agents==0.19.4"]',
            )
    if sorted(data["requirements_buggy"]) == sorted(data["requirements_fixed"]):
        raise _fail(toml, "the buggy and the fixed pins are the same", "pin two releases")
    if not data["spec"].startswith("loop:"):
        raise _fail(toml, f"spec {data['spec']!r} must be a loop: spec", "e.g. loop:agent.py:agent")
    for needed in ("agent.py", "ground_truth.py"):
        if not (folder / needed).is_file():
            raise _fail(folder, f"{needed} is missing", "every bug has an agent and a ground truth")
    return Bug(
        name=data["name"],
        framework=data["framework"],
        title=data["title"],
        issue=data["issue"],
        fix=data["fix"],
        kind=data["kind"],
        requirements_buggy=tuple(data["requirements_buggy"]),
        requirements_fixed=tuple(data["requirements_fixed"]),
        spec=data["spec"],
        held_back=data["held_back"],
        notes=data.get("notes", ""),
        folder=folder,
    )


def load_bugs(names: list[str] | None = None, root: Path = BUGS) -> list[Bug]:
    """Every bug of ``root`` (or the ``names`` given), sorted by name."""
    folders = sorted(p for p in root.iterdir() if p.is_dir() and (p / "bug.toml").exists())
    if names:
        known = {p.name: p for p in folders}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise CorpusError(
                f"unknown bug(s) {', '.join(unknown)}: no folder of {root} has that name "
                f"with a bug.toml. Hint: one of {', '.join(sorted(known)) or '(none yet)'}"
            )
        folders = [known[n] for n in names]
    return [load_bug(f) for f in folders]


def requirements_key(requirements: tuple[str, ...] | list[str]) -> str:
    """The short hash naming the venv of one requirement set (order ignored)."""
    canon = json.dumps(sorted(r.strip().lower() for r in requirements))
    return hashlib.sha256(canon.encode()).hexdigest()[:12]


def venv_dir(requirements: tuple[str, ...] | list[str], root: Path = VENVS) -> Path:
    """Where the venv of ``requirements`` lives."""
    return root / requirements_key(requirements)
