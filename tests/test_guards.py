"""The guards compiled into a program's code (``boot/guards.py``), run here without a debugger: which lines can hold
one, what a guard tests, and that the program around it is unchanged."""

from __future__ import annotations

import ast
import builtins
import itertools
import sys
import textwrap
import types

import pytest

from jupyter_debug_relay.backends.debugpy.boot import guards

SOURCE = textwrap.dedent('''
    """The module's docstring."""
    from __future__ import annotations

    def loop(n):
        """The function's docstring."""
        total = 0
        for i in range(n):  # header
            total += i  # body
        return total

    def outer():
        k = 3
        def inner(j):
            return j + 1  # inner
        return [inner(j) for j in range(k)]

    class Shape:
        sides = 4  # class
        if sides == 4:  # if
            kind = "square"
        elif sides == 3:  # elif
            kind = "triangle"
''')


def line(marker: str) -> int:
    return next(number for number, text in enumerate(SOURCE.splitlines(), 1) if f"# {marker}" in text)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list:
    """What the guards call, each with the guard's frame's locals; the namespace a target's boot would install."""
    seen: list = []
    namespace = types.SimpleNamespace(
        on=[True] * 4, count=[itertools.count(1).__next__ for _ in range(4)],
        hit=lambda slot: seen.append(("hit", slot, dict(sys._getframe(1).f_locals))),
        log=lambda slot, message: seen.append(("log", slot, str(message))),
        failed=lambda slot, error: seen.append(("failed", slot, type(error).__name__)))
    monkeypatch.setattr(builtins, guards.NAME, namespace, raising=False)
    return seen


def run(wanted: dict) -> dict:
    tree = ast.parse(SOURCE)
    module: dict = {"__name__": "guarded"}
    exec(guards.guarded(tree, "program.py", wanted), module)  # noqa: S102 - the test's own program
    return module


def test_a_loop_header_a_docstring_and_a_future_import_cannot_hold_a_guard() -> None:
    lines = guards.compilable(ast.parse(SOURCE))
    assert {line("body"), line("inner"), line("class"), line("if"), line("elif")} <= lines
    assert line("header") not in lines  # it runs again at each pass
    assert {2, 3, 6} & lines == set()  # the module's docstring, the future import, the function's docstring


def test_a_condition_runs_in_the_frames_scope_and_calls_back_only_when_true(calls: list) -> None:
    module = run({line("body"): guards.Guard(0, "i == 3 and total == 3", None, None),
                  line("inner"): guards.Guard(1, "j == 1 and k == 3", None, None)})  # k: a closure's variable
    assert module["loop"](5) == 10 and module["outer"]() == [1, 2, 3]
    assert calls == [("hit", 0, {"n": 5, "total": 3, "i": 3}), ("hit", 1, {"j": 1, "k": 3})]


def test_the_guarded_program_keeps_its_docstrings_and_names(calls: list) -> None:
    module = run({line("body"): guards.Guard(0, "False", None, None), line("class"): guards.Guard(1, "False", None,
                                                                                                     None)})
    assert module["__doc__"] == "The module's docstring." and module["loop"].__doc__ == "The function's docstring."
    assert module["Shape"].kind == "square" and {name for name in vars(module["Shape"]) if not name.startswith("__")
                                                 } == {"sides", "kind"}


def test_a_hit_count_counts_every_pass_and_a_log_point_prints_its_message(calls: list) -> None:
    module = run({line("body"): guards.Guard(0, None, "@HIT@ % 4 == 0", "'pass %s' % (i,)")})
    module["loop"](10)
    assert calls == [("log", 0, "pass 3"), ("log", 0, "pass 7")]
    builtins.__jupyter_debug_relay__.count[0] = itertools.repeat(-1).__next__  # turned off: it counts nothing
    module["loop"](10)
    assert len(calls) == 2


def test_a_condition_that_raises_is_handed_over_and_the_program_goes_on(calls: list) -> None:
    module = run({line("body"): guards.Guard(0, "undefined_name > 1", None, None)})
    assert module["loop"](2) == 1
    assert calls == [("failed", 0, "NameError")] * 2


def test_a_guard_turned_off_costs_its_if_only(calls: list) -> None:
    module = run({line("body"): guards.Guard(0, "True", None, None)})
    builtins.__jupyter_debug_relay__.on[0] = False
    assert module["loop"](3) == 3 and calls == []


@pytest.mark.parametrize("part", ["(yield)", "(x := 1)", "await thing()"])
def test_a_condition_that_would_change_its_function_is_left_to_pydevd(part: str) -> None:
    with pytest.raises(ValueError):
        guards.check(guards.Guard(0, part, None, None))


@pytest.mark.parametrize("hit_condition", ["@HIT@ == 5", "@HIT@ >= 2", "@HIT@ % 3 == 0", "@HIT@ < 4"])
def test_pydevds_hit_counts_compile(hit_condition: str) -> None:
    guards.check(guards.Guard(0, None, hit_condition, None))


@pytest.mark.parametrize("hit_condition", ["@HIT@ == n", "print(@HIT@)", "@HIT@ == 1 == 1"])
def test_other_hit_conditions_are_left_to_pydevd(hit_condition: str) -> None:
    with pytest.raises(ValueError):
        guards.check(guards.Guard(0, None, hit_condition, None))


@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
@pytest.mark.parametrize("number", [0, 1, 2, 5, 12])
def test_a_counter_answers_a_comparison_of_the_count_as_pydevd_compares_it(op: str, number: int) -> None:
    answer = guards.counter(f"@HIT@ {op} {number}")
    assert [answer() for _ in range(12)] == [eval(f"{hits} {op} {number}") for hits in range(1, 13)]  # noqa: S307


def test_a_counter_of_a_modulo_is_the_pass_number_and_none_counts_from_one() -> None:
    for hit_condition in ("@HIT@ % 3 == 0", None):
        numbers = guards.counter(hit_condition)
        assert [numbers() for _ in range(4)] == [1, 2, 3, 4]


@pytest.mark.parametrize("hit_condition", ["@HIT@ == 3", "@HIT@ < 3"])
def test_a_hit_count_alone_stops_at_its_passes_and_a_guard_turned_off_calls_nothing(calls: list,
                                                                                   hit_condition: str) -> None:
    from jupyter_debug_relay.backends.debugpy.boot import compiled_breakpoints

    module = run({line("body"): guards.Guard(0, None, hit_condition, None)})
    builtins.__jupyter_debug_relay__.count[0] = guards.counter(hit_condition)
    module["loop"](5)
    passes = [2] if hit_condition == "@HIT@ == 3" else [0, 1]
    assert [seen[2]["i"] for seen in calls] == passes
    builtins.__jupyter_debug_relay__.count[0] = compiled_breakpoints.COUNTS_NOTHING
    module["loop"](5)
    assert len(calls) == len(passes)
