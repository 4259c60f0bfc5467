"""The explorer's memory and speed on the issue's shape: 2 batches of up to
3 calls, 3 chunks a stream (``Shape.small(max_calls=3, max_chunks=3)``),
lowest_salience under gate ``commit``, to depth 8.

The exploration runs in a subprocess, so that its peak resident memory
(``VmHWM``; ``ru_maxrss`` would carry the parent's over ``exec``) is its
own; the same subprocess reports its resident memory after imports, before
exploring, so that what the states cost is peak minus that baseline; a
second run one level deeper gives what each further state costs.  Targets:
≤ 100 bytes a state, ≤ 512 MB peak.
States per second and the fingerprint collision probability (n(n-1)/2⁶⁵)
come from the explorer's own result.

    python benchmarks/run.py --only explore [--quick]
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

__all__ = ["TITLE", "run"]

TITLE = "Explorer: memory and speed"

MAX_BYTES_PER_STATE = 100
MAX_PEAK_MB = 512

_CHILD = """
import json, sys
from prunecheck.sim.subjects.loader import load_system
from prunecheck.model.gates import Gate
from prunecheck.model.config import RuntimeConfig
from prunecheck.sim.drivers.explore import explore
from prunecheck.sim.subjects.loader import load_policy
from prunecheck.sim.drivers.shape import Shape

def status_kb(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))

def rss_kb():
    return status_kb("VmRSS")

depth = int(sys.argv[1])
config = RuntimeConfig(budget=1000, hard_ceiling=1500, gate=Gate.COMMIT)
shape = Shape.small(max_calls=3, max_chunks=3)
explore(load_system("lowest_salience"), config, depth=2, shape=shape)  # imported and warm
base = rss_kb()
r = explore(load_system("lowest_salience"), config, depth=depth, shape=shape, max_states=50_000_000)
# VmHWM, not getrusage's ru_maxrss: Linux keeps ru_maxrss across exec, so a child
# of a big parent (make bench, after the Dask sweeps) reported the parent's size.
peak = status_kb("VmHWM")
print(json.dumps({"states": r.states, "transitions": r.transitions, "depth": r.depth_reached,
                  "capped": r.capped, "found": r.counterexample is not None,
                  "seconds": r.seconds, "rate": r.states_per_second,
                  "structures": r.bytes_per_state, "p": r.collision_probability,
                  "base_kb": base, "peak_kb": peak}))
"""


def _explore(depth: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(depth)], capture_output=True, text=True, check=True
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def run(quick: bool) -> str:
    depth = 6 if quick else 8
    r = _explore(depth)
    deeper = _explore(depth + 1)
    states = r["states"]
    peak_mb = r["peak_kb"] / 1024
    per_state = (r["peak_kb"] - r["base_kb"]) * 1024 / states
    ok_bytes = "met" if per_state <= MAX_BYTES_PER_STATE else "not met"
    ok_peak = "met" if peak_mb <= MAX_PEAK_MB else "not met"
    marginal = (deeper["peak_kb"] - r["peak_kb"]) * 1024 / max(1, deeper["states"] - states)
    ok_marginal = "met" if marginal <= MAX_BYTES_PER_STATE else "not met"
    lines = [
        f"lowest_salience · gate commit · `Shape.small(max_calls=3, max_chunks=3)` to depth "
        f"{depth}: {states:,} states, {r['transitions']:,} transitions, depth "
        f"{r['depth']} reached{' (capped)' if r['capped'] else ''}"
        f"{', a counterexample' if r['found'] else ', no violation'}.",
        "",
        "| figure | target | measured |",
        "|---|---|---|",
        f"| peak resident memory of the exploring process | ≤ {MAX_PEAK_MB} MB | "
        f"**{peak_mb:,.0f} MB** ({ok_peak}) |",
        f"| (peak − resident before exploring) ÷ states | ≤ {MAX_BYTES_PER_STATE} B | "
        f"**{per_state:.0f} B** ({ok_bytes}) |",
        f"| each further state: (peak − peak) ÷ (states − states), depth {depth} → "
        f"{depth + 1} ({deeper['states']:,} states, {deeper['peak_kb'] / 1024:,.0f} MB peak) | "
        f"≤ {MAX_BYTES_PER_STATE} B | **{marginal:.0f} B** ({ok_marginal}) |",
        f"| fingerprint table + parent numbers + event indices ÷ states | — | "
        f"{r['structures']:.1f} B |",
        f"| states per second | — | {r['rate']:,.0f} ({r['seconds']:.1f} s) |",
        f"| fingerprint collision probability, n(n−1)/2⁶⁵ | — | {r['p']:.1e} |",
        "",
        f"Resident before exploring (interpreter, prunecheck, warm-up): "
        f"{r['base_kb'] / 1024:.0f} MB.",
    ]
    return "\n".join(lines) + "\n"
