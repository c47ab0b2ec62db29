"""Runs in the target, never in the kernel: a recorded function compiled again from its file, keeping each line.

``recompiled(codes)`` reads the file each code object came from, checks that the file still compiles to that very
code, and compiles it again with, in each recorded function, a record after each statement: a tuple appended to
the recorder's ring, holding the values the statement stored (and those it may have changed in place), and
nothing else runs. So a recorded line costs an append, not a debugger's callback. The records carry no line
number of their own (``lineno = -1``: Python gives them the line before), so no debugger sees a new line event
and steps, breakpoints and the line table are the function's own. Where a value is not of a type that never
changes (a list, an object), the record keeps its bounded repr (``KEEP``) at once.

A *site* is one place of a record in the code: ``(code index, kind, line, names, gone)``; the record is
``(sequence number, call number, site, *values of names)``. Kinds: ``entry`` (the call's arguments), ``line`` (the
line ran: the values after it), ``return`` (also the returned value, last), ``end`` (the body ran to its end).
Standard library only.
"""

import ast
import linecache
import types

APPEND = "__jupyter_debug_relay_record__"  # builtins: the ring's append
SEQUENCE = "__jupyter_debug_relay_sequence__"  # builtins: the next record's number
CALLS = "__jupyter_debug_relay_calls__"  # builtins: the next call's number
KEEP = "__jupyter_debug_relay_keep__"  # builtins: a value's bounded repr, kept now
RETURNED = "__jupyter_debug_relay_returned__"  # builtins: records a return and gives its value back
FIXED = "__jupyter_debug_relay_fixed__"  # builtins: the types whose values never change (kept as they are)
TYPE = "__jupyter_debug_relay_type__"  # builtins: ``type`` (a program may shadow the name)
CALL = "__jupyter_debug_relay_call__"  # the local holding this call's number
GUARDS = "__jupyter_debug_relay__"  # what a breakpoint's guard, compiled in by the boot, reads: not the program's
NO_LINE = -1  # where the compiler gives an instruction the line before it: no new line event
SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.Pass, ast.Import, ast.ImportFrom,
          ast.Assert, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
BEFORE = (ast.If, ast.Raise, ast.Break, ast.Continue, getattr(ast, "Match", ast.If))  # recorded as they start
IN_PLACE = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom)  # other code runs: a loaded value may change in place
NESTED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.FunctionDef,
          ast.AsyncFunctionDef, ast.ClassDef)


class Unfit(Exception):
    """This code cannot be recorded by compiling it again (the reason is the message)."""


def _on_line(node: ast.AST, line: int = NO_LINE) -> ast.AST:
    for part in ast.walk(node):
        if "lineno" in part._attributes:
            part.lineno = part.end_lineno = line
            part.col_offset = part.end_col_offset = 0
    return node


