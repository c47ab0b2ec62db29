"""Feature ``launcher_token`` (in debugpy's launcher, ``_launcher_boot.py``): the launcher starts the target as
``PYTHON... DEBUGPY_DIR --connect HOST:PORT ... --adapter-access-token TOKEN program``, and ``/proc/PID/cmdline`` is
readable by every local user. Its ``spawn`` is wrapped: the token moves into the target's ``JUPYTER_DEBUG_RELAY_BOOT``
variable, where ``_nodelay_boot.py`` takes it back and removes it."""

import json

BOOT_VARIABLE = "JUPYTER_DEBUG_RELAY_BOOT"  # read by _nodelay_boot.py
TOKEN_SWITCH = "--adapter-access-token"


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes; no boot module in the launcher
    debuggee = change.module("debugpy.launcher.debuggee")
    spawn = debuggee.spawn

    def spawn_without_token(process_name: str, cmdline: list, env: dict, redirect_output: bool) -> None:
        if TOKEN_SWITCH in cmdline and BOOT_VARIABLE in env:  # the target runs _nodelay_boot.py
            at = cmdline.index(TOKEN_SWITCH)
            settings = json.loads(env[BOOT_VARIABLE])
            settings["token"] = cmdline[at + 1]
            env[BOOT_VARIABLE] = json.dumps(settings)
            del cmdline[at : at + 2]
        spawn(process_name, cmdline, env, redirect_output)

    change.replace(debuggee, "spawn", spawn_without_token)
