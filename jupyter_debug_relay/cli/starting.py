"""``launch`` and ``attach`` from a terminal: the start runs in a relay server (``serve``) found by its token file in
the Jupyter runtime dir, or started in the background when none runs; the other commands then reach the session
through the session store, as any other.

A server counts when it records into this CLI's home (its token file says where): the sessions it starts are the
ones ``next``, ``inspect`` and ``bp`` find. One started here listens on 127.0.0.1 only, in a process group of its
own, and its token is only in its token file (never on a command line).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import RelayError, answer_data
from ..operations import OPERATIONS, parse
from ..operations.params import StartOptions
from ..operations.spelling import flag, script
from ..store.recording import Home
from ..transports import procfs
from .operations import REQUEST_TIMEOUT, Verb, add_fields, fields_of, local_place, show
from .recordings import SESSION, attach_session
from .render import Printer

START_VERBS = (Verb("launch", "launch", hidden=("program", "module", "args", "on")),
               Verb("attach", "attach", hidden=("host", "port", "on")))
HERE = {"cwd": "The target's working directory; default: the folder you type in.",
        "python": "The Python interpreter for the target (a path, or a name on this PATH); default: the server's."}
TOKEN_FILE = re.compile(r"jupyter-debug-relay-\d+-\d+\.json")  # a serve's, PID-PORT (a DAP server's reads -dap-)
STARTUP = 30.0  # seconds a server started here has to answer
STOPPING = 15.0  # seconds it has to end once told to
DESCRIPTION = ("The start runs in the relay server (jupyter-debug-relay serve) that records into this home, found by "
               "its token file in the Jupyter runtime dir; when none runs, one is started in the background on "
               "127.0.0.1 and the command says where its token file is and how to stop it. Then next, continue, "
               "inspect, eval and bp act on the new session (it is the current one).")


def register(verbs: Any) -> None:
    """Add ``launch`` and ``attach`` (which, given a SESSION instead, is the session store's prompt)."""
    for verb in START_VERBS:
        op = OPERATIONS[verb.operation]
        said = op.summary[0].lower() + op.summary[1:].rstrip(".")
        if verb.word == "launch":
            parser = verbs.add_parser("launch", help=f"{said}, in a relay server (started in the background when none "
                                      "runs); prints where it stopped", description=DESCRIPTION)
        else:
            parser = verbs.add_parser("attach", help=f"{said} (HOST:PORT or --pid), as launch does; or, given a "
                                      "SESSION, watch it and send it commands at a prompt", description=DESCRIPTION)
            parser.add_argument("session", nargs="?", metavar="HOST:PORT|SESSION",
                                help=f"where debugpy listens (python -m debugpy --listen PORT ...); or {SESSION}")
        add_fields(parser, verb)
        add_fields(parser, verb, StartOptions)
        for action in parser._actions:  # what the terminal's start does where the operation says "the kernel's"
            action.help = HERE.get(action.dest, action.help)
        parser.add_argument("--break", dest="breaks", action="append", default=[], metavar="FILE:LINE",
                            help='a breakpoint of this session only (repeatable); FILE:"TEXT" is the line holding '
                            "TEXT")
        parser.add_argument("--json", action="store_true", help="print the answer as JSON")
        if verb.word == "launch":  # argparse shows a remainder as "...": the usage says what it takes
            parser.usage = parser.format_usage().removeprefix("usage: ").rstrip() + " (PROGRAM | -m MODULE) [ARGS...]"
            parser.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE [ARGS...]",
                                help="run a module as python -m does, instead of a PROGRAM")
            parser.add_argument("program", nargs=argparse.REMAINDER, metavar="PROGRAM [ARGS...]",
                                help="the script, then its own arguments (launch's options go before it)")
        parser.set_defaults(run=lambda o, v=verb: _start(o, v))


