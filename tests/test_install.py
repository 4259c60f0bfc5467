"""Installs for each audience (README, "Install").

* ``pip install prunecheck`` is the commit guard alone: no dependency.
  Fast: the metadata built from the source names none for the base install,
  and a fresh virtual environment holding prunecheck and nothing else (no
  pip, no site packages) imports and runs ``prunecheck.guard`` with none of
  the harness's packages present, while ``prunecheck check`` there names the
  extra to install (exit 2).
* A docs page written for the guard-only install (``<!-- install: guard -->``,
  ``docs/how-to/deploy-guard.md``) runs there, in that same venv: its
  Python and its commands, the output it shows checked, and nothing of the
  harness loaded or installed.
* ``prunecheck[harness]`` gives the harness, ``prunecheck[report]`` the plots
  too, ``prunecheck[all]`` everything: the metadata says which packages each
  brings.
* Integration (``make test-all``): real ``pip install`` of the base and of
  the harness into a fresh venv; no top-level ``model`` or ``sim`` is
  installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from dataclasses import asdict
from pathlib import Path

import pytest
from test_docs_examples import ALL, _folder, commands_of, install_of

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("hypothesis", "simpy", "networkx", "matplotlib", "tqdm", "numpy")
HARNESS = {"hypothesis", "networkx", "simpy", "tqdm"}
FRAMEWORKS = {
    "langchain-core",
    "langchain",
    "autogen-core",
    "llama-index-core",
    "semantic-kernel",
    "pydantic-ai-slim",
    "openai-agents",
}
_SKIP_ANYWHERE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".hypothesis",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".import_linter_cache",
)

# Runs in an environment that has prunecheck and nothing else.
GUARD_PROBE = """
import importlib.util, json, sys
from prunecheck.guard import CommitGuard

def oldest_first(view, need):
    return [m.id for m in view.messages if m.role != "system"][:2]

guard = CommitGuard(oldest_first, budget=1_000, hard_ceiling=2_000, store=":memory:")
guard.message("m1", "system", 100)
guard.message("m2", "user", 600)
guard.calls("m3", ["c1"], 50)
guard.result_chunk("c1", 400, mid="m4")
deferred = guard.check()
guard.result_complete("c1", mid="m4")
plan = guard.check()
print(json.dumps({
    "deferred": deferred.deferred is not None,
    "evict": list(plan.evict),
    "loaded": [m for m in HEAVY if m in sys.modules],
    "installed": [m for m in HEAVY if importlib.util.find_spec(m) is not None],
}))
""".replace("HEAVY", repr(HEAVY))


def _skip(folder: str, names: list[str]) -> set[str]:
    """What the copy leaves out: caches anywhere, and the generated top-level
    reports/ folder (but not the sim/reports package)."""
    skipped = set(_SKIP_ANYWHERE(folder, names))
    if Path(folder).resolve() == ROOT and "reports" in names:
        skipped.add("reports")
    return skipped


def _run(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV") and not k.startswith("PYTEST")
    }
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _requires(tmp_path: Path) -> list[str]:
    """The Requires-Dist lines of the metadata setuptools builds from
    pyproject.toml (as pip would, from a copy: the working tree is left alone)."""
    source = tmp_path / "meta-src"
    (source / "src" / "prunecheck").mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copyfile(ROOT / name, source / name)
    (source / "src" / "prunecheck" / "__init__.py").write_text("", encoding="utf-8")
    out = tmp_path / "meta-out"
    out.mkdir()
    build = (
        "import sys; from setuptools import build_meta; "
        "print(build_meta.prepare_metadata_for_build_wheel(sys.argv[1]))"
    )
    done = _run([sys.executable, "-c", build, str(out)], source)
    assert done.returncode == 0, done.stderr[-3000:]
    folder = out / done.stdout.strip().splitlines()[-1]
    text = (folder / "METADATA").read_text(encoding="utf-8")
    return [
        line.split(":", 1)[1].strip()
        for line in text.splitlines()
        if line.startswith("Requires-Dist:")
    ]


def _needs(requires: list[str], extra: str | None) -> set[str]:
    """The distributions an install of ``prunecheck[extra]`` (None: the base)
    brings, self-references (``prunecheck[harness]``) followed."""
    found: set[str] = set()
    for line in requires:
        spec, _, marker = line.partition(";")
        wanted = re.search(r"extra\s*==\s*[\"']([^\"']+)[\"']", marker)
        if (wanted.group(1) if wanted else None) != extra:
            continue
        name = re.match(r"\s*([A-Za-z0-9._-]+)\s*(?:\[([^\]]*)\])?", spec)
        assert name is not None, line
        if name.group(1).lower() == "prunecheck":
            for inner in (name.group(2) or "").split(","):
                found |= _needs(requires, inner.strip())
        else:
            found.add(name.group(1).lower())
    return found


def test_each_install_brings_what_its_audience_needs_and_no_more(tmp_path: Path) -> None:
    requires = _requires(tmp_path)
    assert _needs(requires, None) == set()  # the guard: the standard library only
    assert _needs(requires, "harness") == HARNESS
    assert _needs(requires, "report") == HARNESS | {"matplotlib"}
    assert _needs(requires, "dask") == HARNESS | {"dask"}
    assert _needs(requires, "frameworks") == FRAMEWORKS
    extras = {line.split("extra ==")[1].strip(" \"'") for line in requires if "extra ==" in line}
    # every extra but the developers' (dev, docs, providers: the providers' SDKs the golden
    # tests check request bodies against) and the telemetry recorders' (record: what
    # recorded tests/data/telemetry/, which neither users nor the tests need installed)
    everything = set().union(
        *(_needs(requires, e) for e in extras - {"all", "dev", "docs", "providers", "record"})
    )
    assert _needs(requires, "all") == everything
    recorders = {"logfire", "langfuse", "mlflow"} & _needs(requires, "record")
    assert recorders and not recorders & (_needs(requires, "dev") | everything)
    assert HARNESS | {"matplotlib", "dask"} | FRAMEWORKS <= everything
    assert {"pytest", "pytest-xdist", "pytest-cov"} <= _needs(requires, "dev")
    assert {"google-genai", "botocore", "mistralai"} <= _needs(requires, "dev") - everything
    assert _needs(requires, "docs") == {"mkdocs", "mkdocs-material", "mkdocstrings-python"}
    assert _needs(requires, "docs") <= _needs(requires, "dev")  # make's venv builds the site


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The interpreter of :func:`_bare_venv`, built once for this module's tests."""
    if sys.platform == "win32":
        pytest.skip("POSIX venv layout")
    return _bare_venv(tmp_path_factory.mktemp("guard-only"))


