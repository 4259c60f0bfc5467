"""Domain-free helpers shared by the shell: progress bars, locked and sealed files."""

__all__: list[str] = []
