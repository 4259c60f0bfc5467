"""The shell: drivers, sweeps, reports, user-code adapters and the command line.

Subpackages, from the command line down (nothing imports upward; ``make lint``
checks it): ``cli`` → ``reports`` → ``verdicts`` | ``sweeps`` → ``drivers`` |
``reproductions`` → ``adapters`` → ``runtimes`` → ``stats`` | ``support``,
and all of them → :mod:`prunecheck.model`.

The modules that lived directly in ``prunecheck.sim`` before 0.2 (and were
importable under those names, with a warning, in 0.2) are gone in 0.3:
``CHANGELOG.md`` names each one's home.
"""

from __future__ import annotations

__all__: list[str] = []
