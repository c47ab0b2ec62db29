"""The script a launched target runs: the boot, ``_nodelay_boot.py``, loaded as a module, then its ``main``.

Python compiles a script run by path at every start and keeps nothing: 12 ms of every launch for the boot on 3.13.
Loaded as a module, the boot is compiled once per Python version and kept in ``__pycache__`` beside it, where the
folder can be written and ``PYTHONDONTWRITEBYTECODE`` is not set. (A process attached by pid loads it likewise:
``_pid_boot.py``.)
"""

import os
import sys
from importlib.util import module_from_spec, spec_from_file_location

spec = spec_from_file_location("_jupyter_debug_relay_boot", os.path.join(os.path.dirname(__file__), "_nodelay_boot.py"))
boot = module_from_spec(spec)
sys.modules[spec.name] = boot
spec.loader.exec_module(boot)
boot.main()
