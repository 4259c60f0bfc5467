"""The SimPy simulator: runtimes under load, in simulated time.

:func:`simulate` runs one environment: ``load.agents`` agents (each with
its own state of the :class:`~prunecheck.model.system.System` under test,
random stream and trace) sharing a world of files that an editor process
also changes.  Every event goes through ``system.apply``; every agent's
trace replays with :func:`~prunecheck.model.system.replay` to the incidents
counted here (:func:`tally_trace` does that replay).

Examples
--------
>>> from prunecheck.model.model_system import ModelSystem
>>> from prunecheck.model.policies import builtin_policy
>>> from prunecheck.model.config import RuntimeConfig
>>> from prunecheck.sim.drivers.workload import load_at
>>> result = simulate(ModelSystem(builtin_policy("unit_safe")), RuntimeConfig(), load_at(0.2),
...                   seed=1, horizon=60.0)
>>> result.error is None and result.incidents["orphaned_result"] == 0
True
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import simpy

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import ConfigError, PolicyError
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.system import S, System, replay
from prunecheck.model.trace import Trace
from prunecheck.sim.drivers.agents import Agent, Control, Halt, Tally
from prunecheck.sim.drivers.workload import Load, Workload
from prunecheck.sim.drivers.world import World, editor
from prunecheck.sim.stats.sessions import SessionRecord

__all__ = ["DEFAULT_HORIZON", "SIMULATOR_VERSION", "RunResult", "simulate", "tally_trace"]

#: Simulated seconds of one run unless told otherwise.
DEFAULT_HORIZON = 600.0


def _source_version() -> str:
    """A digest of the code a simulated run depends on (the whole model and
    the simulator's modules): when it changes, stored sweep rows are never
    reused, so a report always reflects the code that wrote it."""
    here = Path(__file__).resolve().parent
    files = sorted((here.parent.parent / "model").glob("*.py"))
    files += [here / name for name in ("simulator.py", "agents.py", "world.py", "workload.py")]
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes().replace(b"\r\n", b"\n"))
    return digest.hexdigest()[:16]


#: Changes whenever the same inputs could simulate differently.
SIMULATOR_VERSION = _source_version()


@dataclass(frozen=True, slots=True)
class RunResult:
    """What one simulated run produced.

    Attributes
    ----------
    traces: one trace per agent, replayable to the same incidents.
    incidents: incidents per :class:`IncidentKind` value (every kind present).
    exposed: per incident kind (and ``provider_rejection:<provider error
        kind>``), how many invocations saw at least one such incident since
        the invocation before: a count out of ``invocations``, the basis of
        the per-1,000-invocation rates and their Wilson intervals.
    invocations: model invocations (not counting blocked ones), all agents.
    events: events applied, all agents.
    counters: the runtimes' counters, summed over agents.
    time_deferred: simulated agent-seconds spent with a deferred budget check.
    sim_time: simulated agent-seconds (run length × agents).
    error: the policy error that stopped the run, or None.
    sessions: every agent's sessions in agent order (see :mod:`.sessions`);
        the last one of each agent is censored by the horizon.
    """

    traces: tuple[Trace, ...]
    incidents: dict[str, int]
    exposed: dict[str, int]
    invocations: int
    events: int
    counters: dict[str, int]
    time_deferred: float
    sim_time: float
    error: str | None = None
    sessions: tuple[SessionRecord, ...] = ()


def _stream(seed: int, name: str) -> random.Random:
    # String seeds hash with SHA-512: stable across processes and platforms.
    return random.Random(f"prunecheck/{seed}/{name}")


def simulate(
    system: System[S],
    config: RuntimeConfig,
    load: Load,
    seed: int,
    *,
    horizon: float = DEFAULT_HORIZON,
    max_events: int | None = None,
) -> RunResult:
    """Run ``load.agents`` agents for ``horizon`` simulated seconds.

    Parameters
    ----------
    system: what each agent runs: the model runtime with a policy
        (time-limited by the caller), or a runtime under test; the traces
        record its ``name``.
    config: the runtime's rules; its ``check_at`` decides when checks fire.
    load: the load knobs.
    seed: the run's seed; each agent's stream derives from it.
    horizon: simulated seconds.
    max_events: stop after this many events (all agents together).

    Returns
    -------
    RunResult
        A policy that raises or returns garbage stops the run: ``error``
        holds its message and the traces end with the failing event.

    Raises
    ------
    ConfigError
        if ``horizon`` is not positive.
    """
    if horizon <= 0:
        raise ConfigError("horizon", f"must be positive, got {horizon!r}.")
    env = simpy.Environment()
    world = World()
    control = Control(max_events)
    agents = [
        Agent(env, world, config, system, load, _stream(seed, f"agent{i}"), i, control)
        for i in range(load.agents)
    ]
    env.process(editor(env, world, Workload(load, config.budget, _stream(seed, "editor"))))
    for agent in agents:
        agent.start()
    with suppress(Halt):  # a policy error or the event limit: the run ends here
        env.run(until=horizon)
    end = round(env.now, 3)
    meta = {
        "agents": load.agents,
        "end": end,
        "horizon": horizon,
        "load": load.to_json(),
        "simulator": "prunecheck.sim.drivers.simulator",
    }
    traces = []
    incidents = Counter({kind.value: 0 for kind in IncidentKind})
    exposed: Counter[str] = Counter()
    counters: Counter[str] = Counter()
    time_deferred = 0.0
    sessions: list[SessionRecord] = []
    for agent in agents:
        agent.tally.close(end)
        traces.append(
            Trace(
                system.name,
                config,
                tuple(agent.events),
                seed,
                tuple(agent.times),
                {**meta, "agent": agent.index},
            )
        )
        incidents.update(agent.tally.incidents)
        exposed.update(agent.tally.exposed)
        counters.update(agent.truth.counters)
        time_deferred += agent.tally.deferred_time
        sessions.extend(agent.tally.sessions)
    return RunResult(
        traces=tuple(traces),
        incidents=dict(incidents),
        exposed=dict(sorted(exposed.items())),
        invocations=sum(a.tally.invocations for a in agents),
        events=sum(a.tally.events for a in agents),
        counters=dict(sorted(counters.items())),
        time_deferred=round(time_deferred, 3),
        sim_time=round(end * len(agents), 3),
        error=control.error,
        sessions=tuple(sessions),
    )


def tally_trace(trace: Trace, system: System[S]) -> tuple[Tally, str | None]:
    """Replay ``trace`` by ``system`` and count it as the simulator did.

    Returns the tally and the policy error that ended the replay (None if
    it ran to the end); a simulated run's trace gives the same counts.
    """
    tally = Tally()
    error = None
    try:
        for step, state in replay(trace, system, record=False):
            tally.add(step.event, step.result, system.truth(state), step.at)
    except PolicyError as exc:
        error = exc.paragraph()
    end = trace.meta.get("end")
    if not isinstance(end, int | float):
        end = trace.times[-1] if trace.times else float(len(trace.events))
    tally.close(float(end))
    return tally, error
