"""`%debug_session watch` in a real kernel: the values show under every stop's text."""

from __future__ import annotations

from tests.conftest import line_of

APP = """
count = 0
for n in range(3):
    count += n  # add
print("count", count)
"""


def test_watch_values_show_under_every_stop(kernel, write):
    app = write("app.py", APP)
    kernel.magic(f"%bp app.py:{line_of(app, '# add')}")
    kernel.magic("%debug_session create --name w")
    assert kernel.magic("%debug_session watch count + 100").text == "watch 1: count + 100"
    kernel.magic("%debug_session watch nope")
    launched = kernel.magic("%debug_session launch --name w2 app.py").text
    assert "watch" not in launched  # the watches belong to session w
    kernel.magic("%debug_session stop")
    kernel.magic("%debug_session use w")
    kernel.magic("%debug_session watch count + 100")
    assert kernel.magic("%debug_session watch list").text.splitlines()[0] == "watch 1: count + 100"
    kernel.run("from jupyter_debug_relay.kernel.extension import load\nrelay = load(get_ipython()).relay\n"
               f"relay.operations.call('launch', {{'program': {app!r}, 'session': 'w'}})")
    stop = kernel.magic("%debug_session wait").text
    assert stop.splitlines()[-2] == "  watch 1: count + 100 = 100", stop
    assert stop.splitlines()[-1].startswith("  watch 2: nope = <") and "NameError" in stop, stop
    stepped = kernel.magic("%debug_session continue").text
    assert "  watch 1: count + 100 = 100" in stepped.splitlines()  # n == 1: count is still 0 + 0
    stepped = kernel.magic("%debug_session continue").text
    assert "  watch 1: count + 100 = 101" in stepped.splitlines()
    assert kernel.magic("%debug_session watch rm 2").text == "watch 1: count + 100 = 101"
    assert "takes one watch number" in kernel.magic("%debug_session watch rm x").text
    kernel.magic("%debug_session stop")
