"""Every stop's text shows the source line it stopped on, through the magics (Mycel and EZ: test_kernel_backends)."""

from __future__ import annotations

from conftest import line_of

NESTED = """
def inner(x):
    y = x * 2  # inner line
    return y

def outer():
    return inner(20) + 1  # outer line

print(outer())
"""


def test_a_python_stop_its_steps_and_the_stack_show_their_lines(kernel, write):
    app = write("nested.py", NESTED)
    inner, ret, outer = line_of(app, "# inner line"), line_of(app, "return y"), line_of(app, "# outer line")
    kernel.magic(f"%bp nested.py:{inner}")
    launched = kernel.magic("%dbg launch nested.py")
    assert launched.text.splitlines()[1:] == [f"{inner} │ y = x * 2  # inner line"], launched.text
    assert f"{inner} │ y = x * 2" not in launched.html.split("</b>")[0]  # the HTML shows the line in its excerpt
    assert kernel.magic("%dbg next").text.splitlines()[1] == f"{ret} │ return y"
    assert kernel.magic("%dbg wait").text.splitlines()[1] == f"{ret} │ return y"
    assert kernel.magic("%dbg where").text.splitlines()[:4] == [
        f"→ #0 inner() at nested.py:{ret}", f"      {ret} │ return y",
        f"  #1 outer() at nested.py:{outer}", f"      {outer} │ return inner(20) + 1  # outer line"]
    assert kernel.magic("%dbg frame 1").text.splitlines()[1] == f"{outer} │ return inner(20) + 1  # outer line"
    assert kernel.magic("%dbg out").text.splitlines()[1] == f"{outer} │ return inner(20) + 1  # outer line"
    kernel.magic("%bp clear")
    assert kernel.magic("%dbg continue").text == "exited with code 0"  # an end has no line


GENERATED = '''
import linecache
src = "def f():\\n    x = 41\\n    breakpoint()\\n    return x + 1\\n"
linecache.cache["<generated>"] = (len(src), None, src.splitlines(True), "<generated>")
namespace = {}
exec(compile(src, "<generated>", "exec"), namespace)
print(namespace["f"]())
'''


def test_a_stop_in_code_with_no_file_shows_the_line_the_debugger_gives(kernel, write):
    write("gen.py", GENERATED)  # the stop's frame has no file, only a source reference debugpy answers
    stop = kernel.magic("%dbg launch --no-just-my-code gen.py").text.splitlines()
    assert stop == ["s1: paused at <generated>:4 in f() — breakpoint [thread 1]", "4 │ return x + 1"], stop
    kernel.magic("%dbg stop")
