"""A start whose breakpoints cannot bind says so in its answer, with the reason."""

from __future__ import annotations

import json

from conftest import line_of


def test_a_launch_answers_the_breakpoints_it_could_not_bind(kernel, write):
    app = write("app.py", "import json\nprint(json.dumps([1]))\n")
    library = line_of(json.__file__, "def dumps(")  # the standard library: left out by just-my-code
    kernel.magic(f"%bp {json.__file__}:{library}")
    answer = kernel.magic(f"%debug_session launch {app}").text
    assert "exited with code 0" in answer
    assert "not verified: Breakpoint in file excluded by filters" in answer, answer
