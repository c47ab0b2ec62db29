"""Runs every kind of breakpoint, a step, evaluations, a crash stop and ``sys.exit`` on targets of several Pythons,
in a process of its own: ``python every_kind_driver.py kernel|PYTHON...`` prints what it saw as one JSON object
(``kernel``: targets of the interpreter running this, as a launch without ``python=`` gives them).

``tests/test_debugpy_versions.py`` runs it in a virtualenv that holds another debugpy, as a kernel's environment
that holds that debugpy runs the relay; each Python's targets run in a relay of their own, all at once.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor

import debugpy

from jupyter_debug_relay import Relay
from jupyter_debug_relay.backends.debugpy import interpreter, lending

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "every_kind.py")
BOOT = "__import__('sys').modules['_jupyter_debug_relay_boot']"


def line_of(text: str) -> int:
    with open(PROGRAM, encoding="utf-8") as f:
        return next(n for n, line in enumerate(f, 1) if line.rstrip().endswith(f"# {text}"))


def place(stop) -> list:  # noqa: ANN001 - a StopInfo or None
    if stop is None:
        return [None, None, None]
    return [stop.reason, stop.frame.name if stop.frame else None, stop.frame.line if stop.frame else None]


def every_kind(python: str | None) -> dict:
    """Each kind of breakpoint, in the order the program passes them; what the target and the relay said."""
    seen: dict = {"stops": [], "values": {}}
    with Relay() as relay:
        relay.breakpoints.add(PROGRAM, line_of("condition"), condition="i == 7")
        relay.breakpoints.add(PROGRAM, line_of("hits"), hit_condition="3")
        relay.breakpoints.add(PROGRAM, line_of("log"), log_message="log k={k}")
        relay.breakpoints.add_function("add")
        relay.breakpoints.exceptions("raised", ["KeyError"])
        session = relay.launch(PROGRAM, args=["exit"], python=python)
        seen["warnings"] = session.warnings
        stop = session.wait_for_stop(30)
        seen["stops"].append(place(stop))
        seen["values"]["i"] = session.evaluate("i").value
        seen["debugpy"] = session.evaluate("__import__('sys').modules['debugpy'].__version__").value.strip("'\"")
        on_off = f"{{name: why and 'off' for name, why in {BOOT}.STATE.items()}}"  # each reason is in the warnings
        state = session.evaluate(f"__import__('json').dumps({on_off})").value
        seen["features"] = json.loads(ast.literal_eval(state))
        seen["stops"].append(place(session.next(timeout=30)))
        for name in ("j", None, None):
            stop = session.continue_(timeout=30)
            seen["stops"].append(place(stop))
            if name:
                seen["values"][name] = session.evaluate(name).value
            if stop is not None and stop.exception is not None:
                seen["exception"] = stop.exception.type
        session.continue_(timeout=30)
        seen["end"] = [session.state, session.exit_code]
        seen["output"] = session.output().text
        relay.breakpoints.clear()
        relay.breakpoints.exceptions("uncaught")
        crash = relay.launch(PROGRAM, args=["crash"], python=python)
        stop = crash.wait_for_stop(30)
        seen["crash"] = place(stop) + [stop.exception.type if stop.exception else None]
        crash.terminate()
        relay.breakpoints.add(PROGRAM, line_of("produced"))
        awaited = relay.launch(PROGRAM, args=["async"], python=python)
        awaited.wait_for_stop(30)
        seen["await_step"] = place(awaited.step_out(timeout=30))  # out of a task: into the task awaiting it
        awaited.terminate()
    return seen


def lent(python: str | None) -> None:
    """Install the copy of debugpy a target of ``python`` is lent, before anything is measured."""
    found = asyncio.run(interpreter.probe(python or sys.executable))
    if lending.choose(found).note:
        lending.wait_for_installs()


def main() -> None:
    pythons = sys.argv[1:]
    for python in pythons:
        lent(None if python == "kernel" else python)

    def run(python: str) -> dict:
        try:
            return every_kind(None if python == "kernel" else python)
        except Exception:  # the test shows what went wrong, per Python
            return {"error": traceback.format_exc()}

    with ThreadPoolExecutor(len(pythons)) as pool:
        results = dict(zip(pythons, pool.map(run, pythons), strict=True))
    print(json.dumps({"kernel_debugpy": debugpy.__version__, "lent_version": lending.VERSION, "results": results}))


if __name__ == "__main__":
    main()
