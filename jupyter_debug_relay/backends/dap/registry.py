"""The debug adapters the relay knows: built-in entries plus the user's JSON file, chosen by the target's file type.

A user file (``$JUPYTER_DEBUG_RELAY_ADAPTERS``, else
``$XDG_CONFIG_HOME/jupyter_debug_relay/adapters.json``, ``~/.config`` when
unset) maps names to entries; an entry there overrides a built-in of the same
name and is tried before the built-ins::

    {"gdb": {"command": ["gdb", "-i", "dap"], "fileTypes": ["binary", ".c"],
             "launch": {"stopAtBeginningOfMainSubprogram": false}, "install": "apt-get install gdb"}}

Fields: ``command`` (argv; its program may be a name on PATH or a path),
``candidates`` (names or globs for that program, the first found wins),
``fileTypes`` (extensions, or ``binary`` for executables), ``launch`` and
``attach`` (defaults under the caller's configuration), ``adapterID``,
``envFormat`` (``dict`` or ``list`` of ``K=V``), ``install`` (how to get it).
"""

from __future__ import annotations

import fnmatch
import glob
import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from typing import Any

from ...errors import RelayError

ENV_VAR = "JUPYTER_DEBUG_RELAY_ADAPTERS"
BINARY = "binary"
EXECUTABLE_MAGIC = (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"MZ")  # ELF, Mach-O, PE

BUILTIN: dict[str, dict[str, Any]] = {
    "debugpy": {
        "command": [sys.executable, "-m", "debugpy.adapter"],
        "fileTypes": [".py", ".pyw"],
        "adapterID": "debugpy",
        "launch": {"console": "internalConsole", "justMyCode": True, "env": {"PYTHONUNBUFFERED": "1"}},
        "install": f"{sys.executable} -m pip install debugpy",
    },
    "lldb": {
        "command": ["lldb-dap"],
        "candidates": ["lldb-dap", "lldb-vscode", "lldb-dap-*", "lldb-vscode-*"],
        "fileTypes": [BINARY, ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".m", ".mm", ".rs", ".swift", ".zig"],
        "adapterID": "lldb",
        "launch": {"runInTerminal": True},  # the target on pipes here: stdout and stderr apart, stdin writable
        "envFormat": "list",
        "install": "apt-get install lldb (Debian's lldb-16 brings lldb-vscode-16), or LLVM's lldb-dap",
    },
}


@dataclass
class AdapterSpec:
    """One registry entry: how to start an adapter and what it debugs."""

    name: str
    command: list[str]
    candidates: list[str] = field(default_factory=list)
    file_types: list[str] = field(default_factory=list)
    launch: dict[str, Any] = field(default_factory=dict)
    attach: dict[str, Any] = field(default_factory=dict)
    adapter_id: str = ""
    env_format: str = "dict"
    install: str = ""
    origin: str = "built-in"

    @classmethod
    def from_json(cls, name: str, entry: Any, origin: str) -> AdapterSpec:
        if not isinstance(entry, dict):
            raise _bad_file(origin, f"the entry {name!r} is not an object")
        command = entry.get("command")
        command = [command] if isinstance(command, str) else command
        if not command or not all(isinstance(part, str) for part in command):
            raise _bad_file(origin, f"the entry {name!r} needs a command (a list of strings)")
        env_format = entry.get("envFormat", "dict")
        if env_format not in ("dict", "list"):
            raise _bad_file(origin, f"the entry {name!r} has envFormat {env_format!r}; use dict or list")
        return cls(
            name=name, command=list(command), candidates=list(entry.get("candidates") or []),
            file_types=[t.lower() for t in entry.get("fileTypes") or []], launch=dict(entry.get("launch") or {}),
            attach=dict(entry.get("attach") or {}), adapter_id=entry.get("adapterID") or name,
            env_format=env_format, install=entry.get("install") or "", origin=origin,
        )

    def find(self) -> list[str] | None:
        """The command with its program found (on PATH or as a path), or None when it is not installed."""
        for name in self.candidates or self.command[:1]:
            found = _which(name)
            if found:
                return [found, *self.command[1:]]
        return None

    def resolve(self) -> list[str]:
        """The command to run; ``connection_failed`` naming what was looked for, and how to install it."""
        found = self.find()
        if found is not None:
            return found
        looked = ", ".join(self.candidates or self.command[:1])
        raise RelayError(
            "connection_failed",
            f"The {self.name} debug adapter is not installed: no {looked} on PATH.",
            f"Install it: {self.install}." if self.install else "Install it, or give the adapter's full path.",
            {"path": self.command[0], "searched": self.candidates or self.command[:1], "adapter": self.name},
        )

    def configuration(self, request: str, given: dict[str, Any] | None, program: str | None,
                      args: list[str] | None, cwd: str | None, env: dict[str, str] | None,
                      stop_on_entry: bool) -> dict[str, Any]:
        """The launch (or attach) arguments: the entry's defaults, the common fields, then ``given`` on top."""
        config = dict(self.launch if request == "launch" else self.attach)
        if program is not None:
            config["program"] = program
        if args is not None:
            config["args"] = list(args)
        if cwd is not None:
            config["cwd"] = cwd
        if env:
            merged = {**(config.get("env") or {}), **env} if isinstance(config.get("env"), dict) else dict(env)
            config["env"] = [f"{k}={v}" for k, v in merged.items()] if self.env_format == "list" else merged
        if stop_on_entry:
            config["stopOnEntry"] = True
        config.update(given or {})
        return config


def _which(name: str) -> str | None:
    """A program by path, by name on PATH, or by glob on PATH (the highest version first)."""
    if os.sep in name:
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    if not glob.has_magic(name):
        return shutil.which(name)
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        hits = [p for p in glob.glob(os.path.join(folder, name)) if os.access(p, os.X_OK)]
        if hits:
            return max(hits, key=_version)
    return None


