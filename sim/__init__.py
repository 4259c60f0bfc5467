"""prunecheck.sim: drivers (simulator, search, explorer), sweeps, reports and the command line."""
