"""The three drivers feeding model.engine: the SimPy simulator, the search, the explorer."""

__all__: list[str] = []
