"""In a launched target, standard modules that debugpy and pydevd import but never use on a launch run only when used.

pydevd imports, for its XML-RPC console and other features a DAP client never asks for, modules such as
``xmlrpc.client``, ``http.server``, ``email`` and ``ssl``: about a sixth of the CPU time of its import, paid by
every launch. While the debugger is imported (``defer`` until ``stop_deferring``, which the boot calls as pydevd
connects, before the program runs), each module named in ``DEFERRED`` that comes from the standard library is put
in ``sys.modules`` without running its code. The first look at one of its attributes runs it (as
``importlib.util.LazyLoader`` does, but one thread runs it while any other waits, on every Python version), and so
does any later ``import`` of it (the import system looks at the module's ``__spec__``): the program imports these
modules as in a plain run. The list holds the modules no attribute of which is looked at while
debugpy starts, measured on Python 3.11 to 3.13; one used after all is simply run at its first use.

Two of pydevd's modules read attributes of the XML-RPC ones as they load, though only its console uses them
(``READ_LATER``): there the read gives a ``Later``, and the module that holds one finds the attribute at its first
use. Left unrun so, ``xmlrpc.server`` and what it imports (``http.client``, ``email``, ``socketserver``, ``pydoc``)
took 50, 34 and 29 ms of a launch's CPU on 3.11, 3.12 and 3.13 (``bench/launch_cost.py --before``).

pydevd's Django plugin imports ``django`` to read its ``VERSION``: where Django is installed, every launch ran it
(about 20 ms of the launch's CPU with Django 4.2), and the program found it imported before its first line. The
plugin is given ``VERSION`` read from Django's own file instead (``django_left_to_the_program``); the program imports
Django itself, if ever.

pydevd's bytecode analysis (``pydevd_bytecode_utils``, with the vendored ``bytecode`` library it imports: 5-10 ms of
a launch) serves only a step into one chosen call of a line (DAP's ``stepInTargets``). Until its first use a
stand-in holds its place (``UntilUsed``): pydevd's tracers import one function of it by name as they load, which
imports the real module at its first call, and any other attribute read imports it too.
"""

import ast
import importlib
import importlib.util
import os
import re
import sys
import threading
import types
from importlib.machinery import PathFinder, SourceFileLoader

DEFERRED = frozenset({
    "calendar", "email.base64mime", "email.errors", "email.header", "email.parser", "email.quoprimime",
    "getpass", "http.server", "importlib.metadata", "ipaddress", "locale", "mimetypes", "pickle", "random", "shutil",
    "signal", "ssl", "stringprep", "subprocess", "textwrap", "xml.parsers.expat", "xmlrpc.client", "xmlrpc.server",
})
# pydevd's modules that read an attribute of a module of DEFERRED as they load, though only its XML-RPC console uses
# it -> (module, attribute) read: while that module loads, each reads as a ``Later``
READ_LATER = {
    "_pydev_bundle._pydev_saved_modules": {  # it checks that a file of the program does not shadow these modules
        ("xmlrpc.client", "ServerProxy"), ("xmlrpc.client", "Marshaller"), ("xmlrpc.client", "Server"),
        ("xmlrpc.server", "SimpleXMLRPCServer"), ("http.server", "BaseHTTPRequestHandler")},
    "_pydev_bundle.pydev_imports": {("xmlrpc.server", "SimpleXMLRPCServer")},  # named again for the console
}
STDLIB = os.path.dirname(os.__file__) + os.sep
WAITING: dict = {}  # a module whose code has not run -> (its loader, the lock of its run)
RUNNING: set = set()  # the modules whose code runs now (their thread looks at them as they run)
reading_later: set = set()  # (module, attribute) read as a ``Later`` now: READ_LATER's of the module that loads


