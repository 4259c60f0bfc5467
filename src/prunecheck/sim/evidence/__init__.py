"""Reproductions: bundles, trace files, narratives and timelines of a failing trace."""

__all__: list[str] = []
