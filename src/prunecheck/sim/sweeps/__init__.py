"""Experiment runners: sweep plans, resumable results, the process pool and Dask."""

__all__: list[str] = []
