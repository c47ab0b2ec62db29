"""In a launched target, standard modules that debugpy and pydevd import but never use on a launch run only when used.

pydevd imports, for its XML-RPC console and other features a DAP client never asks for, modules such as
``xmlrpc.client``, ``http.server``, ``email`` and ``ssl``: about a sixth of the CPU time of its import, paid by
every launch. While the debugger is imported (``defer`` until ``stop_deferring``, which the boot calls as pydevd
connects, before the program runs), each module named in ``DEFERRED`` that comes from the standard library is put
in ``sys.modules`` without running its code; the first look at one of its attributes runs it (as
``importlib.util.LazyLoader`` does, but one thread runs it while any other waits, on every Python version), and so
does any later ``import`` of it (the import system looks at the module's ``__spec__``): the program imports these
modules as in a plain run. The list holds the modules no attribute of which is looked at while debugpy starts,
measured on Python 3.11 to 3.13; one used after all is simply run at its first use.
"""

import os
import sys
import threading
import types
from importlib.machinery import PathFinder, SourceFileLoader

DEFERRED = frozenset({
    "calendar", "email.base64mime", "email.errors", "email.header", "email.parser", "email.quoprimime", "getpass",
    "importlib.metadata", "ipaddress", "locale", "mimetypes", "pickle", "random", "shutil", "signal", "ssl",
    "stringprep", "subprocess", "textwrap", "xml.parsers.expat",
})
STDLIB = os.path.dirname(os.__file__) + os.sep
WAITING: dict = {}  # a module whose code has not run -> (its loader, the lock of its run)
RUNNING: set = set()  # the modules whose code runs now (their thread looks at them as they run)


class DeferredModule(types.ModuleType):
    """A module whose code has not run yet: the first look at an attribute runs it, then it is a plain module."""

    def __getattribute__(self, name: str):  # noqa: ANN204 - any attribute
        waiting = WAITING.get(self)
        if waiting is not None:
            loader, lock = waiting
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


def fresh_locks() -> None:
    """In a forked child: locks of its own (a thread of the parent may have held one as it forked, and is gone)."""
    RUNNING.clear()
    for module, (loader, _) in list(WAITING.items()):
        WAITING[module] = (loader, threading.RLock())


def defer(around_import: dict) -> None:
    """From now on, the modules of ``DEFERRED`` run at their first use; ``around_import`` (the boot's) gets
    ``AROUND_IMPORT``."""
    around_import.update(AROUND_IMPORT)
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


AROUND_IMPORT = {"debugpy.common.log": platform_unasked}  # module -> what runs its import
