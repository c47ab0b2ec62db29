"""A launched target sees what a plain run of it sees, on the fast path and through debugpy's adapter alike."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from jupyter_debug_relay import RelayError

SHOW = """
import json, os, signal, sys
import __main__

print(json.dumps({
    "argv": sys.argv,
    "path": sys.path,
    "cwd": os.getcwd(),
    "main": [__name__, os.path.realpath(__main__.__file__), getattr(__main__.__spec__, "name", None)],
    "environ": dict(os.environ),
    "sitecustomize": getattr(sys.modules.get("sitecustomize"), "__file__", None),
    "signals": {name: repr(signal.getsignal(getattr(signal, name))) for name in ("SIGINT", "SIGTERM", "SIGPIPE")},
    "stdio": [sys.stdin.encoding, sys.stdout.encoding, sys.stdout.errors],
}))
sys.exit(int(sys.argv[-1]))
"""
DEBUGPYS_OWN = {"DEBUGPY_RUNNING": "true", "PYDEVD_USE_FRAME_EVAL": "NO"}  # debugpy sets them in any debuggee


def stopped_at(relay, app: str, line: int, **options):  # noqa: ANN003, ANN201 - launch's options; a session
    """A launch of ``app`` stopped at the breakpoint on its ``line``."""
    relay.breakpoints.add(app, line)
    session = relay.launch(app, **options)
    assert session.wait_for_stop(30).frame.line == line
    return session


def seen_by(session) -> dict:
    with pytest.raises(RelayError):
        session.wait_for_stop(30)  # the program runs to its end
    shown = json.loads("".join(c.text for c in session.output().chunks if c.category == "stdout"))
    shown["environ"] = {k: v for k, v in shown["environ"].items() if k not in DEBUGPYS_OWN}
    return {**shown, "exit code": session.exit_code}


@pytest.mark.every_target
@pytest.mark.parametrize("subprocess_", [False, True], ids=["fast path", "debugpy adapter"])
def test_argv_path_environment_cwd_main_signals_and_exit_code_are_a_plain_runs(
        relay, write, tmp_path, monkeypatch, subprocess_, target_python):
    monkeypatch.setenv("PYTHONUNBUFFERED", "1")  # the plain run's output must not depend on the relay's default
    app = write("pkg/show.py", SHOW)
    work = tmp_path / "work"
    work.mkdir()
    args = ["two words", "--flag=x", "ü", "3"]
    plain_run = subprocess.run([target_python or sys.executable, app, *args], capture_output=True, text=True, cwd=work,
                               env=dict(os.environ))
    plain = {**json.loads(plain_run.stdout), "exit code": plain_run.returncode}
    session = relay.launch(app, args=args, cwd=str(work), subprocess=subprocess_)
    assert seen_by(session) == plain
    assert plain["exit code"] == 3 and plain["argv"][1:] == args


@pytest.mark.every_target
def test_a_module_sees_its_plain_runs_argv_path_and_main(relay, write, tmp_path, target_python):
    write("tool/__init__.py", "")
    write("tool/__main__.py", SHOW)
    plain_run = subprocess.run([target_python or sys.executable, "-m", "tool", "a", "0"], capture_output=True,
                               text=True, cwd=tmp_path, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    plain = {**json.loads(plain_run.stdout), "exit code": plain_run.returncode}
    session = relay.launch(module="tool", args=["a", "0"], cwd=str(tmp_path), env={"PYTHONUNBUFFERED": "1"})
    assert seen_by(session) == plain
    assert plain["main"][2] == "tool.__main__"


KILLED = "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n"


def test_a_target_killed_by_a_signal_ends_as_a_plain_run_does(relay, write):
    app = write("wait.py", KILLED)
    plain = subprocess.run([sys.executable, app], capture_output=True).returncode
    session = relay.launch(app)
    with pytest.raises(RelayError):
        session.wait_for_stop(30)
    assert plain == session.exit_code == -signal.SIGTERM


def test_a_program_killed_by_its_first_line_is_launched_and_ended_even_on_a_busy_machine(relay, write, busy_machine):
    """Let run by configurationDone, it can die before its pydevd sends the answer: the launch still succeeds."""
    app = write("wait.py", KILLED)
    for _ in range(12):
        session = relay.launch(app)
        with pytest.raises(RelayError):
            session.wait_for_stop(30)
        assert session.exit_code == -signal.SIGTERM


DEBUGGER_IMPORTS = """
import json, sys, threading