def _start(options: argparse.Namespace, verb: Verb) -> int:
    """Run the start in the server found or started here; print its answer (attach SESSION: the prompt)."""
    args, waiting = fields_of(options, verb), fields_of(options, verb, StartOptions)
    if verb.operation == "attach" and options.pid is None and ":" not in (options.session or ""):
        fields = {**OPERATIONS["attach"].params.model_fields, **StartOptions.model_fields}
        given = [flag(name, fields[name].default is True) for name in (*args, *waiting)]
        given += ["--break"] * bool(options.breaks) + ["--json"] * options.json
        if given:
            raise RelayError("invalid_request", f"{given[0]} is for attaching to a process, by HOST:PORT or --pid; "
                             f"attach {options.session or 'SESSION'} watches a session.",
                             "e.g. jupyter-debug-relay attach 127.0.0.1:5678, or attach --pid PID.")
        return attach_session(options)
    from ..server.routes import start_options  # here: the other commands need no part of the server

    args.update(_launched(options, args) if verb.operation == "launch" else _attached(options, args))
    _, params = parse(verb.operation, args)  # refused here, before a server is started for it
    wait = start_options(verb.operation, waiting)
    home = Home().root
    server = running(home)
    started = server is None
    if server is None:
        server = start_server(home)
    try:
        result = run_start(server, verb.operation, args, options.breaks, wait,
                           OPERATIONS[verb.operation].budget(params, REQUEST_TIMEOUT))
    except BaseException as exc:
        if started:  # nothing left running after a failed first start (or Ctrl-C)
            server.stop()
        if isinstance(exc, KeyboardInterrupt):
            return 130
        raise
    if started:
        print(f"started a relay server in the background (pid {server.pid}) at {server.url}, recording into {home}\n"
              f"its token is in {server.token_file}; stop it with `kill {server.pid}` (its sessions end with it)",
              file=sys.stderr, flush=True)
    show(Printer(options.json), verb.operation, result)
    return 0


def _launched(options: argparse.Namespace, args: dict[str, Any]) -> dict[str, Any]:
    """The script (or module) and its arguments, with the paths made absolute here: the server runs elsewhere."""
    words = (options.module or []) + options.program
    if not words:
        raise RelayError("invalid_request", "launch needs a PROGRAM (or -m MODULE).",
                         "e.g. jupyter-debug-relay launch --break app.py:12 app.py ARGS...")
    if words[0].startswith("-"):
        raise RelayError("invalid_request", f"launch has no option {words[0]}.",
                         "See jupyter-debug-relay launch --help; launch's options go before the program.")
    fields = script(words, options.module is not None)
    if "program" in fields:
        fields["program"] = os.path.abspath(os.path.expanduser(fields["program"]))
    fields["cwd"] = os.path.abspath(os.path.expanduser(args.get("cwd") or "."))  # where it runs: here, as python's
    if args.get("python"):  # a name found on this PATH, a path made absolute
        found = shutil.which(os.path.expanduser(args["python"]))
        fields["python"] = os.path.abspath(found) if found else args["python"]
    return fields


def _attached(options: argparse.Namespace, args: dict[str, Any]) -> dict[str, Any]:
    """``host`` and ``port`` from HOST:PORT (none with --pid alone), and the local folders of ``--path-mappings``
    made absolute here."""
    fields: dict[str, Any] = {}
    if args.get("path_mappings"):
        fields["path_mappings"] = {remote: os.path.abspath(os.path.expanduser(local))
                                   for remote, local in args["path_mappings"].items()}
    if options.session is None:
        return fields
    host, _, port = options.session.rpartition(":")
    if not host or not port.isdigit():
        raise RelayError("invalid_request", f"{options.session!r} is not HOST:PORT.",
                         "e.g. jupyter-debug-relay attach 127.0.0.1:5678, where python -m debugpy --listen "
                         "127.0.0.1:5678 app.py listens.")
    return {**fields, "host": host.strip("[]"), "port": int(port)}


def run_start(server: Server, operation: str, args: dict[str, Any], breaks: list[str], wait: StartOptions,
              budget: float) -> dict[str, Any]:
    """``operation`` (launch or attach) in a new session of ``server``, with ``breaks`` (its own breakpoints), waiting
    as ``wait`` says; the answer, or the error (the session made for it removed)."""
    session = server.call("create", {})["session"]["id"]
    try:
        for place in breaks:
            server.call("add_breakpoint", {"session": session, "path": local_place(place)})
        return server.call(operation, {**args, **wait.model_dump(), "session": session}, budget + wait.timeout)
    except BaseException:
        with contextlib.suppress(RelayError):
            server.call("delete", {"session": session})
        raise


# -- the server ---------------------------------------------------------------------------------------

