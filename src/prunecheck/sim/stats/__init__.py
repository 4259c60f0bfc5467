"""Statistics over sessions: session records, rate intervals, survival curves."""

__all__: list[str] = []
