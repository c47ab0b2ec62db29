"""Runs debugpy's launcher so that the debuggee it starts carries no secret on its command line.

Started as ``python _launcher_boot.py LAUNCHER_DIR ARGS...`` (the relay rewrites debugpy's ``runInTerminal`` so),
this file switches on the feature ``launcher_token`` of ``boot/table.py`` (``boot/launcher_token.py``: the token
moves from the debuggee's command line into its ``JUPYTER_DEBUG_RELAY_BOOT`` variable), then runs the launcher as
``python LAUNCHER_DIR ARGS...`` would. A launcher whose names the feature does not find is not run: the launch fails
saying why, rather than put the secret on a command line every local user can read.
"""

import os
import runpy
import sys
from importlib.util import module_from_spec, spec_from_file_location

FEATURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "boot")


def beside(name: str):  # noqa: ANN201 - a module
    """The module ``boot/name.py``."""
    spec = spec_from_file_location(f"_jupyter_debug_relay_launcher_{name}", os.path.join(FEATURES, f"{name}.py"))
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    launcher_dir = sys.argv[1]
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(launcher_dir)))  # the folder holding debugpy/
    table, changes = beside("table"), beside("changes")
    feature = table.BY_NAME["launcher_token"]
    why = changes.switch_on(feature, beside(feature.module).apply, None)
    if why is not None:
        print(f"jupyter_debug_relay: debugpy's launcher in {launcher_dir} is not started: {feature.name} is off "
              f"({why}), so {feature.off}. Launch without subprocess=True, or use a debugpy of the range the relay "
              f"is proven on ({table.OLDEST} to {table.NEWEST}).", file=sys.stderr, flush=True)
        sys.exit(2)
    sys.argv[:] = sys.argv[1:]
    del sys.path[0]
    runpy.run_path(launcher_dir, run_name="__main__")


main()
