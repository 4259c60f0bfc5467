"""Report writers: failure-rate plots, summary.md, its tables, the frameworks table."""

__all__: list[str] = []
