"""Framework adapters (one module each); every framework is imported lazily."""

__all__: list[str] = []
