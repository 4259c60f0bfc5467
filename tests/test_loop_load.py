"""Loading the user's agent as it is (issue 31): provider-string models without
API keys, outbound connections refused, helper processes and threads it
leaves behind, the releases each adapter drives.  The bad inputs (exits,
interrupts, hangs, an adapter's ImportError, a release out of range) are in
``tests/test_bad_inputs_load.py``."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main
from prunecheck.sim.subjects.loops import confine, offline, versions
from prunecheck.sim.subjects.loops.target import FRAMEWORKS, adapter_named

# pydantic-ai is looked for, not imported, at collection: every xdist worker
# collects every test file, and importing it there cost each worker about 1 s of CPU.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pydantic_ai") is None, reason="pydantic-ai is not installed"
)

ROOT = Path(__file__).resolve().parent.parent
LOAD = Path(__file__).resolve().parent / "load_agents"
_ONE = ["--max-examples", "2", "--scenario", "parallel", "--max-events", "6"]
_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY")


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A CI job's environment: no provider key; a fresh folder (no failure database)."""
    for var in _KEYS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


def _import(path: Path) -> None:
    spec = importlib.util.spec_from_file_location(f"load_probe_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


@pytest.mark.parametrize(
    ("agent", "framework"),
    [
        ("pydantic_ai_string.py:agent", "pydantic-ai"),
        # importing langchain_openai costs about 2 s of CPU: make test-all (the fast twin:
        # tests/test_user_agents.py loads lc_provider_string.py without keys)
        pytest.param("langchain_string.py:build", "langgraph", marks=pytest.mark.slow),
    ],
)
def test_a_provider_string_model_loads_and_runs_without_keys(
    agent: str, framework: str, no_keys: None, capsys: pytest.CaptureFixture[str]
) -> None:
    if framework == "langgraph":
        pytest.importorskip("langchain_openai")
    with pytest.raises(Exception, match=r"(?i)api.key|OPENAI_API_KEY"):  # as python would
        _import(LOAD / agent.split(":")[0])
    assert main(["check", f"loop:{LOAD}/{agent}", *_ONE]) == 0
    out = capsys.readouterr().out
    assert f"({framework}): no schedule broke it" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("offline:"))
    assert "placeholder provider keys (OPENAI_API_KEY" in line
    assert "outbound network connections refused (none attempted)" in line
    assert "OPENAI_API_KEY" not in os.environ  # put back as it was


