"""The shared world of a simulated run: files with versions, and the
processes outside the agents that change them.

Tools act on files: reads see a file's current version, writes bump it
(the runtime's own ``execute_call`` does this for the agent that issues
the call).  Every other agent learns of a write as an
:class:`~prunecheck.model.events.ExternalWrite` event in its own trace,
exactly as an intervening step appears in the domain document; the
*editor* is such a step that belongs to no agent.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import simpy

from prunecheck.model.events import CallSpec, Effect
from prunecheck.sim.drivers.workload import Workload

__all__ = ["FILES", "World", "draw_call", "editor", "slow_call"]

#: The files tools work on: few, so that agents and the editor collide.
FILES = (
    "src/app.py",
    "src/util.py",
    "src/db.py",
    "src/api.py",
    "tests/test_app.py",
    "config.yaml",
    "README.md",
    "app.log",
)
_READ_TOOLS = ("read_file", "read_file", "grep", "stat")
_WRITE_TOOLS = ("write_file", "edit_file")
_BACKGROUND_TOOLS = ("run_tests", "build")

Deliver = Callable[[str], None]


class World:
    """File versions shared by the agents of one run.

    Each agent subscribes a ``deliver(path)`` callback; :meth:`write` bumps a
    file and tells every subscriber but the writer.
    """

    __slots__ = ("_subscribers", "versions", "writes")

    def __init__(self) -> None:
        self.versions: dict[str, int] = {}
        self.writes = 0
        self._subscribers: list[Deliver] = []

    def subscribe(self, deliver: Deliver) -> int:
        """Register an agent; returns its writer id for :meth:`write`."""
        self._subscribers.append(deliver)
        return len(self._subscribers) - 1

    def write(self, path: str, writer: int | None = None) -> None:
        """``path`` changes; everyone but ``writer`` sees an external write."""
        self.versions[path] = self.versions.get(path, 0) + 1
        self.writes += 1
        for index, deliver in enumerate(self._subscribers):
            if index != writer:
                deliver(path)


def draw_call(work: Workload) -> CallSpec:
    """One tool call: a long background job, a write or a read of a file."""
    if work.is_background():
        return CallSpec(work.pick(_BACKGROUND_TOOLS), "tests", Effect.READ, background=True)
    if work.is_write():
        return CallSpec(work.pick(_WRITE_TOOLS), work.pick(FILES), Effect.WRITE)
    return CallSpec(work.pick(_READ_TOOLS), work.pick(FILES), Effect.READ)


def slow_call(work: Workload) -> CallSpec:
    """A slow call: the whole test suite or a build, run in the background."""
    return CallSpec(work.pick(_BACKGROUND_TOOLS), "tests", Effect.READ, background=True)


def editor(
    env: simpy.Environment, world: World, work: Workload
) -> Generator[simpy.Event, Any, None]:
    """A process outside the agents that changes a random file now and then."""
    while True:
        yield env.timeout(work.edit_gap())
        world.write(work.pick(FILES))
