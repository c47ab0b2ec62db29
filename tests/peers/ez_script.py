"""A scripted `ez debugserver`: right answers, unless the scenario file (in place of the program) replaces one.

The scenario is a JSON object mapping an event's name to the data sent instead. The program stops
once, at line 2 of main; ``continue`` prints a line and exits with code 0.
"""

import json
import sys


def script(program):
    """The event (name, data) answering each command, and the events that follow some commands."""
    where = {"file": program, "line": 2, "column": 1}
    answers = {
        "initialize": ("initialized", {"file": program}),
        "setBreakpoint": ("breakpointSet", {"file": program, "line": 2, "id": 1}),
        "start": ("started", {}),
        "getStackTrace": ("stackTrace", {"frames": [{"index": 0, "function": "main", **where}]}),
        "getVariables": ("variables", {"frameIndex": 0, "variables": [{"name": "x", "value": "1", "type": "int"}]}),
        "evaluate": ("evaluateResult", {"result": "2", "type": "int"}),
        "terminate": ("terminated", {}),
    }
    after = {
        "start": (("stopped", {"reason": "breakpoint", "location": where}),),
        "continue": (("output", {"category": "stdout", "text": "done\n"}), ("exited", {"exitCode": 0})),
    }
    return answers, after


def main(program):
    with open(program) as f:
        bad = json.load(f)
    answers, after = script(program)

    def send(event, data):
        sys.stdout.write(json.dumps({"type": "event", "event": event, "data": bad.get(event, data)}) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        command = json.loads(line)["command"]
        if command in answers:
            send(*answers[command])
        for event in after.get(command, ()):
            send(*event)
        if command in ("continue", "terminate"):
            break


if __name__ == "__main__":
    main(sys.argv[2])  # argv: debugserver PROGRAM