def _version(path: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", os.path.basename(path)))


def _bad_file(origin: str, what: str) -> RelayError:
    return RelayError("invalid_request", f"The adapter registry {origin} is not valid: {what}.",
                      "Fix the file (see the format in docs/python-api.md) or remove it.", {"path": origin})


def user_file() -> str:
    """Where the user's adapter entries live (the file need not exist)."""
    if os.environ.get(ENV_VAR):
        return os.path.expanduser(os.environ[ENV_VAR])
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return os.path.join(config_home, "jupyter_debug_relay", "adapters.json")


def load(path: str | None = None) -> list[AdapterSpec]:
    """Every adapter, the user's first (in file order), then the built-ins they do not override."""
    path = path or user_file()
    user: list[AdapterSpec] = []
    if os.path.isfile(path):
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as exc:
            raise _bad_file(path, str(exc)) from None
        if not isinstance(data, dict):
            raise _bad_file(path, "the top level is not an object of named entries")
        user = [AdapterSpec.from_json(name, entry, path) for name, entry in data.items()]
    names = {spec.name for spec in user}
    return user + [AdapterSpec.from_json(n, e, "built-in") for n, e in BUILTIN.items() if n not in names]


def file_type(program: str) -> str:
    """``binary`` for an executable file (or a name without extension), else its lower-case extension."""
    try:
        with open(program, "rb") as f:
            if f.read(4).startswith(EXECUTABLE_MAGIC):
                return BINARY
    except OSError:
        pass
    extension = os.path.splitext(program)[1].lower()
    return extension or BINARY


def named(name: str, specs: list[AdapterSpec]) -> AdapterSpec | None:
    return next((spec for spec in specs if spec.name == name), None)


def select(program: str, specs: list[AdapterSpec]) -> AdapterSpec:
    """The first installed adapter for the program's file type (the first matching one when none is installed)."""
    kind = file_type(program)
    matching = [spec for spec in specs if kind in spec.file_types]
    if not matching:
        known = "; ".join(f"{s.name}: {', '.join(s.file_types)}" for s in specs)
        raise RelayError("invalid_request", f"No debug adapter is registered for {kind} files ({program}).",
                         f"Pass adapter=[command, ...], or add an entry in {user_file()}. Known: {known}.",
                         {"path": program, "file_type": kind})
    return next((spec for spec in matching if spec.find() is not None), matching[0])


def for_command(command: list[str], specs: list[AdapterSpec]) -> AdapterSpec | None:
    """The entry whose program ``command`` runs, if any (for its install hint and defaults)."""
    program = os.path.basename(command[0])
    for spec in specs:
        patterns = [os.path.basename(p) for p in spec.candidates or spec.command[:1]]
        if any(fnmatch.fnmatch(program, p) for p in patterns):
            return spec
    return None


def plan(
    adapter: list[str] | str | None,
    host: str | None,
    port: int | None,
    launch: dict[str, Any] | None,
    attach: dict[str, Any] | None,
    program: str | None,
    args: list[str] | None,
    cwd: str | None,
    env: dict[str, str] | None,
    stop_on_entry: bool,
) -> dict[str, Any]:
    """The ``DapBackend`` options for a ``connect_dap`` call: which adapter, how to reach it, what to send."""
    if launch is not None and attach is not None:
        raise RelayError("invalid_request", "Give launch={...} or attach={...}, not both.")
    request = "attach" if attach is not None else "launch"
    given = attach if attach is not None else launch
    cwd = os.path.abspath(os.path.expanduser(cwd)) if cwd else None
    program = program or (given or {}).get("program")
    if program:
        program = os.path.abspath(os.path.join(cwd or os.getcwd(), os.path.expanduser(program)))
        if request == "launch" and not os.path.exists(program):
            raise RelayError("file_not_found", f"No such program: {program}", details={"path": program})
        if given and "program" in given:
            given = {**given, "program": program}  # adapters resolve a relative program against their own cwd
    specs = load()
    spec: AdapterSpec | None = None
    command: list[str] | None = None
    if isinstance(adapter, str):
        spec = named(adapter, specs)
        command = spec.resolve() if spec else shlex.split(adapter)
    elif adapter:
        command = list(adapter)
    elif port is not None:
        pass  # an adapter already listening there: nothing to start
    elif program:
        spec = select(program, specs)
        command = spec.resolve()
    else:
        raise RelayError("invalid_request", "connect_dap needs an adapter command or name, a port, or a program.",
                         "e.g. connect_dap(program='./a.out') or connect_dap(adapter=['lldb-dap'], launch={...}).")
    if command is not None and spec is None:
        spec = for_command(command, specs)
        found = _which(command[0])
        if found is None:
            hint = f"Install it ({spec.install}) or give its full path." if spec and spec.install else None
            raise RelayError("connection_failed", f"Cannot start the debug adapter: {command[0]!r} was not found.",
                             hint or "Install it or give its full path.", {"path": command[0]})
        command[0] = found  # a full path: lldb-vscode finds itself (for runInTerminal) by its argv[0]
    base = os.path.basename(command[0]) if command else f"the adapter at {host or '127.0.0.1'}:{port}"
    label = base if spec is None or base == spec.name else f"{spec.name} ({base})"
    spec = spec or AdapterSpec(name=base, command=command or [], adapter_id="dap")
    return dict(adapter=command, host=host or "127.0.0.1", port=port, request=request, cwd=cwd,
                config=spec.configuration(request, given, program, args, cwd, env, stop_on_entry),
                adapter_id=spec.adapter_id, name=label, target=program)