def _bare_venv(tmp_path: Path) -> Path:
    """A fresh venv with no pip and no site packages, prunecheck's source on
    its path and nothing else: what ``pip install prunecheck`` leaves."""
    env_dir = tmp_path / "bare"
    venv.create(env_dir, with_pip=False, clear=True)
    python = env_dir / "bin" / "python"
    site = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path
    )
    assert site.returncode == 0, site.stderr
    Path(site.stdout.strip(), "prunecheck-src.pth").write_text(f"{ROOT / 'src'}\n")
    return python


def test_a_venv_with_only_the_guard_runs_it_without_the_harness(
    bare_python: Path, tmp_path: Path
) -> None:
    python = bare_python
    done = _run([str(python), "-c", GUARD_PROBE], tmp_path)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["installed"] == [] and seen["loaded"] == []  # not there, and not needed
    assert seen["deferred"]  # a pending call defers the check
    evicted = set(seen["evict"])
    assert evicted and ({"m3", "m4"} <= evicted or not {"m3", "m4"} & evicted)  # whole units


def test_the_command_without_the_harness_names_the_extra_to_install(
    bare_python: Path, tmp_path: Path
) -> None:
    python = bare_python
    done = _run([str(python), "-m", "prunecheck", "check", "unit_safe"], tmp_path)
    assert done.returncode == 2
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1  # one paragraph
    assert re.fullmatch(
        r"prunecheck check: needs the package '(hypothesis|networkx|simpy|tqdm)', which is not "
        r"installed \(the base install, 'pip install prunecheck', is the commit guard alone\)\. "
        r"Hint: install the harness with: pip install 'prunecheck\[harness\]'\n",
        done.stderr,
    ), done.stderr
    # what needs nothing still works: the list of commands
    helped = _run([str(python), "-m", "prunecheck", "--help"], tmp_path)
    assert helped.returncode == 0 and "check" in helped.stdout


GUARD_PAGES = [page for page in ALL if install_of(page) == "guard"]
PAGE_CHILD = Path(__file__).with_name("docs_page_child.py")