NAMES = ["calendar", "ctypes", "email.parser", "http.server", "importlib.metadata", "ipaddress", "mimetypes", "pickle",
         "random", "shutil", "ssl", "subprocess", "textwrap", "xml.parsers.expat", "xmlrpc.client", "xmlrpc.server"]


def use(results, i):
    import calendar, ctypes, email.parser, http.server, importlib.metadata, ipaddress, mimetypes, pickle, random
    import shutil, ssl, subprocess, textwrap, xmlrpc.client, xmlrpc.server
    from xml.parsers import expat
    results[i] = [ssl.PROTOCOL_TLS_CLIENT.name, email.parser.Parser().parsestr("A: b\\n\\n")["A"],
                  pickle.loads(pickle.dumps(i)), subprocess.list2cmdline(["a b", "c"]), calendar.isleap(2024),
                  str(ipaddress.ip_address("127.0.0.1")), mimetypes.guess_type("x.html")[0],
                  random.Random(i).random(), textwrap.shorten("one two three", 9), shutil.which("sh") is not None,
                  importlib.metadata.PackageNotFoundError.__name__, expat.ParserCreate() is not None,
                  xmlrpc.client.loads(xmlrpc.client.dumps((i,)))[0][0], http.server.BaseHTTPRequestHandler.__name__,
                  xmlrpc.server.SimpleXMLRPCDispatcher().system_listMethods(), ctypes.sizeof(ctypes.c_int32)]


results = {}
threads = [threading.Thread(target=use, args=(results, i)) for i in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps({"results": [results[i] for i in range(8)],
                  "modules": {name: type(sys.modules[name]).__name__ for name in NAMES}}))
"""


@pytest.mark.every_target
def test_the_boot_runs_from_bytecode_python_keeps_where_it_may(relay, write):
    app = write("kept.py", "x = 1\nprint(x)\n")
    session = stopped_at(relay, app, 2, env={"PYTHONDONTWRITEBYTECODE": ""})  # empty: bytecode is kept, as by default
    boot = "__import__('sys').modules['_jupyter_debug_relay_boot']"
    cached = session.evaluate(f"{boot}.__cached__").value.strip("'")
    assert cached.endswith(".pyc") and os.path.exists(cached)  # loaded as a module, not compiled as a script
    assert session.evaluate(f"{boot}.__file__").value.strip("'").endswith("_nodelay_boot.py")
    session.continue_()
    assert session.exit_code == 0


COLLECTED = """
import gc, json, weakref


class Node:
    pass


made = Node()
first = Node()
first.other = Node()
first.other.other = first  # a cycle: only the collector frees it
gone = weakref.ref(first)
del first
found = gc.collect()
listed = any(o is made for o in gc.get_objects())
print(json.dumps({"cycle freed": gone() is None, "found": found >= 2, "listed": listed,
                  "set aside": gc.get_freeze_count() > 0}))
