"""What loading the extension brings into a kernel: not the pieces only some sessions use.

Every object a kernel holds is walked by each of its full garbage collections, which pause the user's code
as much as ours: cel-python (with lark and pendulum) and the WebSocket client added 7,000 objects and
about 6 ms to each full collection of a kernel that never checks a CEL condition or talks to Mycel.
"""

import subprocess
import sys

LATE = ("celpy", "lark", "pendulum", "websockets", "jupyter_debug_relay.backends.mycel.backend",
        "jupyter_debug_relay.backends.ez.backend", "httpx", "jupyter_debug_relay.remote.backend")


def loaded_after(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
                          capture_output=True, text=True, timeout=120, check=True)
    return set(done.stdout.split()) & set(LATE)


def test_loading_the_extension_leaves_cel_and_websockets_out():
    assert loaded_after("import jupyter_debug_relay.kernel") == set()


def test_a_cel_condition_and_a_mycel_factory_bring_them_in():
    assert loaded_after(
        "from jupyter_debug_relay.source import cel as cel_source\nfrom jupyter_debug_relay.backends import factory\n"
        "assert cel_source.check_condition('input.amount > 100')\nfactory.mycel(5.0, 'ws://127.0.0.1:1')\n"
        "factory.ez(5.0, 'p.ez', 'ez', None)"
    ) == set(LATE) - {"httpx", "jupyter_debug_relay.remote.backend"}


def test_a_remote_brings_the_http_client_in():
    assert loaded_after("from jupyter_debug_relay.remote import backend") == {"httpx",
                                                                               "jupyter_debug_relay.remote.backend"}
