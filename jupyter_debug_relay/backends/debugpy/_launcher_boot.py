"""Runs debugpy's launcher so that the debuggee it starts carries no secret on its command line.

debugpy's launcher starts the debuggee as ``PYTHON... DEBUGPY_DIR --connect HOST:PORT ...
--adapter-access-token TOKEN program``, and ``/proc/PID/cmdline`` is readable by every
local user. Started as ``python _launcher_boot.py LAUNCHER_DIR ARGS...`` (the relay
rewrites debugpy's ``runInTerminal`` so), this file moves that token into the
debuggee's ``JUPYTER_DEBUG_RELAY_BOOT`` variable, where ``_nodelay_boot.py`` (the
debuggee's ``python``) takes it back and removes it, then runs the launcher as
``python LAUNCHER_DIR ARGS...`` would.
"""

import json
import os
import runpy
import sys

BOOT_VARIABLE = "JUPYTER_DEBUG_RELAY_BOOT"  # read by _nodelay_boot.py
TOKEN_SWITCH = "--adapter-access-token"


def main() -> None:
    launcher_dir = sys.argv[1]
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(launcher_dir)))  # the folder holding debugpy/
    from debugpy.launcher import debuggee

    spawn = debuggee.spawn

    def spawn_without_token(process_name: str, cmdline: list, env: dict, redirect_output: bool) -> None:
        if TOKEN_SWITCH in cmdline and BOOT_VARIABLE in env:  # the debuggee runs _nodelay_boot.py
            at = cmdline.index(TOKEN_SWITCH)
            settings = json.loads(env[BOOT_VARIABLE])
            settings["token"] = cmdline[at + 1]
            env[BOOT_VARIABLE] = json.dumps(settings)
            del cmdline[at : at + 2]
        spawn(process_name, cmdline, env, redirect_output)

    debuggee.spawn = spawn_without_token
    sys.argv[:] = sys.argv[1:]
    del sys.path[0]
    runpy.run_path(launcher_dir, run_name="__main__")


main()
