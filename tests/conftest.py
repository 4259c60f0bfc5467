"""Hypothesis profiles for the whole suite.

* ``default`` — fast, for ``make test``: few examples, no deadline (the
  machine is shared and noisy; tests never assert on wall-clock time).
* ``thorough`` — many examples, for tests marked ``slow``; they opt in with
  ``@settings(settings.get_profile("thorough"))``.

``HYPOTHESIS_PROFILE=thorough pytest`` runs every property test thoroughly.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "thorough",
    max_examples=1500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
