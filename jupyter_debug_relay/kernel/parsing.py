"""Parsing ``%bp`` lines: shell quoting for paths and ids, raw text for conditions and log messages."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import RelayError
from ..model import Breakpoint
from ..operations.locations import location
from .grammar import split

BP_USAGE = {  # each form of a %bp line: the usage its mistakes say, and the help's lines (kernel/help.py)
    "line": "%bp FILE:LINE [if CONDITION] [hit HIT_CONDITION] [--task NAME] [log MESSAGE]",
    "content": '%bp FILE:"TEXT" [if CONDITION] [hit HIT_CONDITION] [--task NAME] [log MESSAGE]',
    "func": "%bp func NAME [if CONDITION]",
    "exceptions": "%bp exceptions raised|uncaught|none [TYPE,TYPE...]",
    "condition-errors": "%bp condition-errors stop|run",
    "stage": "%bp stage FLOW STAGE [rule N] [if CONDITION]",
    "output": "%bp output REGEX",
    "edit": "%bp edit ID [if CONDITION] [hit HIT_CONDITION] [log MESSAGE]",
    "list": "%bp list", "rm": "%bp rm ID...", "clear": "%bp clear [FILE]", "disable": "%bp disable ID",
    "enable": "%bp enable ID", "save": "%bp save NAME", "load": "%bp load NAME", "profiles": "%bp profiles",
}
BP_COMMANDS = tuple(verb for verb in BP_USAGE if verb not in ("line", "content"))  # the words after %bp


# -- %bp -------------------------------------------------------------------------------------

@dataclass
class BpCommand:
    """A parsed ``%bp`` line: the verb, the breakpoint it describes (id 0, not yet added), the ids it names."""

    verb: str  # line, func, exceptions, condition_errors, stage, output, edit, list, rm, clear, disable, enable...
    spec: Breakpoint = field(default_factory=lambda: Breakpoint(id=0, kind="line"))
    ids: list[int] = field(default_factory=list)
    types: list[str] = field(default_factory=list)  # exceptions: the exception types it is limited to
    changes: dict[str, str] = field(default_factory=dict)  # edit: the clauses given ("" removes one)


_LINE_CLAUSES = re.compile(r"(if|hit|log|--task)(?=\s|$)")
_STAGE_CLAUSES = re.compile(r"(if|rule)(?=\s)")


def _clauses(text: str, keywords: re.Pattern[str]) -> tuple[str, dict[str, str]]:
    """Split ``head [if C] [hit H] [log M]`` at keywords outside quotes; ``log`` takes the rest."""
    starts: list[tuple[int, int, str]] = []
    quote = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        else:
            match = keywords.match(text, i)
            if match and (i == 0 or text[i - 1].isspace()) and match.group(1) not in {k for _, _, k in starts}:
                starts.append((match.start(), match.end(), match.group(1)))
                if match.group(1) == "log":
                    break
                i = match.end()
                continue
        i += 1
    head = text[:starts[0][0]] if starts else text
    clauses = {}
    for n, (_, end, key) in enumerate(starts):
        stop = starts[n + 1][0] if n + 1 < len(starts) else len(text)
        clauses[key] = text[end:stop].strip()
    return head.strip(), clauses


def _ids(words: list[str], verb: str) -> list[int]:
    if not words:
        raise RelayError("invalid_request", f"`%bp {verb}` needs a breakpoint id.", "See the ids with `%bp list`.")
    try:
        return [int(w) for w in words]
    except ValueError:
        raise RelayError("invalid_request", f"Breakpoint ids are numbers, not {' '.join(words)!r}.",
                         "See the ids with `%bp list`.") from None


def parse_bp_line(line: str) -> BpCommand:
    """Parse a ``%bp`` line; conditions and log messages are kept verbatim."""
    text = line.strip()
    if not text:
        return BpCommand("list")
    first, _, rest = text.partition(" ")
    if first in ("save", "load", "profiles"):
        words = split(rest)
        if len(words) != (first != "profiles"):
            raise RelayError("invalid_request", f"Usage: {BP_USAGE[first]}.",
                             "e.g. `%bp save smoke`, `%bp load smoke`, `%bp profiles`.")
        return BpCommand(first, Breakpoint(id=0, kind="line", name=words[0] if words else None))
    if first in ("list", "rm", "clear", "disable", "enable"):
        words = split(rest)
        if first == "list":
            return BpCommand("list")
        if first == "clear":
            return BpCommand("clear", Breakpoint(id=0, kind="line", path=words[0] if words else None))
        ids = _ids(words, first)
        if first != "rm" and len(ids) != 1:
            raise RelayError("invalid_request", f"`%bp {first}` takes one breakpoint id.", f"Usage: {BP_USAGE[first]}.")
        return BpCommand(first, ids=ids)
    if first == "exceptions":
        words = split(rest)
        if not words or words[0] not in ("raised", "uncaught", "none") or (words[0] == "none" and len(words) > 1):
            raise RelayError("invalid_request", f"Usage: {BP_USAGE['exceptions']}.",
                             "e.g. %bp exceptions raised ValueError,KeyError")
        types = [name for word in words[1:] for name in word.split(",") if name]
        return BpCommand("exceptions", Breakpoint(id=0, kind="exception", name=words[0]), types=types)
    if first == "output":  # the rest of the line is the regex, as written
        if not rest.strip():
            raise RelayError("invalid_request", f"Usage: {BP_USAGE['output']}.", "e.g. %bp output ^ERROR")
        return BpCommand("output", Breakpoint(id=0, kind="output", pattern=rest.strip()))
    if first == "condition-errors":
        words = split(rest)
        if len(words) != 1 or words[0] not in ("stop", "run"):
            raise RelayError("invalid_request", f"Usage: {BP_USAGE['condition-errors']}.",
                             "stop: a breakpoint whose condition fails stops there (the default); run: it does not.")
        return BpCommand("condition_errors", Breakpoint(id=0, kind="exception", name=words[0]))
    head, clauses = _clauses(text, _STAGE_CLAUSES if first == "stage" else _LINE_CLAUSES)
    task = _task(clauses, first)
    if first == "edit":
        words = split(head)[1:]
        if len(words) != 1 or not clauses:
            raise RelayError("invalid_request", f"Usage: {BP_USAGE['edit']}.",
                             "A clause with nothing after it removes it: `%bp edit 2 if` makes breakpoint 2 "
                             "unconditional.")
        names = {"if": "condition", "hit": "hit_condition", "log": "log_message"}
        return BpCommand("edit", ids=_ids(words, first), changes={names[k]: v for k, v in clauses.items()})
    condition = clauses.get("if") or None
    if "if" in clauses and not condition:
        raise RelayError("invalid_condition", "`if` needs a condition after it.", "e.g. %bp app.py:12 if i == 3")
    if first == "func" or first.startswith("function:"):
        words = split(head)[1:] if first == "func" else [first.partition(":")[2], *split(head)[1:]]
        if len(words) != 1:
            raise RelayError("invalid_request", f"Usage: {BP_USAGE['func']}.")
        return BpCommand("func", Breakpoint(id=0, kind="function", name=words[0], condition=condition))
    if first == "stage":
        words = split(head)[1:]
        if len(words) != 2:
            raise RelayError("invalid_request", f"Usage: {BP_USAGE['stage']}.")
        rule = clauses.get("rule")
        try:
            rule_index = int(rule) if rule is not None else None
        except ValueError:
            raise RelayError("invalid_request", f"`rule` takes a rule index, not {rule!r}.") from None
        return BpCommand("stage", Breakpoint(id=0, kind="stage", flow=words[0], stage=words[1], rule_index=rule_index,
                                             condition=condition))
    spot = location(head)
    if spot is not None and spot.content is not None:  # FILE:"text of the line", FILE in shell quotes
        path_words = split(spot.path)
        if len(path_words) != 1:
            raise RelayError("invalid_request", f"Cannot read {spot.path!r} as a file.",
                             f"Usage: {BP_USAGE['content']}; quote a path with spaces.")
        return BpCommand("line", Breakpoint(id=0, kind="line", path=path_words[0], content=spot.content,
                                            condition=condition, hit_condition=clauses.get("hit") or None,
                                            log_message=clauses.get("log") or None, task=task))
    words = split(head)
    if len(words) != 1 or ":" not in words[0]:
        raise RelayError("invalid_request", f"Cannot read {head!r} as FILE:LINE.",
                         f"Usage: {BP_USAGE['line']}; quote a path with spaces.")
    spot = location(words[0])
    if spot is None or spot.line is None:
        raise RelayError("invalid_line", f"{words[0].rpartition(':')[2]!r} is not a line number.",
                         "Write FILE:LINE, e.g. app.py:12.")
    return BpCommand("line", Breakpoint(id=0, kind="line", path=spot.path, line=spot.line, condition=condition,
                                        hit_condition=clauses.get("hit") or None,
                                        log_message=clauses.get("log") or None, task=task))


def _task(clauses: dict[str, str], first: str) -> str | None:
    """The asyncio task of ``--task NAME`` (one word, or quoted), on a line breakpoint only."""
    if "--task" not in clauses:
        return None
    if first == "edit" or first == "func" or first.startswith("function:"):
        raise RelayError("invalid_request", "Only a line breakpoint takes --task.",
                         f"Usage: {BP_USAGE['line']}.", {"field": "task"})
    words = split(clauses.pop("--task"))
    if len(words) != 1 or not words[0].strip():
        raise RelayError("invalid_request", "--task needs the name of one asyncio task (quote a name with spaces).",
                         "e.g. %bp app.py:42 --task beta", {"field": "task"})
    return words[0]
