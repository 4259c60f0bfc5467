"""A black-box agent: the user's program, run as a subprocess, as a loop subject.

``loop:process:MANIFEST.toml`` names an agent in any language
(:mod:`.manifest`).  :class:`ProcessAdapter` is its
:class:`~prunecheck.sim.subjects.loops.contract.Adapter`, so the loop
harness drives it as it drives an in-process framework: the same scenario
classes, search, shrinker, judge, verdict and bundle.  Each
:meth:`ProcessAdapter.open` is one life of the agent's process
(:class:`ProcessLoop`):

- its **model** is the fake endpoint (:class:`~.endpoint.FakeEndpoint`),
  its base URL and a key given by environment variable; every request it
  sends is handed to :meth:`Harness.model` (rendered as Chat Completions,
  :mod:`.as_chat`: the judge's provider rules and ledger), and the
  schedule's reply goes back in the API and the streaming mode it asked
  for.  A request the real provider rejects gets the provider's HTTP 400
  from the endpoint, and is judged all the same;
- its **tools** post each call to the harness's tool hook
  (:mod:`.tool_hook`), directly or through the MCP server standing for
  them: each body waits for :meth:`Harness.tool` (the ledger of bodies that
  ran), and returns its output, a failure or a timeout;
- **user input** is a command-line argument (one process per message), a
  line on its standard input (one process, a ``ready`` line ending each turn)
  or the answer to its ``GET`` of the input hook (one process, the next
  ``GET`` ending each turn: :mod:`.input_hook`);
- a **cancel** is ``SIGINT`` to its process group (Ctrl-C); a request the
  agent then drops is a client disconnect, and the harness forgets it;
- a **crash** is ``SIGKILL`` of its process group: a real crash.
  ``resume`` and ``new_message`` start the program again on the same store
  (``{store}``: its real persistence), with the manifest's ``resume``
  arguments or the new message.

**Quiescence.**  The harness applies a step only when the agent waits on
it: each request it sent is pending at the harness (or answered and
written), each tool body it started waits on the harness, the turn is
over or the process is gone, its process tree is quiet (:mod:`.quiet`),
and nothing is on its way between the two (:func:`.quiet.in_transit`: a
request or a hang-up in the kernel not yet read by the harness's servers, a
reply or a line of input the agent has not read, a signal not yet
delivered; :mod:`.flight`: a request read but not yet handed over).  These
are counts the kernel and the servers keep, not timings: a loaded machine
makes the agent slower, not quieter.  The loop's clock asks this of
:meth:`ProcessLoop.busy`
(:class:`~prunecheck.sim.subjects.loops.clock.Outside`).

**What is not deterministic for a seed**: the agent's own real-time
behaviour (timers, retries with back-off, a client timeout, what it does
while it waits on nothing the harness owns); the order in which requests
sent at once by parallel threads or tasks reach the endpoint (handed over
in arrival order).  The schedule, the replies, the tool outcomes and when
each is given are the harness's: two runs of one schedule send the same
requests when the agent does not race itself.  An agent that answers a
schedule's choices otherwise than before costs the search that run, not the
search (:mod:`prunecheck.sim.drivers.action_search`: it is dropped, counted
and named in the cell's note).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..loops import confine
from ..loops.contract import Capability, Harness, Loop, Reply, ToolCall, ToolFailed, ToolSpec
from ..loops.frameworks.model_providers import ModelProvider
from ..loops.scheduler import LoopError
from .as_chat import as_chat
from .endpoint import FakeEndpoint
from .exchange import PROVIDER_OF, Api, Exchange
from .input_hook import InputHook
from .manifest import Input, Manifest, load_manifest
from .quiet import descendants, in_transit, snapshot, tree_quiet, unread_bytes
from .tool_hook import ToolHook, ToolRequest

__all__ = ["AgentExited", "ProcessAdapter", "ProcessLoop"]

#: The environment variable naming a folder where each life of the agent
#: keeps its standard output and error (``stdout``, ``stderr``) and the MCP
#: plan, to read after the check; by default they are removed.
KEEP_LOGS = "PRUNECHECK_AGENT_LOGS"

#: The key the agent is given (the endpoint accepts any).
API_KEY = "sk-prunecheck-fake"

#: Real seconds the agent has to wake after the harness acted on it (a
#: reply, a tool's end, a signal, a line of input) before it is taken as
#: one that ignores it.
WAKE = 0.5

#: Real seconds something may stay on its way between the agent and the
#: harness (:func:`.quiet.in_transit`) while the agent is quiet before the
#: harness stops waiting for it: a reply the agent never reads, a socket it
#: keeps and never reads from.  Anything else lands within milliseconds.
TRANSIT_PATIENCE = 10.0

#: Real seconds an agent sent a cancel (SIGINT) must stay quiet, its turn not
#: over, before the harness takes it as done reacting (the cancel class then
#: judges a hang): an agent whose reaction sleeps on a timer of its own (an
#: SDK's short delay) looks quiet for a moment without being done.
CANCEL_QUIET = 2.0

#: Real seconds a reply the harness chose may take to be written before the
#: run is declared stuck (the endpoint writes it at once).
_ANSWER_TIMEOUT = 120.0


class AgentExited(RuntimeError):
    """The agent's process ended a turn with a non-zero status (its last error line)."""