def _name(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _call(function: str, *args: ast.expr) -> ast.Call:
    return ast.Call(_name(function), list(args), [])


def _value(name: str) -> ast.expr:
    """``name if type(name) in FIXED else KEEP(name)``."""
    test = ast.Compare(_call(TYPE, _name(name)), [ast.In()], [_name(FIXED)])
    return ast.IfExp(test, _name(name), _call(KEEP, _name(name)))


def _record(site: int, names, line: int = NO_LINE) -> ast.stmt:  # noqa: ANN001
    row = ast.Tuple([_call(SEQUENCE), _name(CALL), ast.Constant(site), *(_value(n) for n in names)], ast.Load())
    return _on_line(ast.Expr(_call(APPEND, row)), line)


def _targets(node: ast.AST) -> list:
    """The plain names an assignment target binds (unpacking included)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [name for element in node.elts for name in _targets(element)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return []


def _certain(node: ast.AST):
    """The nodes of ``node`` that surely ran once it completed: not the later operands of ``and``/``or``, nor the
    branches of ``x if c else y``, nor nested scopes."""
    yield node
    if isinstance(node, ast.BoolOp):
        yield from _certain(node.values[0])
        return
    if isinstance(node, ast.IfExp):
        yield from _certain(node.test)
        return
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, NESTED):
            yield from _certain(child)


class _Function:
    """The sites of one recorded function, and its body with the records put in."""

    def __init__(self, index: int, code: types.CodeType, span, sites: list, lines: bool) -> None:  # noqa: ANN001
        self.index, self.code, self.span, self.sites = index, code, span, sites
        self.lines = lines  # a record after a statement on that statement's line (else on none)
        self.locals = set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)

    def site(self, kind: str, line: int, names=(), gone=()) -> int:  # noqa: ANN001
        self.sites.append((self.index, kind, line, tuple(names), tuple(gone)))
        return len(self.sites) - 1

    def recorded(self, line: int) -> bool:
        return self.span is None or self.span[0] <= line <= self.span[1]

    def body(self, node: ast.AST) -> list:
        """The function's body with a record of the call's arguments first (after a docstring)."""
        code = self.code
        count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
        arguments = code.co_varnames[:count]
        statements = list(node.body)
        docstring = []
        if statements and isinstance(statements[0], ast.Expr) and isinstance(statements[0].value, ast.Constant) \
                and isinstance(statements[0].value.value, str):
            docstring = [statements.pop(0)]
        first = statements[0].lineno if statements else NO_LINE  # the call's first line event is that line's
        start = _on_line(ast.Assign([ast.Name(CALL, ast.Store())], _call(CALLS)), first)
        entry = _record(self.site("entry", node.lineno, arguments), arguments, first)
        end_line = (statements or docstring or [node])[-1].lineno
        end = _on_line(ast.Expr(_call(RETURNED, _name(CALL), ast.Constant(self.site("end", end_line)),
                                      ast.Constant(None))), end_line if self.lines else NO_LINE)
        return docstring + [start, entry] + self.block(statements) + [end]

    def block(self, statements: list) -> list:
        made = []
        for statement in statements:
            made.extend(self.statement(statement))
        return made

    def statement(self, node: ast.stmt) -> list:
        line = node.lineno
        if isinstance(node, ast.If) and any(isinstance(n, ast.Name) and n.id == GUARDS for n in ast.walk(node.test)):
            return [node]  # a breakpoint's guard: the line's record is its statement's
        if not self.recorded(line):
            self.inner(node, line, False)
            return [node]
        if isinstance(node, ast.Return):
            site = ast.Constant(self.site("return", line))
            if node.value is None:  # also an async generator's: it may not return a value
                return [_on_line(ast.Expr(_call(RETURNED, _name(CALL), site, ast.Constant(None))), line), node]
            node.value = ast.copy_location(_call(RETURNED, _name(CALL), site, node.value), node.value)
            return [node]
        if isinstance(node, BEFORE):
            stores = [n.target.id for n in _certain(getattr(node, "test", node)) if isinstance(n, ast.NamedExpr)]
            before = _record(self.site("line", line), (), line)
            self.inner(node, line, True, stores)
            return [before, node]
        if isinstance(node, SIMPLE):
            stores, gone = self.stored(node)
            watched = [] if isinstance(node, (ast.Import, ast.ImportFrom)) else self.watched(node, stores)
            names = stores + watched
            return [node, _record(self.site("line", line, names, gone), names, line if self.lines else NO_LINE)]
        self.inner(node, line, True)  # for, while, with, try: their bodies are recorded
        return [node]

    def inner(self, node: ast.stmt, line: int, recorded: bool, stores=()) -> None:  # noqa: ANN001
        """Records in a compound statement's bodies: at the start of a loop's or a ``with``'s body (its header ran
        and stored its targets), of a handler (its name), of a ``case`` (its captures)."""
        header = []
        if isinstance(node, (ast.For, ast.AsyncFor)):
            header = _targets(node.target)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            header = [name for item in node.items if item.optional_vars for name in _targets(item.optional_vars)]
        elif isinstance(node, ast.While):
            header = [n.target.id for n in _certain(node.test) if isinstance(n, ast.NamedExpr)]
        elif isinstance(node, ast.If):
            header = list(stores)
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if not statements:
                continue
            made = self.block(statements)
            if recorded and field == "body" and isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.With,
                                                                  ast.AsyncWith)):
                made.insert(0, _record(self.site("line", line, header), header, line))
            elif recorded and field == "body" and isinstance(node, ast.If) and header:
                made.insert(0, _record(self.site("line", line, header), header, line))
            elif recorded and field == "orelse" and isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                ended = header if isinstance(node, ast.While) else []  # the header's last pass: the loop is done
                made.insert(0, _record(self.site("line", line, ended), ended, line))
            setattr(node, field, made)
        if recorded and isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and not node.orelse:
            ended = header if isinstance(node, ast.While) else []
            node.orelse = [_record(self.site("line", line, ended), ended, line)]
        for handler in getattr(node, "handlers", ()):
            handler.body = self.block(handler.body)
            if handler.name and self.recorded(handler.lineno):
                handler.body.insert(0, _record(self.site("line", handler.lineno, [handler.name]), [handler.name],
                                               handler.lineno))
        for case in getattr(node, "cases", ()):
            case.body = self.block(case.body)
            captured = [n.name for n in ast.walk(case.pattern) if isinstance(n, (ast.MatchAs, ast.MatchStar))
                        and n.name] + [n.rest for n in ast.walk(case.pattern) if isinstance(n, ast.MatchMapping)
                                       and n.rest]
            if captured and self.recorded(case.pattern.lineno):
                case.body.insert(0, _record(self.site("line", case.pattern.lineno, captured), captured,
                                            case.pattern.lineno))

    def stored(self, node: ast.stmt) -> tuple:
        """(names the statement binds, names it deletes)."""
        names: list = []
        gone: list = []
        if isinstance(node, ast.Assign):
            names = [name for target in node.targets for name in _targets(target)]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            names = _targets(node.target) if getattr(node, "value", None) is not None else []
        elif isinstance(node, ast.Delete):
            gone = [name for target in node.targets for name in _targets(target)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [alias.asname or alias.name.split(".")[0] for alias in node.names if alias.name != "*"]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names += [n.target.id for n in _certain(node) if isinstance(n, ast.NamedExpr)]
        return list(dict.fromkeys(names)), list(dict.fromkeys(gone))

    def watched(self, node: ast.stmt, stores: list) -> list:
        """The locals the statement surely loaded and may have changed in place (a call ran, or it stored into
        an item or an attribute)."""
        certain = list(_certain(node))
        changing = any(isinstance(n, IN_PLACE) or (isinstance(n, (ast.Subscript, ast.Attribute))
                                                    and isinstance(n.ctx, (ast.Store, ast.Del))) for n in certain)
        if not changing:
            return []
        return list(dict.fromkeys(n.id for n in certain if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                                  and n.id in self.locals and n.id not in stores))


def _first_line(node: ast.AST) -> int:
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])


def _functions(tree: ast.Module):
    """(qualified name, first line, node) of every function of a module, as the compiler names them."""
    def walk(node, prefix):  # noqa: ANN001, ANN202
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                yield name, _first_line(child), child
                yield from walk(child, name + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            else:
                yield from walk(child, prefix)
    yield from walk(tree, "")


def _code_of(root: types.CodeType, name: str, first: int):
    """The code object nested in ``root`` of that qualified name and first line, or None."""
    stack = [root]
    while stack:
        code = stack.pop()
        if code.co_qualname == name and code.co_firstlineno == first:
            return code
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return None


def _plain(tree: ast.Module, path: str) -> types.CodeType:
    return compile(tree, path, "exec", dont_inherit=True)


def _made(codes: list, indexes: list, spans: list, source: str, path: str, plain: types.CodeType, sites: list,
          lines: bool, prepare) -> types.CodeType:  # noqa: ANN001
    """The file's code compiled again with the records of its recorded functions (``codes[i]`` for ``indexes``)."""
    tree = ast.parse(source, path)
    prepare(tree, path)
    nodes = {(name, first): node for name, first, node in _functions(tree)}
    for index in indexes:
        code = codes[index]
        if code.co_name.startswith("<"):
            raise Unfit(f"{code.co_qualname} is not a function (a module's code, a lambda or a comprehension)")
        node = nodes.get((code.co_qualname, code.co_firstlineno))
        running = _code_of(plain, code.co_qualname, code.co_firstlineno)
        if node is None or running is None or (code.co_code, code.co_names) != (running.co_code, running.co_names):
            raise Unfit(f"{code.co_qualname} is not what {path} compiles to now (changed, or changed as loaded)")
        node.body = _Function(index, code, spans[index], sites, lines).body(node)
    ast.fix_missing_locations(tree)
    return compile(tree, path, "exec", dont_inherit=True)


