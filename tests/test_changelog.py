"""CHANGELOG.md cannot drift: every name it lists as removed is gone and its
replacement imports, every name it lists as deprecated warns and resolves,
and every name a module of 0.2.0 exported is still exported or listed."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import warnings
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

from prunecheck._deprecated import MODEL_MOVED, PrunecheckDeprecationWarning
from prunecheck.sim.subjects.runtimes.stimuli import Stimulus

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")

_ENTRY = re.compile(r"^- `(?P<old>[\w.]+?)(?:\.\{(?P<names>[^}]+)\})?` → `(?P<new>[\w.]+)`", re.M)


def _section(release: str) -> str:
    start = CHANGELOG.index(f"## [{release}]")
    end = CHANGELOG.find("\n## [", start + 1)
    return CHANGELOG[start : end if end >= 0 else None]


def _entries(release: str, kind: str) -> list[tuple[str, str]]:
    """(old, replacement) pairs of the ``### {kind}…`` subsections of a release."""
    pairs = []
    for block in re.split(r"^### ", _section(release), flags=re.M)[1:]:
        if not block.startswith(kind):
            continue
        for m in _ENTRY.finditer(block):
            if m["names"] is None:
                pairs.append((m["old"], m["new"]))
            else:
                for name in (n.strip() for n in m["names"].split(",")):
                    pairs.append((f"{m['old']}.{name}", f"{m['new']}.{name}"))
    return pairs


REMOVED = _entries("Unreleased", "Removed")
DEPRECATED = _entries("Unreleased", "Deprecated")
#: 0.2.0's stimulus classes (issue 36): each is a class the stimuli of its kind are
#: instances of, not the replacement itself.
STIMULI = [(old, new) for old, new in DEPRECATED if ".runtimes.stimuli." in old]
MODEL_DEPRECATED = [pair for pair in DEPRECATED if pair not in STIMULI]


def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            return None
        raise


def _defined_in(module: ModuleType, name: str) -> bool:
    """Whether the module's own source binds ``name`` (not only imports it)."""
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return True
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
    return False


def _is_gone(dotted: str) -> bool:
    """Nothing public answers to ``dotted``: no such module, and its parent
    neither exports nor defines it (a module may still import the name for
    its own use, as any module imports what it uses)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if _module(dotted) is not None:
            return False
        parent_name, name = dotted.rsplit(".", 1)
        parent = _module(parent_name)
        if parent is None:
            return True
        return name not in getattr(parent, "__all__", ()) and not (
            hasattr(parent, name) and _defined_in(parent, name)
        )


def _resolve(dotted: str) -> object:
    """The module or the attribute ``dotted`` names; raises if neither."""
    module = _module(dotted)
    if module is not None:
        return module
    parent_name, name = dotted.rsplit(".", 1)
    parent = _module(parent_name)
    assert parent is not None, f"no module {parent_name}"
    return getattr(parent, name)


def test_the_changelog_has_the_sections_keep_a_changelog_names() -> None:
    assert CHANGELOG.startswith("# Changelog\n")
    assert re.findall(r"^## \[([^]]+)\]", CHANGELOG, re.M) == ["Unreleased", "0.2.0", "0.1.0"]
    assert len(REMOVED) > 80 and len(MODEL_DEPRECATED) == len(MODEL_MOVED)
    olds = [old for old, _ in REMOVED + DEPRECATED]
    assert len(olds) == len(set(olds)), "a name is listed twice"


@pytest.mark.parametrize(("old", "new"), REMOVED, ids=[old for old, _ in REMOVED])
def test_a_removed_name_is_gone_and_its_replacement_imports(old: str, new: str) -> None:
    assert _is_gone(old), f"CHANGELOG.md says {old} is removed, but it is still there"
    assert _resolve(new) is not None
    assert not _is_gone(new), f"{new} (the replacement of {old}) is not exported"


@pytest.mark.parametrize(("old", "new"), MODEL_DEPRECATED, ids=[old for old, _ in MODEL_DEPRECATED])
def test_a_deprecated_name_warns_and_is_its_replacement(old: str, new: str) -> None:
    parent, name = old.rsplit(".", 1)
    with pytest.warns(PrunecheckDeprecationWarning, match="0.4.0"):
        value = getattr(importlib.import_module(parent), name)
    assert value is _resolve(new)


@pytest.mark.parametrize(("old", "new"), STIMULI, ids=[old for old, _ in STIMULI])
def test_a_020_stimulus_class_warns_and_matches_its_kind_of_the_replacement(
    old: str, new: str
) -> None:
    from prunecheck.sim.subjects.runtimes.stimuli import _OLD_KINDS as NAMES

    parent, name = old.rsplit(".", 1)
    with pytest.warns(PrunecheckDeprecationWarning, match="0.4.0"):
        value = getattr(importlib.import_module(parent), name)
    replacement = _resolve(new)
    assert isinstance(value, type) and isinstance(replacement, type)
    kind = NAMES[name]
    assert f'stimulus.kind == "{kind}"' in CHANGELOG  # the migration the entry names
    for other, other_kind in NAMES.items():
        sample = _stimulus(other)
        assert isinstance(sample, replacement) and sample.kind == other_kind
        assert isinstance(sample, value) is (other == name)


def _stimulus(name: str) -> Stimulus:
    """A stimulus built with 0.2.0's fields for the old class ``name``."""
    from prunecheck.sim.subjects.runtimes.stimuli import Call
    from prunecheck.sim.subjects.runtimes.stimuli import _old_class as old_class

    args: dict[str, tuple[object, ...]] = {
        "System": ("m1", "be brief"),
        "User": ("m2", "hello there"),
        "AssistantText": ("m3", "thinking", False),
        "ToolCalls": ("m4", "calling", (Call("c1", "read_file", {"path": "a.py"}),)),
        "ResultChunk": ("c1", "four words of output", True),
        "ToolFailed": ("c1", "timed out"),
        "FileChanged": ("a.py",),
    }
    built = old_class(name)(*args.get(name, ()))
    assert isinstance(built, Stimulus)
    return built


