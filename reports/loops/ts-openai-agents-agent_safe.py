"""Reproduces a finding of the black-box agent agent_safe.toml.

Replays a replay file (the minimal schedule: user messages, model replies,
tool outcomes, crashes) against the agent, run as its manifest says, through
prunecheck's fake model endpoint.  Run: python <this file> REPLAY.json (a path,
or a name beside this file; default: the schedule.json beside it).
Exit 1: reproduced; 0: not; 2: could not run.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = (HERE / '../../examples/blackbox/ts-openai-agents/agent_safe.toml').resolve()
NAMES = sys.argv[1:] or [Path(__file__).with_suffix(".json").name, "schedule.json"]
REPLAY = next((p for n in NAMES for p in (Path(n), HERE / n) if p.is_file()), None)
try:
    from prunecheck.sim.subjects.blackbox.replay import replay
except ImportError:
    print("could not run: needs prunecheck (pip install prunecheck)")
    sys.exit(2)
if REPLAY is None:
    print(f"could not run: no replay file {NAMES[0]} (here or beside this script)")
    sys.exit(2)
sys.exit(replay(MANIFEST, REPLAY))
