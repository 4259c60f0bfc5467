"""Reproductions of a black-box agent: a replay file and a short script.

A counterexample against ``loop:process:MANIFEST.toml`` is a schedule
(:func:`~prunecheck.sim.subjects.loops.steps.schedule_to_json`): the user
messages, the model's replies, the tools' outcomes, the cancels, the crashes
and restarts, in order.  That JSON is the **replay file**: :func:`replay`
starts the fake endpoint and the tool hook, runs the user's agent as its
manifest says, and serves the file's steps to it one at a time, each when
the agent waits on it, exactly as the search did; it prints what the agent
sent and ends with ``reproduced: KIND: detail`` when the agent breaks as the
file expects.  :func:`script` is the standalone script (well within 30
lines; one per manifest, the replay file its argument) that calls it:
exit 1 reproduced, 0 not reproduced, 2 could not run (prunecheck missing,
the manifest or the replay file bad, the agent could not start).

The script needs prunecheck (the fake endpoint is prunecheck's), and the
agent's own toolchain (its ``node``, its virtualenv), as the manifest names
it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from prunecheck.model.errors import PrunecheckError

from ..loops.steps import ScheduleError, schedule_from_json

__all__ = ["replay", "script"]


def _say(text: str) -> None:
    print(text, flush=True)


def replay(manifest: str | Path, replay_file: str | Path) -> int:
    """Serve ``replay_file``'s schedule to the agent of ``manifest``; the exit status.

    1 if a violation the file expects (its ``expect`` list; any violation if it
    has none) happened again, 0 if not, 2 if it could not run.
    """
    from ..loops.scheduler import LoopRun, StepRefused
    from ..loops.target import load_target

    try:
        text = Path(replay_file).read_text(encoding="utf-8")
        steps = schedule_from_json(text, str(replay_file))
        expect = set(json.loads(text).get("expect") or [])
        target = load_target(f"loop:process:{manifest}")
    except (OSError, ScheduleError, PrunecheckError) as exc:
        _say(f"could not run: {exc.paragraph() if isinstance(exc, PrunecheckError) else exc}")
        return 2
    found = []
    try:
        with LoopRun(target.adapter, target.target) as run:
            for i, step in enumerate(steps):
                sent = len(run.ledger.requests)
                new = run.apply(step)
                _say(f"step {i}: {step.kind} {json.dumps(_short(step))}")
                for request in run.ledger.requests[sent:]:
                    _say(f"  request #{run.ledger.requests.index(request)}: "
                         f"{json.dumps(request.body.get('messages'))[:2000]}")  # fmt: skip
                for incident in new:
                    _say(
                        f"  {incident.kind.value}: {incident.detail}"
                        + (f" -- the provider says: {incident.text}" if incident.text else "")
                    )
                found += [x for x in new if x.is_violation]
    except StepRefused as exc:
        _say(f"not reproduced: the agent did not take the schedule ({exc})")
        return 0
    except PrunecheckError as exc:
        _say(f"could not run: {exc.paragraph()}")
        return 2
    hits = [x for x in found if not expect or x.kind.value in expect]
    if hits:
        _say(f"reproduced: {hits[0].kind.value}: {hits[0].detail}")
        return 1
    _say("not reproduced")
    return 0


def _short(step: object) -> dict[str, object]:
    from ..loops.steps import step_to_json

    doc = step_to_json(step)  # type: ignore[arg-type]
    return {
        k: (v[:60] + "..." if isinstance(v, str) and len(v) > 60 else v) for k, v in doc.items()
    }


_SCRIPT = '''\
"""Reproduces {what} of the black-box agent {manifest_name}.

Replays a replay file (the minimal schedule: user messages, model replies,
tool outcomes, crashes) against the agent, run as its manifest says, through
prunecheck's fake model endpoint.  Run: python <this file> REPLAY.json (a path,
or a name beside this file; default: the schedule.json beside it).
Exit 1: reproduced; 0: not; 2: could not run.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = (HERE / {manifest!r}).resolve()
NAMES = sys.argv[1:] or [Path(__file__).with_suffix(".json").name, "schedule.json"]
REPLAY = next((p for n in NAMES for p in (Path(n), HERE / n) if p.is_file()), None)
try:
    from prunecheck.sim.subjects.blackbox.replay import replay
except ImportError:
    print("could not run: needs prunecheck (pip install prunecheck)")
    sys.exit(2)
if REPLAY is None:
    print(f"could not run: no replay file {{NAMES[0]}} (here or beside this script)")
    sys.exit(2)
sys.exit(replay(MANIFEST, REPLAY))
'''


def script(target_spec: str, *, folder: Path | None = None, what: str = "a finding") -> str:
    """The text of the reproduction script for the agent of ``target_spec``
    (its manifest's path, or the ``loop:process:`` spec), to be written in
    ``folder`` (None: the working directory); it replays the file its argument
    names (default: its replay file beside it)."""
    manifest = Path(target_spec.removeprefix("loop:process:")).resolve()
    here = (folder or Path.cwd()).resolve()
    rel = os.path.relpath(manifest, here).replace(os.sep, "/")
    return _SCRIPT.format(what=what, manifest_name=manifest.name, manifest=rel)


if __name__ == "__main__":  # python -m prunecheck.sim.subjects.blackbox.replay MANIFEST REPLAY
    sys.exit(replay(sys.argv[1], sys.argv[2]) if len(sys.argv) == 3 else 2)
