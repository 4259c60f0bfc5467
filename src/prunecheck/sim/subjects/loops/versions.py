"""Which releases of a framework each loop adapter drives.

An adapter states the releases it supports as :class:`Supported` (its
module's ``SUPPORTED``, its class's ``supported``): for each distribution
it needs, the oldest release it was run on and the first release it does
not claim (the next major one; the next minor one before 1.0), and the
releases it was actually run on (``tested``: the oldest and the newest).
:func:`check_supported` refuses an installed release outside the range
(exit status 2, naming the installed and the supported releases, and what
to install), before anything of the framework is imported; a distribution
not installed is :func:`installed`'s None.  ``make test-all`` runs each
adapter on its oldest tested release (``tests/test_loop_releases.py``).
"""

from __future__ import annotations

import importlib.metadata
import re
from dataclasses import dataclass

from prunecheck.model.errors import PolicyError

__all__ = ["Needs", "Supported", "as_numbers", "check_supported", "installed"]


def as_numbers(version: str) -> tuple[int, ...]:
    """The release numbers of ``version`` (``"2.68.0rc1"`` -> ``(2, 68, 0)``)."""
    out: list[int] = []
    for part in version.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        out.append(int(digits.group()))
        if digits.group() != part:
            break
    return tuple(out)


def installed(dist: str) -> str | None:
    """The installed release of distribution ``dist``, or None."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True, slots=True)
class Needs:
    """One distribution an adapter needs: ``oldest <= release < below``."""

    dist: str
    oldest: str
    below: str

    def holds(self, version: str) -> bool:
        return as_numbers(self.oldest) <= as_numbers(version) < as_numbers(self.below)

    @property
    def requirement(self) -> str:
        return f"{self.dist}>={self.oldest},<{self.below}"


@dataclass(frozen=True, slots=True)
class Supported:
    """The releases a loop adapter drives.

    Attributes
    ----------
    needs : tuple[Needs, ...]
        The distributions, the framework's own first.
    tested : tuple[str, ...]
        The releases of the first distribution the adapter was run on
        (its tests: the newest; a release's own venv: the oldest).
    oldest_pins : tuple[str, ...]
        The requirement set the oldest tested release was run with
        (``tests/test_loop_releases.py`` builds its venv with
        ``known_bugs/venvs.py`` and checks an example agent there); empty
        while only the newest was run.
    """

    needs: tuple[Needs, ...]
    tested: tuple[str, ...]
    oldest_pins: tuple[str, ...] = ()

    @property
    def dist(self) -> str:
        return self.needs[0].dist

    def text(self) -> str:
        """``pydantic-ai-slim >=2.60.0,<3`` (and the others), as the docs table says it."""
        return ", ".join(f"{n.dist} >={n.oldest},<{n.below}" for n in self.needs)

    def out_of_range(self) -> list[tuple[Needs, str]]:
        """The installed distributions outside their range, with their releases."""
        found: list[tuple[Needs, str]] = []
        for need in self.needs:
            have = installed(need.dist)
            if have is not None and not need.holds(have):
                found.append((need, have))
        return found


def check_supported(framework: str, supported: Supported | None) -> None:
    """Refuse an installed release of ``framework`` outside ``supported``.

    Raises
    ------
    PolicyError
        Naming the installed release, the supported range and what to install.
    """
    if supported is None:
        return
    wrong = supported.out_of_range()
    if not wrong:
        return
    have = ", ".join(f"{need.dist} {version}" for need, version in wrong)
    raise PolicyError(
        f"loop framework {framework!r}",
        f"{have} is installed; prunecheck's {framework} adapter drives "
        f"{supported.text()} (run on {supported.dist} {' and '.join(supported.tested)}).",
        "install a supported release: pip install "
        + " ".join(f"'{need.requirement}'" for need, _ in wrong)
        + " (or pip install 'prunecheck[loops]', the releases prunecheck is tested with).",
    )
