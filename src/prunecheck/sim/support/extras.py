"""Which install extra brings which package, and the paragraph that says so.

The base install (``pip install prunecheck``) is the commit guard alone, the
standard library only; the harness, the plots and the cluster are extras
(``pyproject.toml``, README "Install").  A command or the pytest plugin that
needs a package the install left out says which, and the one command that
installs it, instead of a traceback.

Examples
--------
>>> extra_of("simpy"), extra_of("matplotlib.pyplot"), extra_of("numpy")
('harness', 'report', None)
>>> text = missing_paragraph("prunecheck check", "hypothesis")
>>> text.startswith("prunecheck check: needs the package 'hypothesis', which is not installed")
True
>>> text.endswith("Hint: install the harness with: pip install 'prunecheck[harness]'")
True
"""

from __future__ import annotations

__all__ = ["EXTRAS", "extra_of", "missing_paragraph"]

#: Top-level import name → the extra that installs it.
EXTRAS: dict[str, str] = {
    "hypothesis": "harness",
    "networkx": "harness",
    "simpy": "harness",
    "tqdm": "harness",
    "matplotlib": "report",
    "dask": "dask",
    "distributed": "dask",
}

_WHAT = {"harness": "the harness", "report": "the plots", "dask": "Dask sweeps"}


def extra_of(module: str | None) -> str | None:
    """The extra that installs ``module`` (a dotted import name), or None
    when it is not one of ours."""
    if not module:
        return None
    return EXTRAS.get(module.partition(".")[0])


def missing_paragraph(subject: str, module: str) -> str:
    """One paragraph: ``subject`` needs ``module``, which is not installed,
    and the command that installs it."""
    top = module.partition(".")[0]
    extra = extra_of(top)
    hint = (
        f"install {_WHAT[extra]} with: pip install 'prunecheck[{extra}]'"
        if extra is not None
        else f"install it with: pip install {top}"
    )
    return (
        f"{subject}: needs the package {top!r}, which is not installed (the base install, "
        f"'pip install prunecheck', is the commit guard alone). Hint: {hint}"
    )