@pytest.mark.parametrize("page", GUARD_PAGES)
def test_a_guard_page_runs_as_written_in_the_guard_only_install(
    bare_python: Path, tmp_path: Path, page: str
) -> None:
    """The page's blocks, in order, in the venv that holds prunecheck alone
    (``tests/docs_page_child.py`` runs them as ``test_docs_examples`` does)."""
    folder = _folder(tmp_path / "page")
    blocks = []
    for block in ALL[page][0]:
        if block.marker in ("not-run", "slow"):
            continue
        if block.marker == "file":
            (folder / block.arg).parent.mkdir(parents=True, exist_ok=True)
            (folder / block.arg).write_text(block.text, encoding="utf-8")
            continue
        commands = [asdict(c) for c in commands_of(block)] if block.lang == "console" else []
        blocks.append(
            {"where": block.where, "lang": block.lang, "text": block.text, "commands": commands}
        )
    spec = tmp_path / "page.json"
    spec.write_text(json.dumps({"folder": str(folder), "blocks": blocks}), encoding="utf-8")
    done = _run([str(bare_python), str(PAGE_CHILD), str(spec)], tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen == {"ran": len(blocks), "loaded": [], "installed": []}
    assert {b["lang"] for b in blocks} >= {"python", "pycon"}  # the page's code ran, not only prose


def test_the_guard_how_to_is_written_for_the_guard_only_install() -> None:
    assert "docs/how-to/deploy-guard.md" in GUARD_PAGES


def test_a_harness_name_in_the_guard_only_install_says_which_extra(
    bare_python: Path, tmp_path: Path
) -> None:
    """What the base install has imports; a harness name is one paragraph
    naming the extra, at import, not a raw ModuleNotFoundError."""
    probe = (
        "import json\n"
        "from prunecheck import validate_request, ProviderError, RuntimeConfig, Trace\n"
        "told = {}\n"
        "for name in ('check_policy', 'list_policy', 'replay_trace', 'CheckResult'):\n"
        "    try:\n"
        "        exec(f'from prunecheck import {name}')\n"
        "    except ModuleNotFoundError as exc:\n"
        "        told[name] = [str(exc), exc.name, exc.__context__ is None]\n"
        "print(json.dumps([validate_request([{'role': 'user', 'content': 'hi'}], 'openai'), told]))"
    )
    done = _run([str(bare_python), "-c", probe], tmp_path)
    assert done.returncode == 0, done.stderr
    errors, told = json.loads(done.stdout)
    assert errors == []
    assert sorted(told) == ["CheckResult", "check_policy", "list_policy", "replay_trace"]
    for name, (text, module, alone) in told.items():
        assert (
            module in ("hypothesis", "networkx", "simpy", "tqdm") and alone
        )  # no raw error chained
        assert text == (
            f"prunecheck.{name}: needs the package {module!r}, which is not installed (the base "
            "install, 'pip install prunecheck', is the commit guard alone). Hint: install the "
            "harness with: pip install 'prunecheck[harness]'"
        )
    raw = _run([str(bare_python), "-c", "from prunecheck import check_policy"], tmp_path)
    assert raw.returncode == 1 and "No module named" not in raw.stderr
    assert raw.stderr.splitlines()[-1].startswith("ModuleNotFoundError: prunecheck.check_policy: ")


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX venv layout")
def test_pip_install_into_a_fresh_venv(tmp_path: Path) -> None:
    # Build from a copy, so that the shared working tree gets no build/ or egg-info.
    source = tmp_path / "prunecheck-src"
    shutil.copytree(ROOT, source, symlinks=True, ignore=_skip)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True, clear=True)
    python = env_dir / "bin" / "python"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    # The guard's install: prunecheck and nothing else.
    done = _run(
        [str(python), "-m", "pip", "install", "--quiet", str(source)], tmp_path, timeout=1200
    )
    assert done.returncode == 0, done.stderr[-3000:]
    listed = _run([str(python), "-m", "pip", "list", "--format=json"], elsewhere)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert names - {"pip", "setuptools"} == {"prunecheck"}
    done = _run([str(python), "-c", GUARD_PROBE], elsewhere)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["installed"] == []
    done = _run([str(env_dir / "bin" / "prunecheck"), "check", "unit_safe"], elsewhere)
    assert done.returncode == 2 and "pip install 'prunecheck[harness]'" in done.stderr
    assert "Traceback" not in done.stderr

    # The harness's install: one command.
    done = _run(
        [str(python), "-m", "pip", "install", "--quiet", f"{source}[harness]"],
        tmp_path,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    probe = (
        "import prunecheck.model, prunecheck.sim, prunecheck.model.runtime, "
        "prunecheck.guard; "
        "print(prunecheck.model.__file__)"
    )
    done = _run([str(python), "-c", probe], elsewhere)
    assert done.returncode == 0, done.stderr
    site = Path(done.stdout.strip()).resolve()
    assert env_dir.resolve() in site.parents and source not in site.parents

    for name in ("model", "sim"):
        done = _run([str(python), "-c", f"import {name}"], elsewhere)
        assert done.returncode == 1
        assert f"No module named '{name}'" in done.stderr

    trace = elsewhere / "trace.json"
    trace.write_text(
        (ROOT / "tests" / "corpus" / "seed_streaming_result.json").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    done = _run([str(env_dir / "bin" / "prunecheck"), "replay", str(trace), "--quiet"], elsewhere)
    assert (done.returncode, done.stdout) == (
        1,
        "verdict: 4 violation(s) (3 invalid prune, 1 truncated payload).\n",
    )
