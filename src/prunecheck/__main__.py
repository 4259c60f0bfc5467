import sys

from prunecheck.sim.cli import main

sys.exit(main())