def _tail(path: Path) -> str:
    """The last line of ``path`` that says something (not a traceback's frame)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    said = [x.strip(" |+-") for x in text if any(c.isalpha() for c in x)]
    return said[-1] if said else ""


def _default_sigint() -> None:
    """In the agent's process before it starts: Ctrl-C does what it does by default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class ProcessLoop:
    """One life of the agent's process (see the module's docs)."""

    def __init__(self, manifest: Manifest, harness: Harness) -> None:
        self.manifest, self.harness = manifest, harness
        self.clock = asyncio.get_event_loop()
        self.endpoint = FakeEndpoint(answer_timeout=_ANSWER_TIMEOUT).start()
        self.hook = ToolHook()
        self.input = InputHook() if manifest.input is Input.HTTP else None
        keep = os.environ.get(KEEP_LOGS)
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
        self.logs = Path(tempfile.mkdtemp(prefix="prunecheck-agent-", dir=keep or None))
        self.proc: subprocess.Popen[bytes] | None = None
        self.turn: asyncio.Future[None] | None = None
        self.seen = 0  # exchanges handed over (or judged)
        self.read = 0  # bytes of stdout read for ready lines
        self.ready = re.compile(manifest.ready) if manifest.ready else None
        self.at_ready = False
        self.models: dict[asyncio.Task[None], Exchange] = {}
        self.tools: dict[asyncio.Task[None], ToolRequest] = {}
        self.last: list[dict[str, object]] = []
        self.exits: list[int] = []
        self.poked: tuple[int, float] | None = None
        self.failure = ""  # why the agent cannot be run at all (the check ends: exit 2)
        self.lives = 0  # processes started by this loop
        self.signalled = False  # a cancel was sent (an exit then is the cancel's doing)
        self.mcp: Any = None  # the MCP server over HTTP, if the manifest asks for {mcp_url}
        self.answered: list[ToolRequest] = []  # tool answers given, maybe not yet written
        self.transit_since: float | None = None
        self.quiet_since: float | None = None  # after a cancel: quiet since (see CANCEL_QUIET)
        self.cancelling = False  # a cancel was sent in this turn
        setattr(self.clock, "outside", self)  # noqa: B010 - the VirtualLoop's hook

    # ------------------------------------------------------------ the process
    def _mcp(self) -> tuple[str, str]:
        """The MCP plan file (the manifest's tools, every body asking the hook)
        and, if the manifest asks for it, the URL of the MCP server over HTTP."""
        from .tool_plan import ServerPlan, ToolPlan, plan_to_json

        plan = ServerPlan(tuple(ToolPlan(t.name, t.description, dict(t.parameters))
                                for t in self.manifest.tools))  # fmt: skip
        path = self.logs / "mcp-plan.json"
        path.write_text(json.dumps(plan_to_json(plan)), encoding="utf-8")
        wanted = " ".join([*self.manifest.command, *self.manifest.env.values()])
        if "{mcp_url}" in wanted and self.mcp is None:
            from .mcp_server import HttpToolServer

            self.mcp = HttpToolServer(plan, hook=self.hook.url).start()
        return str(path), str(self.mcp.url) if self.mcp is not None else ""

    def _env(self) -> dict[str, str]:
        plan, url = self._mcp()
        fill = {
            "base_url": self.endpoint.openai_url
            if self.manifest.api is not Api.MESSAGES else self.endpoint.url,
            "api_key": API_KEY, "store": str(self.harness.store), "tools_url": self.hook.url,
            "python": sys.executable, "manifest_dir": str(self.manifest.folder),
            "mcp_plan": plan, "mcp_url": url,
            "input_url": self.input.url if self.input is not None else "",
        }  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
        env.update(
            PYTHONUNBUFFERED="1", NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost"
        )
        env.update({k: v.format_map(fill) for k, v in self.manifest.env.items()})
        self._fill = fill
        return env

    def _spawn(self, extra: tuple[str, ...]) -> None:
        env = self._env()
        argv = [part.format_map(self._fill) for part in self.manifest.command] + list(extra)
        out = (self.logs / "stdout").open("ab")
        err = (self.logs / "stderr").open("ab")
        self.read = (self.logs / "stdout").stat().st_size
        self.at_ready = False
        self.lives += 1
        # a prunecheck started with SIGINT ignored (nohup, a background job of a script)
        # would hand that on to the agent, whose cancel would then do nothing: a false hang
        ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        try:
            self.proc = subprocess.Popen(
                argv, cwd=self.manifest.folder, env=env, stdout=out, stderr=err,
                stdin=subprocess.PIPE if self.manifest.input is Input.STDIN else subprocess.DEVNULL,
                start_new_session=True, preexec_fn=_default_sigint if ignored else None,
            )  # fmt: skip
        except OSError as exc:  # told by busy(), on the harness's thread: the check ends
            self.proc = None
            self.failure = f"its command {argv[0]!r} could not start ({exc.strerror or exc})"
        finally:
            out.close()
            err.close()

    def _cpu(self) -> int:
        if self.proc is None:
            return 0
        found = snapshot(descendants(self.proc.pid))
        return found[1] if found is not None else 0

    def cpu(self) -> int | None:
        """CPU nanoseconds the agent's process tree has spent (the loop's
        patience with an agent that works on its own: :mod:`..loops.clock`);
        None before it starts or without ``/proc``."""
        if self.proc is None:
            return None
        found = snapshot(descendants(self.proc.pid))
        return found[1] if found is not None else None

    def _poke(self) -> None:
        """Note the agent's CPU time before the harness acts on it: it is busy
        until that moves (it woke) or :data:`WAKE` seconds pass."""
        if self.poked is None and self._alive():
            self.poked = (self._cpu(), time.monotonic())

    def _alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _signal(self, sig: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.signalled = True
            self._poke()
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)

    async def _turn_over(self) -> None:
        """Wait for the end of the turn; raise if the process failed."""
        self.turn = self.clock.create_future()
        try:
            await self.turn
        finally:
            self.turn = None
        proc = self.proc
        if proc is not None and proc.returncode not in (None, 0):
            raise AgentExited(
                f"the agent exited with status {proc.returncode}: "
                f"{_tail(self.logs / 'stderr') or 'no error output'}"
            )

    # ------------------------------------------------------------ the Loop
    async def send(self, text: str) -> None:
        """One user message: the command with the message (argv) or a line (stdin)."""
        if self.manifest.input is Input.ARGV:
            self._spawn((text,))
        else:
            if not self._alive():
                self._spawn(())
                await self._turn_over()  # up to its first ready line
            self.at_ready = False
            self._poke()
            if self.input is not None:
                self.input.give(text)
            else:
                assert self.proc is not None and self.proc.stdin is not None
                self.proc.stdin.write(text.replace("\n", " ").encode() + b"\n")
                self.proc.stdin.flush()
        await self._turn_over()

    async def cancel(self, turn: asyncio.Task[None]) -> None:
        """Ctrl-C: ``SIGINT`` to the agent's process group."""
        self.cancelling, self.quiet_since = True, None
        self._signal(signal.SIGINT)

    async def resume(self) -> None:
        """After a crash: the command with the manifest's ``resume`` arguments."""
        self._spawn(self.manifest.resume or ())
        await self._turn_over()

    async def approve(self, call_id: str, approved: bool) -> None:
        raise NotImplementedError("a black-box agent has no approval step")

    def history(self) -> list[dict[str, object]]:
        """What the agent holds: its persisted history (``format = "openai"``),
        else the messages of the last request it sent in this life."""
        m = self.manifest
        if m.persistence and m.history_format == "openai":
            try:
                doc = json.loads((self.harness.store / m.persistence).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                doc = []
            doc = doc.get("messages", []) if isinstance(doc, dict) else doc
            return [x for x in doc if isinstance(x, dict)] if isinstance(doc, list) else []
        return list(self.last)

    def abandon(self) -> None:
        """The crash (or the run's end): ``SIGKILL`` of the process group, then
        the endpoint and the hook stop; nothing is flushed."""
        self._signal(signal.SIGKILL)
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
        if getattr(self.clock, "outside", None) is self:
            setattr(self.clock, "outside", None)  # noqa: B010
        self.endpoint.stop()
        if self.mcp is not None:
            self.mcp.stop()
        self.hook.close()
        if self.input is not None:
            self.input.close()
        for request in self.tools.values():
            request.finish({"ok": False, "error": "the harness ended the run"})
        import shutil

        if not os.environ.get(KEEP_LOGS):
            shutil.rmtree(self.logs, ignore_errors=True)

    # ------------------------------------------------------------ Outside
    async def _model(self, exchange: Exchange, body: dict[str, object]) -> None:
        reply: Reply = await self.harness.model(body)
        self._poke()
        with contextlib.suppress(ValueError):  # hung up meanwhile: forgotten below
            exchange.answer(reply)

    async def _judge_only(self, body: dict[str, object]) -> None:
        """A request the endpoint rejected (its 400 is sent): judged, never answered."""
        task = asyncio.ensure_future(self.harness.model(body))
        await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def _tool(self, request: ToolRequest) -> None:
        call = ToolCall(request.id, request.name, request.arguments)
        self.answered.append(request)  # once finished, in transit until written
        try:
            output = await self.harness.tool(call)
            self._poke()
            request.finish({"ok": True, "output": output})
        except ToolFailed as exc:
            self._poke()
            request.finish({"ok": False, "error": str(exc), "timeout": False})
        except TimeoutError as exc:
            self._poke()
            request.finish({"ok": False, "error": str(exc), "timeout": True})
        except asyncio.CancelledError:
            request.finish({"ok": False, "error": "cancelled", "timeout": False})
            raise

    def _hand_over(self) -> bool:
        """Give the harness what the agent asked since the last look; True if anything."""
        handed = False
        exchanges = self.endpoint.exchanges
        while self.seen < len(exchanges):
            exchange = exchanges[self.seen]
            self.seen += 1
            body = as_chat(exchange.api, exchange.body)
            raw = body.get("messages")
            self.last = [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []
            if exchange.rejection is not None or exchange.reply is not None:
                self.clock.create_task(self._judge_only(body))
            else:
                self.models[self.clock.create_task(self._model(exchange, body))] = exchange
            handed = True
        for request in self.hook.take():
            self.tools[self.clock.create_task(self._tool(request))] = request
            handed = True
        for task, exchange in list(self.models.items()):
            if task.done():
                del self.models[task]
            elif exchange.outcome.is_final():  # the client hung up: the request is gone
                task.cancel()
                handed = True
        for task, request in list(self.tools.items()):
            if task.done():
                del self.tools[task]
            elif request.gone:  # the agent hung up: its body is cancelled
                task.cancel()
                handed = True
        return handed

    def _stdout_ready(self) -> bool:
        """Whether the agent waits for its next message: it printed a ready line
        since the last message (stdin: a whole line, or the last partial one,
        a prompt such as ``> ``), or its ``GET`` waits at the input hook (http)."""
        if self.input is not None:
            self.at_ready = self.at_ready or self.input.waiting()
            return self.at_ready
        if self.ready is None or self.at_ready:
            return self.at_ready
        with contextlib.suppress(OSError), (self.logs / "stdout").open("rb") as f:
            f.seek(self.read)
            data = f.read()
            if any(self.ready.search(x) for x in data.decode("utf-8", "replace").splitlines()):
                self.at_ready = True
                self.read += len(data)
        return self.at_ready

    def _cannot_run(self) -> None:
        """End the check (exit 2, one paragraph) if the agent cannot be run at all:
        its command does not start, or its very first process exits with an
        error before it sends anything (a missing package, a syntax error)."""
        first = getattr(self.harness, "epoch", 0) == 0 and self.lives == 1
        proc = self.proc
        silent = not self.endpoint.exchanges and not self.at_ready and not self.signalled
        if not self.failure and first and silent and proc is not None and proc.poll():
            said = _tail(self.logs / "stderr") or "no error output"
            self.failure = (f"its first process exited with status {proc.returncode} before "
                            f"it sent a request: {said}")  # fmt: skip
        if self.failure:
            raise confine.Abort(LoopError(
                f"the black-box agent {str(self.manifest.path)!r}",
                f"cannot be run: {self.failure}.",
                "run its command by hand from the manifest's folder; PRUNECHECK_AGENT_LOGS=DIR "
                "keeps what it printed",
            ))  # fmt: skip

    def busy(self) -> bool:
        """Whether the agent still works without waiting on the harness (see the module)."""
        self._cannot_run()
        if self._hand_over():
            return True
        if any(x.reply is not None and not x.outcome.is_final() for x in self.endpoint.exchanges):
            return True  # a reply being written
        if self.poked is not None:
            cpu, since = self.poked
            if self._alive() and self._cpu() == cpu and time.monotonic() - since < WAKE:
                return True  # not woken yet by what the harness did
            self.poked = None
        waiting = any(not t.done() for t in self.models) or any(not t.done() for t in self.tools)
        alive = self._alive()
        if self.turn is not None and not self.turn.done():
            over = not alive or (self.manifest.input is not Input.ARGV and self._stdout_ready())
            if over and not alive:  # dead: nobody waits for what it asked
                for task in [*self.models, *self.tools]:
                    task.cancel()
                waiting = False
            if over and waiting and (self._news() or not self._quiet()):
                return True  # it may be dropping a request the endpoint has not seen it drop
            if over:
                if self.proc is not None and not alive:
                    self.exits.append(self.proc.returncode or 0)
                self.turn.set_result(None)
                self.cancelling = False
                return True
        if not alive:
            return False
        if not waiting and not (self.turn is None or self._stdout_ready()):
            return True  # neither waits on the harness nor is done: it works on its own
        if not self._quiet() or self._news() or self._hand_over():
            self.quiet_since = None
            return True  # (handed over: landed after the look at the flights)
        if self.cancelling and self.turn is not None and not self.turn.done():
            now = time.monotonic()
            self.quiet_since = self.quiet_since if self.quiet_since is not None else now
            return now - self.quiet_since < CANCEL_QUIET  # quiet, but is it done reacting?
        return False

    def _quiet(self) -> bool:
        return self.proc is None or tree_quiet(self.proc.pid)

    def _ports(self) -> set[int]:
        ports = {self.endpoint.port, self.hook.port}
        if self.input is not None:
            ports.add(self.input.port)
        if self.mcp is not None:
            ports.add(int(urlsplit(str(self.mcp.url)).port or 0))
        return ports

    def _news(self) -> bool:
        """Whether something is on its way between the agent and the harness
        (see the module): a count, bounded by :data:`TRANSIT_PATIENCE` only
        for what the agent would never read."""
        # the kernel first, then the servers' flights (a request enters its flight before
        # it leaves the kernel: :mod:`.flight`), then (busy()) what was handed over
        proc = self.proc
        news = False
        if proc is not None and proc.poll() is None:
            stdin = proc.stdin
            unread = stdin is not None and not stdin.closed and unread_bytes(stdin.fileno()) > 0
            news = unread or bool(in_transit(proc.pid, self._ports()))
        self.answered = [r for r in self.answered if not r.written]
        news = news or (
            self.endpoint.flight.busy()
            or self.hook.flight.busy()
            or any(r.finished for r in self.answered)
            or (self.input is not None and (self.input.flight.busy() or self.input.unwritten()))
        )
        if not news:
            self.transit_since = None
            return False
        now = time.monotonic()
        self.transit_since = self.transit_since if self.transit_since is not None else now
        return now - self.transit_since < TRANSIT_PATIENCE


class ProcessAdapter:
    """The adapter of ``loop:process:MANIFEST.toml`` (see the module's docs)."""

    framework = "process"
    #: Runs per scenario class in ``check`` by default (in-process loops: 60):
    #: each run starts the agent's program at least once.
    class_examples = 20
    #: Runs spent shrinking a counterexample (Hypothesis, then deleting steps) by
    #: default (in-process loops: 60 and 120).
    shrink_runs = 20
    polish_runs = 40

    def load(self, where: str) -> Manifest:
        """The manifest at ``where`` (the target of ``loop:process:WHERE``)."""
        return load_manifest(where)

    def accepts(self, target: object) -> bool:
        return isinstance(target, Manifest)

    def capabilities(self, target: object) -> frozenset[Capability]:
        assert isinstance(target, Manifest)
        return target.capabilities()

    def tools(self, target: object) -> list[ToolSpec]:
        assert isinstance(target, Manifest)
        return list(target.tools)

    def provider(self, target: object) -> ModelProvider:
        """The API the manifest's ``api`` names (``chat``: OpenAI Chat Completions,
        ``responses``: OpenAI Responses, ``messages``: Anthropic Messages): the
        judge holds the agent's requests to that provider's rules alone, whose
        400 texts the fake endpoint answers (:data:`.exchange.PROVIDER_OF`)."""
        assert isinstance(target, Manifest)
        return ModelProvider(frozenset({PROVIDER_OF[target.api].value}),
                             f"the manifest's api = {target.api.value!r}")  # fmt: skip

    def providers(self, target: object) -> frozenset[str]:
        """The providers whose rules judge the requests (:meth:`provider`)."""
        return self.provider(target).names

    def open(self, target: object, harness: Harness) -> Loop:
        assert isinstance(target, Manifest)
        return ProcessLoop(target, harness)

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        from .replay import script

        return script(target_spec, folder=folder)
