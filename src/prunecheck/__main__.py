import sys

from prunecheck.sim.cli.app import main

sys.exit(main())
