"""A module that raises KeyboardInterrupt at import (no Ctrl-C was pressed)."""

raise KeyboardInterrupt
