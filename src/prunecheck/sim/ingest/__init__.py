"""Production telemetry of model requests, read into prunecheck traces.

:mod:`.reading` reads log files (raw request bodies, OpenTelemetry GenAI and
OpenInference spans, LangSmith runs) into :mod:`.records`; :mod:`.differ`
diffs consecutive requests; :mod:`.incident` writes a conversation as a
trace whose replay reproduces what the log shows.  ``prunecheck import``
(:mod:`prunecheck.sim.cli.importing`) is the command line.
"""

__all__: list[str] = []
