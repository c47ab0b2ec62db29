"""``python -m jupyter_debug_relay.cli``: the same command as ``jupyter-debug-relay``."""

import sys

from . import main

sys.exit(main())
