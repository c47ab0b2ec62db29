"""The console demo: debug the bundled sales report and print a readable transcript."""

from __future__ import annotations

import os
from collections.abc import Callable

from .errors import RelayError
from .examples import sales_report
from .relay import Relay

BUGGY_LINE = "totals[name] = amount"


def example_path() -> str:
    return os.path.abspath(sales_report.__file__)


def line_of(path: str, text: str) -> int:
    with open(path, encoding="utf-8") as f:
        return next(n for n, line in enumerate(f, 1) if text in line)


def run(say: Callable[[str], None] = print) -> int:
    """Run the demo; returns the target's exit code."""
    program = example_path()
    line = line_of(program, BUGGY_LINE)
    short = os.path.basename(program)
    with Relay() as relay:
        say(f"$ break {short}:{line} if name in totals      # stop when a customer comes back")
        bp = relay.breakpoints.add(program, line, condition="name in totals")
        say(f"  breakpoint {bp.id} at {short}:{bp.line} (condition: {bp.condition})")
        say(f"$ launch {short}")
        session = relay.launch(program, just_my_code=False)
        stop = session.wait_for_stop(30)
        say(f"  paused at {short}:{stop.frame.line} in {stop.frame.name}() — {stop.reason} {bp.id}")
        say("$ where")
        for depth, frame in enumerate(session.stack()):
            say(f"  #{depth} {frame.name}() at {os.path.basename(frame.path or '?')}:{frame.line}")
        say("$ vars")
        scope = session.scopes()[0]
        for var in session.variables(scope.ref).items:
            say(f"  {var.name} = {var.value}  ({var.type})")
        say("$ eval totals[name], amount")
        say(f"  {session.evaluate('totals[name], amount').value}")
        say("  -> the next line overwrites totals[name] instead of adding to it.")
        say("$ next")
        stop = session.next()
        say(f"  paused at {short}:{stop.frame.line} in {stop.frame.name}() — {stop.reason}")
        say("$ eval totals[name]")
        say(f"  {session.evaluate('totals[name]').value}   # the earlier order is gone: that is the bug")
        relay.breakpoints.remove(bp.id)
        say("$ continue")
        try:
            session.continue_(timeout=30)
        except RelayError as exc:
            if exc.code != "target_exited":
                raise
        for text in session.output().text.splitlines():
            say(f"  | {text}")
        say(f"  target exited with code {session.exit_code}")
        say("Fix: totals[name] = totals.get(name, 0) + amount")
        return session.exit_code or 0