class Later:
    """An attribute of a module whose code has not run, read where it is not used yet: the module it was read into
    finds the attribute itself at its first use (``read_later``)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name


class DeferredModule(types.ModuleType):
    """A module whose code has not run yet: the first look at an attribute runs it, then it is a plain module."""

    def __getattribute__(self, name: str):  # noqa: ANN204 - any attribute
        waiting = WAITING.get(self)
        if waiting is not None:
            loader, lock = waiting
            if (loader.name, name) in reading_later:
                return Later(loader.name, name)
            with lock:  # re-entered by the running thread itself (its code imports its own submodules)
                if self in WAITING and self not in RUNNING:
                    RUNNING.add(self)
                    try:
                        loader.exec_module(self)
                    except BaseException:  # a module whose code fails is not left imported, as after a failed import
                        if sys.modules.get(loader.name) is self:
                            del sys.modules[loader.name]
                        raise
                    finally:
                        del WAITING[self]
                        RUNNING.discard(self)
                        self.__class__ = types.ModuleType
        return types.ModuleType.__getattribute__(self, name)


class DeferringLoader:
    """Puts the module in place with its code not run (``DeferredModule``); the real loader runs it later."""

    def __init__(self, loader: SourceFileLoader) -> None:
        self.loader = loader

    def create_module(self, spec) -> None:  # noqa: ANN001 - a ModuleSpec
        return None  # the default module, as for any source file

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__.loader = module.__loader__ = self.loader
        WAITING[module] = (self.loader, threading.RLock())
        module.__class__ = DeferredModule


class DeferringFinder:
    """Finds the modules of ``DEFERRED`` as the path finder does, and has them loaded deferred."""

    @staticmethod
    def find_spec(name: str, path=None, target=None):  # noqa: ANN001, ANN205 - the meta path finder protocol
        if name not in DEFERRED:
            return None
        spec = PathFinder.find_spec(name, path, target)
        if spec is None or type(spec.loader) is not SourceFileLoader or not (spec.origin or "").startswith(STDLIB):
            return None  # not the standard library's own file: imported as ever
        spec.loader = DeferringLoader(spec.loader)
        return spec


SMART_STEP = "_pydevd_bundle.pydevd_bytecode_utils"  # pydevd's module for a step into a chosen call


class UntilUsed(types.ModuleType):
    """Stands in for a module of pydevd until its first use: an attribute it does not hold is the real module's,
    which is imported then and takes its place."""

    def __getattr__(self, name: str):  # noqa: ANN204 - any attribute
        if name.startswith("__"):  # what the import system asks a module (its __path__, ...) is not a use
            raise AttributeError(name)
        return getattr(the_real(self.__name__), name)


def the_real(name: str) -> types.ModuleType:
    """Module ``name``, imported now in place of its stand-in if it is not yet."""
    if isinstance(sys.modules.get(name), UntilUsed):
        sys.modules.pop(name, None)
    return importlib.import_module(name)


def smart_step_stand_in() -> UntilUsed:
    """``SMART_STEP``'s stand-in, with the function pydevd's tracers import from it by name."""
    stand_in = UntilUsed(SMART_STEP, "pydevd's bytecode analysis, imported at its first use")

    def get_smart_step_into_variant_from_frame_offset(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - pydevd's
        try:
            real = the_real(SMART_STEP).get_smart_step_into_variant_from_frame_offset
        except ImportError:  # as pydevd's tracers do when the module does not import
            return None
        return real(*args, **kwargs)

    stand_in.get_smart_step_into_variant_from_frame_offset = get_smart_step_into_variant_from_frame_offset
    return stand_in


def fresh_locks() -> None:
    """In a forked child: locks of its own (a thread of the parent may have held one as it forked, and is gone)."""
    RUNNING.clear()
    for module, (loader, _) in list(WAITING.items()):
        WAITING[module] = (loader, threading.RLock())


def defer(around_import: dict) -> None:
    """From now on, the modules of ``DEFERRED`` run at their first use, and ``SMART_STEP`` is imported at its first
    use; ``around_import`` (the boot's) gets ``AROUND_IMPORT``."""
    around_import.update(AROUND_IMPORT)
    sys.modules.setdefault(SMART_STEP, smart_step_stand_in())
    sys.meta_path.insert(0, DeferringFinder)
    os.register_at_fork(after_in_child=fresh_locks)


def stop_deferring() -> None:
    """Imports run modules at once again (those deferred so far still run at their first use)."""
    if DeferringFinder in sys.meta_path:
        sys.meta_path.remove(DeferringFinder)


def platform_unasked(run):  # noqa: ANN001, ANN201 - runs the import of debugpy's log
    """Import debugpy's log (``run``) with ``platform.platform()`` answering "" unless its stderr takes ``info``.

    As it is imported, the log formats a line naming the platform for its stderr, then drops it (its stderr takes
    warnings and errors); on Linux, ``platform.platform()`` runs ``uname -p`` in a subprocess for it."""
    if "info" in os.environ.get("DEBUGPY_LOG_STDERR", "warning error").split():
        return run()
    import platform

    asked = platform.platform
    platform.platform = lambda *args, **kwargs: ""
    try:
        return run()
    finally:
        platform.platform = asked


def read_later(module_name: str, names: set):  # noqa: ANN201 - what runs the import of ``module_name``
    """Run the import of ``module_name`` with ``names`` read as ``Later``; then each global of it that holds one
    is found at its first use (the module's ``__getattr__``), which runs the module it comes from."""

    def around(run):  # noqa: ANN001, ANN202
        reading_later.update(names)
        try:
            return run()
        finally:
            reading_later.difference_update(names)
            module = sys.modules.get(module_name)
            if module is not None:
                later = {key: value for key, value in vars(module).items() if type(value) is Later}
                for key in later:
                    delattr(module, key)

                def __getattr__(key: str):  # noqa: ANN202, N807 - a module's own (PEP 562)
                    if key not in later:
                        raise AttributeError(f"module {module_name!r} has no attribute {key!r}")
                    value = getattr(importlib.import_module(later[key].module), later[key].name)
                    setattr(module, key, value)
                    return value

                if later:
                    module.__getattr__ = __getattr__

    return around


def django_version(origin: str):  # noqa: ANN201 - a tuple or None (3.8 runs this file: no "tuple | None")
    """The ``VERSION`` Django's ``__init__.py`` (``origin``) sets, read from the file; None if it sets none."""
    try:
        with open(origin, encoding="utf-8") as init:
            found = re.search(r"^VERSION = (\(.*\))\s*$", init.read(), re.MULTILINE)
        return ast.literal_eval(found.group(1)) if found else None
    except (OSError, ValueError, SyntaxError):
        return None


def django_left_to_the_program(run):  # noqa: ANN001, ANN201 - runs the import of pydevd's Django plugin
    """Import pydevd's Django plugin with its ``import django`` answered by a stand-in that holds the ``VERSION``
    of the installed Django (all the plugin reads), or failing at once where none is installed."""
    if "django" in sys.modules:  # the program imported it before pydevd (attached by pid)
        return run()
    try:
        spec = importlib.util.find_spec("django")
    except (ImportError, ValueError):  # a finder of the environment's that fails: the plugin finds out as ever
        return run()
    version = django_version(spec.origin) if spec is not None and spec.origin else None
    if spec is not None and version is None:  # not a Django we can read: the plugin imports it, as ever
        return run()
    stand_in = None
    if version is not None:
        stand_in = types.ModuleType("django", "Django's VERSION, read from its file for pydevd's plugin")
        stand_in.VERSION = version
    sys.modules["django"] = stand_in  # None: the import fails without another look along sys.path
    try:
        return run()
    finally:
        if sys.modules.get("django", "gone") is stand_in:
            del sys.modules["django"]


AROUND_IMPORT = {  # module -> what runs its import
    "debugpy.common.log": platform_unasked,
    "pydevd_plugins.django_debug": django_left_to_the_program,
    **{name: read_later(name, names) for name, names in READ_LATER.items()},
}
