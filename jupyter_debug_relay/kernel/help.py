"""The magics' help: usage lines and the ``%debug_session help`` page, generated from the declarations."""

from __future__ import annotations

from ..errors import RelayError
from .grammar import MAGICS, PREFIX, SESSION_COMMANDS, Magic, args_of, usage, usage_parts
from .parsing import BP_USAGE


def _wrapped(magic: Magic, width: int = 110) -> str:
    indent = " " * (len(PREFIX) + len(magic.word) + 4)
    lines = ["  " + " ".join(usage_parts(magic)[:2])]
    for part in usage_parts(magic)[2:]:
        if len(lines[-1]) + 1 + len(part) > width:
            lines.append(indent[:-1])
        lines[-1] += " " + part
    return "\n".join(lines) + f"\n      {magic.text}"


BP_LINES = (  # the lines of the %bp help: the forms of parsing.BP_USAGE on each, and a note
    (("line",), "--task: only in that asyncio task"),
    (("content",), "the line holding TEXT; follows edits"),
    (("func",), "also function:NAME; qualified names too: Point.norm"),
    (("exceptions",), "only those exception types, e.g. ValueError,KeyError"),
    (("edit",), "a clause with nothing after it removes it"),
    (("condition-errors",), "whether a failing condition stops"),
    (("stage",), "Mycel"),
    (("output",), "pause just after a matching line of output"),
    (("list", "rm", "clear", "disable", "enable"), ""),
    (("save", "load", "profiles"), "named sets of breakpoints, kept for the next kernel"),
)


def bp_help() -> str:
    """The ``%bp`` grammar: every form of ``BP_USAGE``, on the lines of ``BP_LINES``."""
    lines = []
    for verbs, note in BP_LINES:
        text = " | ".join([BP_USAGE[verbs[0]], *(BP_USAGE[verb].removeprefix("%bp ") for verb in verbs[1:])])
        if note:  # after the form, in the column of the others when it fits in 110 characters, else under it
            text = f"{text:<53} ({note})" if len(f"{text:<53} ({note})") <= 110 else f"{text}\n    ({note})"
        lines.append(text)
    return "\n".join(lines)


EXAMPLES = """\
Examples:
  %bp app.py:12 if order["total"] == 0
  %bp app.py:15 hit >=2
  %bp app.py:20 log total is {total}
  %debug_session launch "my app.py" --input data.csv
  %debug_session launch --name tests -m pytest -x tests/test_a.py::test_one
  %debug_session next
  %debug_session vars totals
  %debug_session eval sum(totals.values())
  %debug_session pull df --as frame"""


def build_help() -> str:
    """The whole ``%debug_session help``: every word's grammar and summary by group, then ``%bp``."""
    out = [f"{PREFIX} (alias %dbg) — debug another program from this kernel."]
    groups: dict[str, list[Magic]] = {}
    for magic in MAGICS.values():
        groups.setdefault(magic.group, []).append(magic)
    for group, magics in groups.items():
        out.append(f"\n{group}:")
        out += [_wrapped(m) for m in magics]
    out.append("\nEvery command takes --session NAME to address another session than the current one.\n")
    out += [bp_help(), "", EXAMPLES]
    return "\n".join(out) + "\n"


def word_help(word: str) -> str:
    """``help WORD``: the grammar, the summary and every option with what it means and its default."""
    magic = MAGICS.get(word)
    if magic is None:
        raise RelayError("invalid_request", f"Unknown command {word!r}.", "Commands: " + ", ".join(SESSION_COMMANDS))
    lines = [usage(magic), f"  {magic.text}"]
    for arg in args_of(magic):
        name = arg.usage().strip("[]").replace("]...", "")
        about = arg.help or ("a session id (s1) or name; default: the current one" if arg.dest == "session" else "")
        default = f" (default {arg.default})" if arg.default not in (None, False, True) else ""
        lines.append(f"  {name:<28} {about}{default}".rstrip())
    return "\n".join(lines)


HELP = build_help()