"""


@pytest.mark.every_target
def test_the_programs_own_objects_are_collected_and_listed_while_the_debuggers_are_set_aside(relay, write):
    app = write("collected.py", COLLECTED)
    session = relay.launch(app)
    with pytest.raises(RelayError):
        session.wait_for_stop(30)
    shown = json.loads("".join(c.text for c in session.output().chunks if c.category == "stdout"))
    assert shown == {"cycle freed": True, "found": True, "listed": True, "set aside": True}


@pytest.mark.every_target
def test_modules_the_debugger_imported_unrun_work_when_the_programs_threads_first_use_them(
        relay, write, target_python):
    app = write("imports.py", DEBUGGER_IMPORTS)
    plain_run = subprocess.run([target_python or sys.executable, app], capture_output=True, text=True, check=True)
    session = relay.launch(app)
    with pytest.raises(RelayError):
        session.wait_for_stop(60)
    shown = "".join(c.text for c in session.output().chunks if c.category == "stdout")
    assert json.loads(shown) == json.loads(plain_run.stdout)
    assert set(json.loads(shown)["modules"].values()) == {"module"}
    assert session.exit_code == 0


@pytest.mark.every_target
def test_the_debuggers_own_names_for_the_modules_it_left_unrun_are_the_real_ones_at_their_first_use(relay, write):
    app = write("names.py", "import sys\n"
                            "ran = [n for n in ('http.client', 'pydoc', 'socketserver') if n in sys.modules]\n"
                            "print(ran)\n")
    session = stopped_at(relay, app, 3)
    assert session.evaluate("ran").value == "[]"  # what only the XML-RPC modules import was never imported
    console = "__import__('_pydev_bundle.pydev_imports', fromlist=['_']).SimpleXMLRPCServer"
    assert session.evaluate(f"{console}.__module__, {console}.__name__").value == "('xmlrpc.server', " \
                                                                                   "'SimpleXMLRPCServer')"
    saved = "__import__('_pydev_bundle._pydev_saved_modules', fromlist=['_'])"
    assert session.evaluate(f"{saved}.xmlrpclib.ServerProxy.__name__").value == "'ServerProxy'"
    session.continue_()
    assert session.exit_code == 0


@pytest.mark.every_target
def test_the_debuggers_analysis_for_a_step_into_a_chosen_call_is_imported_at_its_first_use(relay, write):
    app = write("analysis.py", "x = 1\nprint(x)\n")
    session = stopped_at(relay, app, 2)
    modules = "__import__('sys').modules"
    assert session.evaluate(f"'_pydevd_frame_eval.vendored.bytecode' in {modules}").value == "False"
    tracer = f"{modules}['_pydevd_bundle.pydevd_cython']"  # pydevd's compiled tracer imported one function by name
    assert session.evaluate(f"{tracer}.get_smart_step_into_variant_from_frame_offset(0, []) is None").value == "True"
    comm = f"{modules}['_pydevd_bundle.pydevd_comm']"  # and pydevd's commands, the module
    assert session.evaluate(f"{comm}.pydevd_bytecode_utils.calculate_smart_step_into_variants.__module__").value \
        == "'_pydevd_bundle.pydevd_bytecode_utils'"
    assert session.evaluate(f"type({modules}['_pydevd_bundle.pydevd_bytecode_utils']).__name__").value == "'module'"
    session.continue_()
    assert session.exit_code == 0


@pytest.mark.every_target
def test_debugpys_own_log_still_tells_how_the_program_exited_when_the_user_turns_it_on(relay, write, tmp_path):
    app = write("ends.py", "import sys\nsys.exit(3)\n")
    session = relay.launch(app, env={"DEBUGPY_LOG_DIR": str(tmp_path)})
    with pytest.raises(RelayError):
        session.wait_for_stop(30)  # the program runs to its end
    assert session.exit_code == 3
    [log] = tmp_path.glob("debugpy.server-*.log")
    told = log.read_text()
    assert "Debuggee exited via SystemExit: 3" in told and "Stack where logged" in told


DJANGO_USER = """
import sys
print("before:", "django" in sys.modules)
import django
plugin = sys.modules["pydevd_plugins.django_debug"]
print("after:", django.VERSION[:2], plugin.IS_DJANGO19_OR_HIGHER, plugin.IS_DJANGO18)
"""


@pytest.mark.every_target
def test_the_program_imports_django_itself_while_the_debuggers_django_support_knows_its_version(
        relay, write, tmp_path):
    installed = tmp_path / "site"
    (installed / "django").mkdir(parents=True)
    (installed / "django" / "__init__.py").write_text(
        'VERSION = (4, 2, 16, "final", 0)\n\nprint("django runs")\n')
    app = write("uses_django.py", DJANGO_USER)
    session = relay.launch(app, env={"PYTHONPATH": str(installed)})
    with pytest.raises(RelayError):
        session.wait_for_stop(30)  # the program runs to its end
    shown = "".join(c.text for c in session.output().chunks if c.category == "stdout")
    assert shown == "before: False\ndjango runs\nafter: (4, 2) True False\n"
    assert session.exit_code == 0


def test_djangos_version_is_read_from_its_file_only_where_the_file_writes_it_out(tmp_path):
    from jupyter_debug_relay.backends.debugpy.boot.deferred_imports import django_version

    written, computed = tmp_path / "written.py", tmp_path / "computed.py"
    written.write_text('"""Django."""\nVERSION = (5, 1, 0, "alpha", 0)\n')
    computed.write_text("VERSION = tuple(range(3))\n")
    assert django_version(str(written)) == (5, 1, 0, "alpha", 0)
    assert django_version(str(computed)) is None  # the plugin then imports Django, as pydevd does
    assert django_version(str(tmp_path / "missing.py")) is None


@pytest.mark.every_target
def test_a_step_into_a_library_call_that_first_runs_a_module_the_debugger_left_unrun_lands_in_the_program(
        relay, write):
    app = write("headers.py", "import http.client, io\n"
                              "headers = http.client.parse_headers(io.BytesIO(b'Name: value\\r\\n\\r\\n'))\n"
                              "print(headers['Name'])\n")
    session = stopped_at(relay, app, 2)
    stop = session.step_in()
    assert (stop.frame.path, stop.frame.line) == (app, 3)
    session.continue_()
    assert "value" in session.output().text
