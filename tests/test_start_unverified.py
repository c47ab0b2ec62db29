"""A start whose breakpoints cannot bind says so in its answer, with the reason."""

from __future__ import annotations

import json

from conftest import line_of


def test_a_launch_in_a_kernel_says_what_it_could_not_bind_and_an_option_the_program_got(kernel, write):
    app = write("app.py", "import json\nprint(json.dumps([1]))\n")
    library = line_of(json.__file__, "def dumps(")  # the standard library: left out by just-my-code
    kernel.magic(f"%bp {json.__file__}:{library}")
    answer = kernel.magic(f"%debug_session launch {app}").text
    assert "exited with code 0" in answer
    assert "not verified: Breakpoint in file excluded by filters" in answer, answer
    strict = write("strict.py", "import argparse\nargparse.ArgumentParser().parse_args()\n")
    told = kernel.magic(f"%debug_session launch {strict} --no-just-my-code").text.splitlines()
    assert told[:2] == ["s2: exited with code 2", "  note: --no-just-my-code went to the program as its first "
                        f"argument; launch's options go before the script: launch --no-just-my-code {strict}"]


def test_the_python_api_gives_the_unbound_breakpoints_on_the_handle_and_warns(relay, write):
    import warnings

    from jupyter_debug_relay import BreakpointWarning

    app = write("app.py", "import json\nprint(json.dumps([1]))  # here\n")
    mine = relay.breakpoints.add(app, line_of(app, "# here"))
    library = relay.breakpoints.add(json.__file__, line_of(json.__file__, "def dumps("))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BreakpointWarning)
        session = relay.launch(app)
    assert [bp.id for bp in session.unverified] == [library.id]
    assert "excluded by filters" in session.unverified[0].message
    [warning] = [w for w in caught if issubclass(w.category, BreakpointWarning)]
    assert warning.filename == __file__  # it points at the caller's line, not at the relay's
    assert f"breakpoint {library.id} at" in str(warning.message) and "excluded by filters" in str(warning.message)
    assert session.wait_for_stop(10).breakpoint_ids == [mine.id]
    relay.breakpoints.remove(library.id)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BreakpointWarning)
        again = relay.launch(app)
    assert again.unverified == [] and not [w for w in caught if issubclass(w.category, BreakpointWarning)]