def test_json_says_both_facts_in_one_line(
    no_keys: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", f"loop:{LOAD}/pydantic_ai_string.py:agent", *_ONE, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    said = doc["details"]["offline"]
    assert said["network"] == "refused" and said["refused"] == []
    assert "OPENAI_API_KEY" in said["placeholder_keys"]
    assert said["line"].startswith("offline: ") and "\n" not in said["line"]


def test_search_says_it_too(no_keys: None, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["search", f"loop:{LOAD}/pydantic_ai_string.py:agent", "--max-examples", "2"]
    assert main(argv) == 0
    assert re.search(r"^offline: .*refused \(none attempted\)$", capsys.readouterr().out, re.M)


def test_real_keys_are_replaced_while_the_users_code_runs_and_put_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with offline.offline() as said, offline.offline() as inner:
        assert inner is said  # re-entrant: one record
        assert os.environ["OPENAI_API_KEY"] == offline.PLACEHOLDER
        assert os.environ["ANTHROPIC_API_KEY"] == offline.PLACEHOLDER
    assert os.environ["OPENAI_API_KEY"] == "sk-real"
    assert "ANTHROPIC_API_KEY" not in os.environ


def test_the_guard_refuses_the_network_and_lets_the_machine_itself_through() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    connect = socket.socket.connect
    try:
        with offline.offline() as said:
            with socket.create_connection(server.getsockname(), timeout=5):
                pass  # loopback: allowed
            with pytest.raises(offline.ConnectionRefused, match="prunecheck refused"):
                socket.create_connection(("api.anthropic.com", 443), timeout=5)  # the name
            with socket.socket() as s, pytest.raises(ConnectionRefusedError, match=r"0\.0\.0\.1:9"):
                s.connect(("0.0.0.1", 9))  # an address: refused before the kernel sees it
            assert s.connect_ex is not None
        assert said.refused == ["api.anthropic.com:443", "0.0.0.1:9"]
        assert "2 refused: api.anthropic.com:443, 0.0.0.1:9" in said.line()
    finally:
        server.close()
    assert socket.socket.connect is connect  # put back


def test_helper_processes_the_agent_starts_are_ended(
    no_keys: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids.txt"
    monkeypatch.setenv("HELPER_PIDS", str(pids))
    assert main(["check", f"loop:{LOAD}/misbehaving.py:forks_a_helper", *_ONE]) == 0
    started = [int(p) for p in pids.read_text().split()]
    assert started
    for pid in started:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # ended and reaped: no longer this process's child
        assert not Path(f"/proc/{pid}").exists()


def test_end_helpers_ends_a_double_forked_orphan() -> None:
    before = set(confine._descendants(os.getpid()))
    with confine.confined():
        # the shell forks a sleep and exits at once: the sleep's parent is gone
        subprocess.run(["sh", "-c", "sleep 600 >/dev/null 2>&1 &"], check=True)
        orphans = [p for p in confine._descendants(os.getpid()) if p not in before]
        assert orphans  # the subreaper adopted it
    time.sleep(0.05)
    assert not [p for p in confine._descendants(os.getpid()) if p in orphans]


def test_a_thread_the_agent_leaves_running_is_listed(
    no_keys: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POLLER_SECONDS", "1")  # this test's process must still end
    assert main(["check", f"loop:{LOAD}/misbehaving.py:leaves_a_thread", *_ONE]) == 0
    assert "user-poller" in [t.name for t in confine.LINGERING]
    for thread in confine.LINGERING:
        thread.join(5)


@pytest.mark.slow
def test_a_thread_the_agent_leaves_running_does_not_keep_prunecheck_alive(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in _KEYS}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "prunecheck", "check", f"loop:{LOAD}/misbehaving.py:leaves_a_thread",
         *_ONE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "\nverdict: " in done.stdout  # the whole output, then the end
    assert time.monotonic() - started < 300  # the thread sleeps 600 s: it was not waited for


def test_the_cage_puts_everything_back() -> None:
    exit_before, sigint_before = os._exit, __import__("signal").getsignal(2)
    with confine.confined():
        assert os._exit is not exit_before
    assert os._exit is exit_before
    assert __import__("signal").getsignal(2) is sigint_before
    assert threading.current_thread() is threading.main_thread()


# ------------------------------------------------------------------ versions
def test_release_numbers() -> None:
    assert versions.as_numbers("2.68.0rc1") == (2, 68, 0)
    assert versions.as_numbers("0.7.5") == (0, 7, 5)
    need = versions.Needs("x", "0.7.1", "0.8")
    assert need.holds("0.7.1") and need.holds("0.7.10") and not need.holds("0.8.0")
    assert not need.holds("0.7.0") and not need.holds("0.6.9")


@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_every_adapter_states_its_releases_and_the_installed_ones_hold(name: str) -> None:
    adapter = adapter_named(name)
    supported = adapter.supported  # type: ignore[attr-defined]
    assert isinstance(supported, versions.Supported)
    assert supported.tested and supported.needs[0].holds(supported.tested[0])
    assert all(supported.needs[0].holds(v) for v in supported.tested)
    if versions.installed(supported.dist) is not None:
        assert supported.out_of_range() == []


def test_the_docs_table_names_each_adapters_releases() -> None:
    page = (ROOT / "docs/how-to/own-runtime.md").read_text(encoding="utf-8")
    for name in FRAMEWORKS:
        supported = adapter_named(name).supported  # type: ignore[attr-defined]
        assert f"| {name} | {supported.text()} | {', '.join(supported.tested)} |" in page, name
