"""Verdicts on a policy for a stated runtime: check, placements, regression, provider shape."""

__all__: list[str] = []
