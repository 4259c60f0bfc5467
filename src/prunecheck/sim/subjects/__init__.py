"""User code: loading policy and runtime specs, list and framework adapters, the cage."""

__all__: list[str] = []
