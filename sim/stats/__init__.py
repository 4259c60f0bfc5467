"""Statistics over sessions: session records, rate intervals, survival curves."""
