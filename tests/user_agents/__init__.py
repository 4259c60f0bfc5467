"""Agents written the way users write them (issue 31), not shaped to prunecheck.

Each module is one agent as a framework's docs and typical user code write
it; its docstring says what a user would expect and the verdict prunecheck
should give.  ``tests/test_user_agents.py`` holds each to that verdict.
These are not examples the project tunes on (those are ``examples/loops/``).
"""