def recompiled(codes: list, spans: list, prepare=_plain) -> tuple:  # noqa: ANN001
    """(new code per code, sites) for ``codes`` (recorded lines: ``spans``, None for all), or Unfit. ``prepare(tree,
    path)`` compiles a file's tree as it was loaded (changing the tree as the loader did: the boot's guards)."""
    if not hasattr(types.CodeType, "co_qualname"):
        raise Unfit("the target's Python is older than 3.11")
    new: list = [None] * len(codes)
    sites: list = []
    by_file: dict = {}
    for index, code in enumerate(codes):
        by_file.setdefault(code.co_filename, []).append(index)
    for path, indexes in by_file.items():
        source = "".join(linecache.getlines(path))
        if not source:
            raise Unfit(f"the source of {path} cannot be read")
        try:
            plain = prepare(ast.parse(source, path), path)
        except (SyntaxError, ValueError) as exc:
            raise Unfit(f"{path} does not compile now ({type(exc).__name__})") from None
        known = len(sites)
        try:
            made = _made(codes, indexes, spans, source, path, plain, sites, False, prepare)
        except (ValueError, SystemError):  # CPython 3.13 cannot compile some jumps to code of no line
            del sites[known:]
            made = _made(codes, indexes, spans, source, path, plain, sites, True, prepare)
        for index in indexes:
            code = codes[index]
            found = _code_of(made, code.co_qualname, code.co_firstlineno)
            if found is None or found.co_freevars != code.co_freevars:
                raise Unfit(f"{code.co_qualname} compiled again does not fit its closure")
            new[index] = found
    return new, sites