@dataclass
class Server:
    """A relay server of this user: its URL and token (from its token file), and its process when started here."""

    url: str
    token: str = field(repr=False)
    token_file: str
    pid: int
    process: subprocess.Popen[bytes] | None = None

    def request(self, method: str, path: str, args: dict[str, Any] | None = None,
                timeout: float = REQUEST_TIMEOUT) -> Any:
        """The server's JSON answer; its error as the same ``RelayError``."""
        import httpx

        body = {"params": args} if method in ("GET", "DELETE") else {"json": args or {}}
        try:
            response = httpx.request(method, self.url + path, headers={"Authorization": f"Bearer {self.token}"},
                                     timeout=timeout + 5.0, trust_env=False, **body)
        except httpx.HTTPError as exc:
            raise RelayError("connection_failed", f"Cannot reach the relay server at {self.url}: "
                             f"{type(exc).__name__}{': ' + str(exc) if str(exc) else ''}.",
                             f"Check that it still runs (pid {self.pid}); its token file is {self.token_file}.") \
                from None
        return answer_data(response, self.url, f"Check that pid {self.pid} is a jupyter-debug-relay server.")

    def call(self, operation: str, args: dict[str, Any], timeout: float = REQUEST_TIMEOUT) -> Any:
        """Run ``operation`` at its HTTP endpoint (of those it has, the one whose path takes the most of ``args``)."""
        from ..server.routes import ROUTES

        route = max((r for r in ROUTES if r.op_name == operation and set(r.path_fields) <= set(args)),
                    key=lambda r: len(r.path_fields))
        path = route.path.format(**{name: quote(str(args[name]), safe="") for name in route.path_fields})
        rest = {name: value for name, value in args.items() if name not in route.path_fields}
        return self.request(route.method, path, rest, timeout)

    def answers(self) -> bool:
        """Whether it serves the relay's API and takes the token (a token file can outlive its server)."""
        try:
            return self.request("GET", "/info", timeout=5.0).get("name") == "jupyter_debug_relay"
        except RelayError:
            return False

    def stop(self) -> None:
        """End the server if it was started here."""
        if self.process is not None:
            _end(self.process)


def _runtime_dir() -> Path:
    """The Jupyter runtime dir, where servers write their token files."""
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir())


def _read(path: Path) -> tuple[Server, str | None] | None:
    """The server a token file names and the home it records into; None for a file that is not one, or is gone."""
    try:
        data = json.loads(path.read_text())
        return Server(data["url"], data["token"], str(path), int(data["pid"])), data.get("home")
    except (OSError, ValueError, KeyError, TypeError):
        return None


def running(home: Path) -> Server | None:
    """The newest relay server of this user that records into ``home`` and answers; None when there is none."""
    found = []
    for path in _runtime_dir().glob("jupyter-debug-relay-*.json"):
        read = _read(path) if TOKEN_FILE.fullmatch(path.name) else None
        if read is not None and read[1] and os.path.realpath(read[1]) == os.path.realpath(home) \
                and procfs.alive(read[0].pid):
            with contextlib.suppress(OSError):
                found.append((path.stat().st_mtime, read[0]))
    return next((server for _, server in sorted(found, key=lambda f: -f[0]) if server.answers()), None)


def start_server(home: Path) -> Server:
    """``serve`` on a free port of 127.0.0.1, in the background: a process group of its own, its output in
    ``serve.log`` in the home, a random token in its token file; once it answers."""
    from ..server.runner import TOKEN_ENV

    env = {name: value for name, value in os.environ.items() if name != TOKEN_ENV}  # so it makes one, in its file
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    log = home / "serve.log"
    with open(log, "ab", opener=lambda path, flags: os.open(path, flags, 0o600)) as out:  # the home's files: 0600
        process = subprocess.Popen([sys.executable, "-m", "jupyter_debug_relay.cli", "serve", "--host", "127.0.0.1",
                                    "--port", "0"], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                   cwd=home, env=env, start_new_session=True)
    deadline = time.monotonic() + STARTUP
    while True:
        for path in _runtime_dir().glob(f"jupyter-debug-relay-{process.pid}-*.json"):
            read = _read(path)
            if read is not None and read[0].answers():
                read[0].process = process
                return read[0]
        if process.poll() is not None:
            said = log.read_text(errors="replace").strip().splitlines()
            raise RelayError("connection_failed", f"The relay server started in the background exited with status "
                             f"{process.returncode} before it served" + (f": {said[-1]}" if said else "."),
                             f"See {log}; `jupyter-debug-relay serve --port 0` shows the same in a terminal.")
        if time.monotonic() > deadline:
            _end(process)
            raise RelayError("timeout", f"The relay server started in the background did not answer within "
                             f"{STARTUP:g} s.", f"See {log}; the machine may be busy: try again.")
        time.sleep(0.05)


def _end(process: subprocess.Popen[bytes]) -> None:
    """End a server started here: SIGTERM (it reaps its targets and removes its token file), else its group killed."""
    process.terminate()
    try:
        process.wait(STOPPING)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(STOPPING)
