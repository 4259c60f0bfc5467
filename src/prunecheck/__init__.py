"""prunecheck: check that a context-pruning policy never breaks the commit-boundary invariant."""

__version__ = "0.1.0"
