"""Runtimes under test: the RuntimeUnderTest protocol and its stimuli, the
judge, the rendering of events, and the System of a judged runtime
(:class:`~prunecheck.sim.subjects.runtimes.judged.JudgedSystem`) with the runtimes it
drives — a user's, the guard's reference runtime, the model runtime."""

__all__: list[str] = []
