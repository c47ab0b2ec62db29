"""A breakpoint's condition, hit count and log message written into the program's own code, as an ``if``.

``guarded(source, filename, wanted)`` compiles a module's source with, before the statement that starts each
wanted line, the breakpoint's test in the frame's own scope (fast locals, closures, globals)::

    if __jupyter_debug_relay__.on[K]:
        try:
            if __jupyter_debug_relay__.count[K]() or (CONDITION):
                __jupyter_debug_relay__.hit(K)          # or, for a log point: .log(K, MESSAGE)
        except Exception as __jupyter_debug_relay_error__:
            __jupyter_debug_relay__.failed(K, __jupyter_debug_relay_error__)

so a pass costs what that ``if`` costs, and only a true test calls the debugger. ``on[K]`` turns the guard off at
once for every frame, running ones too, when the breakpoint changes. The test is pydevd's: a hit count (every pass
counts) that matches, or else the condition. ``count[K]`` is ``counter(hit_condition)``: for a comparison of the
count with a number (``@HIT@ == 5``) it answers the comparison itself, pass by pass, from runs of ``False`` and
``True`` (no number made, none compared); for ``@HIT@ % 5 == 0`` it is the pass's number, compared in the guard. A
hit count alone needs no ``on[K]`` nor ``try`` (its test cannot raise): a guard turned off has a counter whose every
answer is false and matches no number, and ``hit`` and ``log`` look at ``on[K]`` themselves.
``compilable(source, line)`` says whether a line can hold a guard: the first line of a simple statement or an
``if``/``elif`` (a loop's header runs again each pass, a docstring or a ``from __future__`` must stay first). This
file runs in the target: the standard library only.
"""

import ast
import itertools
import operator

NAME = "__jupyter_debug_relay__"  # the guards' namespace, a builtin
ERROR = "__jupyter_debug_relay_error__"  # the except clause's name (unbound again after it, as Python does)
HIT = "__jupyter_debug_relay_hit__"  # stands for pydevd's @HIT@ while a hit condition is parsed
SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Delete, ast.Pass, ast.Break,
          ast.Continue, ast.Raise, ast.Assert, ast.Import, ast.ImportFrom, ast.If)
BODIES = ("body", "orelse", "finalbody")
CHANGING = (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)
ANSWERED = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}  # comparisons of the count a counter answers itself


class Guard:
    """What a guard tests and does: pydevd's ``condition``, ``hit_condition`` (with ``@HIT@``) and log
    ``expression`` (None where the breakpoint stops)."""

    __slots__ = ("slot", "condition", "hit_condition", "message")

    def __init__(self, slot, condition, hit_condition, message):  # noqa: ANN001
        self.slot, self.condition, self.hit_condition, self.message = slot, condition, hit_condition, message


def _expression(text: str) -> ast.expr:
    return ast.parse(text.strip(), mode="eval").body


def _hit_test(hit_condition: str) -> ast.expr:
    """pydevd's hit condition (``@HIT@ == 5``, ``@HIT@ >= 5``, ``@HIT@ % 5 == 0``) as a comparison of the count; a
    ValueError for any other form (pydevd would evaluate it, names and all)."""
    test = _expression(hit_condition.replace("@HIT@", HIT))
    left = test.left.left if isinstance(test, ast.Compare) and isinstance(test.left, ast.BinOp) else getattr(
        test, "left", None)
    plain_numbers = all(isinstance(c, ast.Constant) and type(c.value) is int for c in getattr(test, "comparators", ()))
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and plain_numbers
            and isinstance(left, ast.Name) and left.id == HIT
            and (test.left is left or (isinstance(test.left.op, ast.Mod) and isinstance(test.left.right, ast.Constant)
                                       and type(test.left.right.value) is int))):
        raise ValueError(f"hit condition {hit_condition!r} is not a comparison of the count with a number")
    return test


def _answered(test: ast.Compare) -> bool:
    """Whether a hit condition's comparison is ``@HIT@ OP N``, which its counter answers itself."""
    return isinstance(test.left, ast.Name) and type(test.ops[0]) in ANSWERED


def counter(hit_condition):  # noqa: ANN001, ANN201 - str or None; a callable of no argument
    """A guard's ``count[K]`` for a breakpoint's hit condition, counting from the first pass."""
    test = _hit_test(hit_condition) if hit_condition else None
    if test is None or not _answered(test):
        return itertools.count(1).__next__
    holds, number = ANSWERED[type(test.ops[0])], test.comparators[0].value
    starts = sorted({1} | {k for k in (number, number + 1) if k > 1})  # the answer changes only at these passes
    runs = [itertools.repeat(holds(starts[k], number), starts[k + 1] - starts[k]) for k in range(len(starts) - 1)]
    return itertools.chain(*runs, itertools.repeat(holds(starts[-1], number))).__next__


