"""What importing the package and loading the extension bring into a kernel: not the relay, nor the pieces only
some sessions use.

``import jupyter_debug_relay`` and ``%load_ext jupyter_debug_relay`` (which every kernel of the ``debug-relay`` spec
does at its start) load the magics and the comm target's registration only; the Relay, with its engine, operations,
backends and servers, is imported at first use (imported at load, it took 190 to 240 ms, more than ipykernel's
own import). These tests say which modules are there, not how long they took: bench/kernel_bench.py measures that.

Every object a kernel holds is walked by each of its full garbage collections, which pause the user's code
as much as ours: cel-python (with lark and pendulum) and the WebSocket client added 7,000 objects and
about 6 ms to each full collection of a kernel that never checks a CEL condition or talks to Mycel.
"""

import json
import subprocess
import sys

from tests.kernels import Kernel

PACKAGE = "jupyter_debug_relay"
AT_IMPORT = {PACKAGE, f"{PACKAGE}.errors", f"{PACKAGE}.version"}
AT_LOAD = AT_IMPORT | {f"{PACKAGE}.kernel", f"{PACKAGE}.kernel.extension", f"{PACKAGE}.kernel.magics"}
# Third-party packages only a relay in use needs: the servers' web stack, the debugger, the models, the peers' clients.
FIRST_USE = ("starlette", "uvicorn", "mcp", "anyio", "debugpy", "pydantic", "websockets", "httpx", "ray", "celpy")
LATE = ("celpy", "lark", "pendulum", "websockets", "jupyter_debug_relay.backends.mycel.backend",
        "jupyter_debug_relay.backends.ez.backend", "httpx", "jupyter_debug_relay.remote.backend")
LIST_MODULES = "import sys\nprint(' '.join(sys.modules))"


def printed(code: str) -> str:
    """What a fresh interpreter prints running ``code``."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds once it has run ``code``."""
    return set(printed(code + "\n" + LIST_MODULES).split())


def loaded_after(code: str) -> set[str]:
    return modules_after(code) & set(LATE)


def ours(modules: set[str]) -> set[str]:
    return {name for name in modules if name == PACKAGE or name.startswith(PACKAGE + ".")}


def first_use(modules: set[str]) -> set[str]:
    return {name for name in modules if name.split(".")[0] in FIRST_USE}


def test_importing_the_package_loads_its_errors_and_version_only():
    loaded = modules_after(f"import {PACKAGE}")
    assert ours(loaded) == AT_IMPORT
    assert first_use(loaded) == set()


def test_loading_the_extension_in_a_kernel_imports_the_magics_only_and_the_relay_at_first_use(tmp_path):
    kernel = Kernel("python3", cwd=str(tmp_path))
    try:
        def modules(code: str) -> list[set[str]]:
            cell = kernel.magic(code)
            return [set(line.split()) for line in cell.streams.splitlines()]

        before, after = modules(f"import sys\n_before = ' '.join(sys.modules)\n%load_ext {PACKAGE}\n"
                                "print(_before)\nprint(' '.join(sys.modules))")
        assert ours(after) == AT_LOAD
        assert first_use(after - before) == set()
        assert kernel.magic("%bp list").text.startswith("no breakpoints")  # a magic makes the relay
        kernel.comm_open()  # and the comm target, registered at load, answers
        assert kernel.comm_data(30)[1]["type"] == "hello"
        [used] = modules(LIST_MODULES)
        assert {f"{PACKAGE}.facade.relay", f"{PACKAGE}.dapserver", f"{PACKAGE}.kernel.commands",
                f"{PACKAGE}.kernel.comm", "pydantic"} <= used
    finally:
        kernel.close()


def test_every_public_name_is_imported_at_first_use_and_the_relay_brings_the_dap_server():
    names, openers = json.loads(printed(
        f"import json\nimport {PACKAGE} as package\nfrom {PACKAGE}.operations import editors\nnames = {{}}\n"
        "for name in package.__all__:\n    names[name] = getattr(getattr(package, name), '__module__', None)\n"
        "assert set(package.__all__) <= set(dir(package)) and not hasattr(package, 'NoSuchName')\n"
        "print(json.dumps([names, len(editors.OPENERS)]))"))
    assert names["Relay"] == f"{PACKAGE}.facade.relay" and names["RelayError"] == f"{PACKAGE}.errors"
    assert names["ray_runtime_env"] == f"{PACKAGE}.backends.ray.runtime"
    assert openers == 1  # `expose` works on a Relay taken from the package, as when the package imported it all


def test_a_kernel_using_the_relay_leaves_cel_and_websockets_out():
    assert loaded_after(f"from {PACKAGE} import Relay\nfrom {PACKAGE}.kernel import comm, commands\n"
                        "Relay().close()") == set()


def test_a_cel_condition_and_a_mycel_factory_bring_them_in():
    assert loaded_after(
        "from jupyter_debug_relay.source import cel as cel_source\nfrom jupyter_debug_relay.backends import factory\n"
        "assert cel_source.check_condition('input.amount > 100')\nfactory.mycel(5.0, 'ws://127.0.0.1:1')\n"
        "factory.ez(5.0, 'p.ez', 'ez', None)"
    ) == set(LATE) - {"httpx", "jupyter_debug_relay.remote.backend"}


def test_a_remote_brings_the_http_client_in():
    assert loaded_after("from jupyter_debug_relay.remote import backend") == {"httpx",
                                                                               "jupyter_debug_relay.remote.backend"}
