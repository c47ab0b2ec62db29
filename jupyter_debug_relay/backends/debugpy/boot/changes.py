"""Checks a feature's names before anything is touched, makes its changes, and undoes them all if one fails.

``check(feature)`` says why a feature of ``table.py`` cannot be switched on (a name missing, a function whose
parameters moved), or None. ``Changes`` is what a feature's ``apply(change, boot)`` replaces names through: each
replacement must be one of the feature's declared names (an undeclared one fails the feature), and ``undo``
puts back every name replaced so far, in reverse order. ``switch_on`` is the whole sequence: a feature whose check
fails is left off, one whose ``apply`` raises is undone and left off; either way the reason is kept in ``STATE``.
This file runs in the target (any Python from 3.8): the standard library only.
"""

import importlib
import sys

STATE = {}  # feature name -> None (on) or why it is off


def _module(name):  # noqa: ANN001, ANN202
    """The loaded (or loadable) module ``name``, or None where a ``?`` module is not loaded."""
    optional = name.startswith("?")
    name = name.lstrip("?")
    if name in sys.modules:
        return sys.modules[name]
    if optional:
        return None
    return importlib.import_module(name)


def _parameters(function):  # noqa: ANN001, ANN202
    """The names of a Python function's positional parameters, or None for a compiled one."""
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    return None if code is None else code.co_varnames[:code.co_argcount]


def parse(name):  # noqa: ANN001, ANN201 - a declared name -> (owner path, attribute, instance?, parameters or None)
    """A declared name's parts: ``PyDB().writer`` -> ("PyDB", "writer", True, None); ``PyDB.set_suspend(self,
    thread)`` -> ("PyDB", "set_suspend", False, ("self", "thread"))."""
    name = name.lstrip("?")
    instance = "()." in name
    path, wanted = name, None
    if not instance and name.endswith(")"):
        path, _, listed = name[:-1].partition("(")
        wanted = tuple(p.strip() for p in listed.split(",") if p.strip())
    owner_path, _, attribute = path.replace("()", "").rpartition(".")
    return owner_path, attribute, instance, wanted


def check_name(module, name):  # noqa: ANN001, ANN201 - a module and a declared name -> None or why not
    """Why the declared ``name`` does not hold in ``module``, or None (an optional ``?name`` may be absent)."""
    optional = name.startswith("?")
    owner_path, attribute, instance, wanted = parse(name)
    owner = module
    for part in filter(None, owner_path.split(".")):
        owner = getattr(owner, part, None)
        if owner is None:
            return f"{module.__name__} has no {owner_path}"
    if instance and isinstance(owner, type):
        init_names = getattr(getattr(owner, "__init__", None), "__code__", None)
        if optional or hasattr(owner, attribute) or attribute in getattr(init_names, "co_names", ()):
            return None
        return f"{module.__name__}.{owner_path} instances have no {attribute}"
    if instance:  # an attribute a function sets on what it is given; a compiled one is checked by name only
        code = owner.__code__ if isinstance(owner, type(parse)) else None
        if optional or code is None or attribute in code.co_names:
            return None
        return f"{module.__name__}.{owner_path} sets no {attribute}"
    shown = f"{owner_path}.{attribute}" if owner_path else attribute
    if not hasattr(owner, attribute):
        return None if optional else f"{module.__name__} has no {shown}"
    if wanted is not None:
        found = _parameters(getattr(owner, attribute))
        if found is not None and found[:len(wanted)] != wanted:
            return f"{module.__name__}.{shown} takes ({', '.join(found)}), not ({', '.join(wanted)})"
    return None


def check(feature):  # noqa: ANN001, ANN201 - a table.Feature -> None or why it cannot be switched on
    """Why ``feature`` cannot be switched on (the first name that does not hold, a feature it needs that is off)."""
    for needed in feature.needs:
        if STATE.get(needed, "not switched on") is not None:
            return f"it needs {needed}, which is off"
    for module_name, names in feature.names.items():
        try:
            module = _module(module_name)
        except Exception as error:  # noqa: BLE001 - an import that fails in any way is a mismatch
            return f"{module_name} does not import ({type(error).__name__}: {error})"
        if module is None:
            continue
        for name in names:
            why = check_name(module, name)
            if why:
                return why
    return None


class Undeclared(Exception):
    """A feature replaced a name its row of the table does not declare."""


class Changes:
    """The replacements one feature makes, each declared, all undone together."""

    def __init__(self, feature) -> None:  # noqa: ANN001 - a table.Feature
        self.feature = feature
        self.made = []  # (owner, attribute, the value it had in the owner's own namespace, or _ABSENT)
        self.declared = {(m.lstrip("?"), ".".join(filter(None, parse(n)[:2]))) for m, names in feature.names.items()
                         for n in names}

    def module(self, name):  # noqa: ANN001, ANN201 - a module
        """A module the feature declares (loaded now)."""
        return _module(name)

    def replace(self, owner, attribute, value) -> None:  # noqa: ANN001 - a module or class, its attribute, the value
        """Set ``owner.attribute`` to ``value``, remembering what it was."""
        if (_place(owner)[0], _place(owner)[1] + attribute) not in self.declared:
            raise Undeclared(f"{self.feature.name} replaces {'.'.join(filter(None, _place(owner)))}{attribute}, "
                             "which its row of the table does not declare")
        self.made.append((owner, attribute, vars(owner).get(attribute, _ABSENT)))
        setattr(owner, attribute, value)

    def undo(self) -> None:
        """Put back every name replaced, the last first."""
        while self.made:
            owner, attribute, before = self.made.pop()
            if before is _ABSENT:
                delattr(owner, attribute)
            else:
                setattr(owner, attribute, before)


_ABSENT = object()


def _place(owner):  # noqa: ANN001, ANN202
    """(module name, attribute path prefix) of a module or a class of one."""
    if isinstance(owner, type(sys)):
        return owner.__name__, ""
    return owner.__module__, owner.__qualname__ + "."


def switch_on(feature, apply, boot):  # noqa: ANN001, ANN201 - -> None or why it is off
    """Check ``feature``, then ``apply(change, boot)``; undo what it did if it raises. Why it is off, or None."""
    why = check(feature)
    if why is None:
        change = Changes(feature)
        try:
            apply(change, boot)
        except Exception as error:  # noqa: BLE001 - any failure leaves pydevd as it was
            change.undo()
            why = f"it failed while switching on ({type(error).__name__}: {error}) and was undone"
    STATE[feature.name] = why
    return why