def check(guard: Guard) -> None:
    """Raise (SyntaxError, ValueError) if the guard's parts cannot be compiled into the program: a part that does
    not parse, or one that would change its function there (``yield`` makes a generator, ``:=`` assigns to its
    variables, ``await`` suspends it), where pydevd evaluates it apart."""
    if guard.hit_condition:
        _hit_test(guard.hit_condition)
    for text in (guard.condition, guard.message):
        if text:
            changing = [node for node in ast.walk(_expression(text)) if isinstance(node, CHANGING)]
            if changing:
                raise ValueError(f"{type(changing[0]).__name__} in {text!r} would change the function it is put in")


def _namespace(attribute: str) -> ast.expr:
    return ast.Attribute(ast.Name(NAME, ast.Load()), attribute, ast.Load())


def _call(attribute: str, *args: ast.expr) -> ast.stmt:
    return ast.Expr(ast.Call(_namespace(attribute), list(args), []))


def _handled(body: list, then: ast.stmt) -> ast.Try:
    """``try: body`` / ``except Exception as ERROR: then``."""
    return ast.Try(body=body, handlers=[ast.ExceptHandler(ast.Name("Exception", ast.Load()), ERROR, [then])],
                   orelse=[], finalbody=[])


def _statements(guard: Guard) -> list:
    slot = ast.Constant(guard.slot)
    tests = []
    if guard.hit_condition:
        count = ast.Call(ast.Subscript(_namespace("count"), slot, ast.Load()), [], [])
        hit_test = _hit_test(guard.hit_condition)
        tests.append(count if _answered(hit_test) else _Replace(HIT, count).visit(hit_test))
    if guard.condition:
        tests.append(_expression(guard.condition))
    if guard.message is None:
        action = _call("hit", slot)
    else:
        action = _handled([_call("log", slot, _expression(guard.message))],
                          _call("log", slot, ast.Name(ERROR, ast.Load())))
    test = tests[0] if len(tests) == 1 else ast.BoolOp(ast.Or(), tests)
    checked = [ast.If(test, [action], [])] if tests else [action]
    if guard.hit_condition and not guard.condition:
        return checked
    return [ast.If(ast.Subscript(_namespace("on"), slot, ast.Load()),
                   [_handled(checked, _call("failed", slot, ast.Name(ERROR, ast.Load())))], [])]


class _Replace(ast.NodeTransformer):
    """Put ``node`` where the name ``name`` is."""

    def __init__(self, name: str, node: ast.expr) -> None:
        self.name, self.node = name, node

    def visit_Name(self, found: ast.Name) -> ast.expr:  # noqa: N802 - ast's visitor name
        return self.node if found.id == self.name else found


def _at_line(node: ast.AST, line: int) -> ast.AST:
    for part in ast.walk(node):
        if "lineno" in part._attributes:
            part.lineno = part.end_lineno = line
            part.col_offset = part.end_col_offset = 0
    return node


def _places(tree: ast.Module) -> dict:
    """{line: (the statement list, the index) of the first statement that starts on it and can hold a guard}."""
    places = {}
    for node in ast.walk(tree):
        for field in BODIES:
            statements = getattr(node, field, None)
            if not isinstance(statements, list):
                continue
            for index, statement in enumerate(statements):
                if not isinstance(statement, ast.stmt) or statement.lineno in places:
                    continue
                first_doc = (index == 0 and isinstance(statement, ast.Expr)
                             and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)
                             and isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)))
                future = isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
                places[statement.lineno] = (statements, index) if (
                    isinstance(statement, SIMPLE) and not first_doc and not future) else None
    return {line: place for line, place in places.items() if place is not None}


def compilable(tree: ast.Module) -> frozenset:
    """The lines of ``tree`` (a parsed module) a guard can be put on."""
    return frozenset(_places(tree))


def guarded(tree: ast.Module, filename: str, guards: dict) -> object:
    """The module's code with ``guards`` ({line: Guard}) before the statements that start their lines (each line
    compilable in ``tree``, each guard checked); ``tree`` is changed in place."""
    places = _places(tree)
    for line in sorted(guards, reverse=True):  # from the bottom: an insertion moves no index above it
        statements, index = places[line]
        statements[index:index] = [_at_line(statement, line) for statement in _statements(guards[line])]
    return compile(tree, filename, "exec", dont_inherit=True)
