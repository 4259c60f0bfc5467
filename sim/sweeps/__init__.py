"""Experiment runners: sweep plans, resumable results, the process pool and Dask."""
