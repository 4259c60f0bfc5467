"""User code: loading policy and runtime specs, list and framework adapters, the cage."""
