"""Reproduces a finding of the black-box agent agent.toml.

Replays the replay file (the minimal schedule: user messages, model replies,
tool outcomes, crashes) against the agent, run as its manifest says, through
prunecheck's fake model endpoint.  Exit 1: reproduced; 0: not; 2: could not run.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = (HERE / '../../examples/blackbox/ts-vercel/agent.toml').resolve()
REPLAY = next((p for p in (Path(__file__).with_suffix(".json"), HERE / "schedule.json")
               if p.exists()), None)
try:
    from prunecheck.sim.subjects.blackbox.replay import replay
except ImportError:
    print("could not run: needs prunecheck (pip install prunecheck)")
    sys.exit(2)
if REPLAY is None:
    print("could not run: the replay file is not beside this script")
    sys.exit(2)
sys.exit(replay(MANIFEST, REPLAY))
