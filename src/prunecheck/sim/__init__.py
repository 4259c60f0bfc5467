"""The shell: every folder is named for what it does for the user.

- ``subjects``: a spec becomes something to check — the policy adapters and
  their cage, the framework trimmers, the runtimes under test
  (``subjects.runtimes``) and the frameworks' agent loops
  (``subjects.loops``); the only place a spec string is parsed
  (``subjects.policy_spec``).
- ``drivers``: the drivers that take a ``System`` (search, explorer,
  simulator, the agents' action search) and the one shrinker
  (``drivers.shrinking``).
- ``api``: the orchestrator — the public Python API that ``check``,
  ``search``, ``regress`` and the pytest plugin run through; verdicts.
- ``evidence``: what a failure leaves behind: bundles, reproductions,
  narratives and the failure database.
- ``ingest``: telemetry and transcripts read into traces.
- ``sweeps`` and ``stats``: rates over sessions; ``reports``: the report
  and its figures; ``cli``: the command line, a thin layer over ``api``;
  ``support``: small shared helpers.

From the command line down (nothing imports upward; ``make lint`` checks
it): ``cli`` → ``reports`` → ``api`` | ``sweeps`` → ``evidence`` → ``drivers``
→ ``subjects`` | ``ingest`` → ``stats`` | ``support``, and all of them →
:mod:`prunecheck.model`.

The modules that lived directly in ``prunecheck.sim`` before 0.2 (and were
importable under those names, with a warning, in 0.2) are gone in 0.3:
``CHANGELOG.md`` names each one's home.
"""

from __future__ import annotations

__all__: list[str] = []
