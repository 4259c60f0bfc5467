"""Runtimes under test: the protocol, the model runtime, the guard runtime and the judge."""

__all__: list[str] = []