def test_the_deprecated_list_is_what_the_shims_keep() -> None:
    from prunecheck.sim.subjects.runtimes.stimuli import _OLD_KINDS as NAMES

    listed = {old.removeprefix("prunecheck.model."): new for old, new in MODEL_DEPRECATED}
    assert listed == {name: f"{home}.{name}" for name, home in MODEL_MOVED.items()}
    assert sorted(old.rsplit(".", 1)[1] for old, _ in STIMULI) == sorted(NAMES)


def test_the_checks_tell_gone_from_present() -> None:
    assert _is_gone("prunecheck.sim.stimuli")  # a 0.1 module name, its alias removed
    assert _is_gone("prunecheck.model.runtime.RuntimeConfig")  # imported there, not exported
    assert not _is_gone("prunecheck.model.config.RuntimeConfig")
    assert not _is_gone("prunecheck.sim.subjects.runtimes")
    with pytest.raises(AttributeError):
        _resolve("prunecheck.model.config.NoSuchName")


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


@cache
def _exports_of(tag: str) -> list[str]:
    """``module.name`` for every name a module of ``tag`` listed in ``__all__``."""
    files = _git("ls-tree", "-r", "--name-only", tag)
    if files is None:
        pytest.skip(f"no git tag {tag} in this checkout")
    names = []
    for path in files.split():
        if not path.endswith(".py") or not path.startswith(("model/", "sim/", "src/prunecheck/")):
            continue
        module = "prunecheck." + path.removeprefix("src/prunecheck/").removesuffix(".py")
        module = module.replace("/", ".").removesuffix(".__init__")
        if module == "prunecheck.__init__":
            module = "prunecheck"
        tree = ast.parse(_git("show", f"{tag}:{path}") or "")
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                names += [f"{module}.{n}" for n in ast.literal_eval(node.value)]
    return names


def test_every_name_020_exported_is_still_exported_or_in_the_changelog() -> None:
    listed = {old for old, _ in REMOVED + DEPRECATED}
    unlisted = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dotted in _exports_of("v0.2.0"):
            parent_name, name = dotted.rsplit(".", 1)
            parent = _module(parent_name)
            if parent is not None and name in getattr(parent, "__all__", ()):
                continue
            if dotted not in listed:
                unlisted.append(dotted)
    assert not unlisted, (
        "exported by 0.2.0, gone now and not in CHANGELOG.md (add a line "
        "'- `old` → `replacement`' under ### Removed): " + ", ".join(unlisted)
    )
