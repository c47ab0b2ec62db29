"""Checks every feature of ``table.py`` against a debugpy folder on this Python, nothing started: ``python check.py
DEBUGPY_FOLDER`` prints ``{"debugpy", "python", "features": {name: None or why it is off}}`` as JSON.

It imports debugpy's pydevd as a launch does (``debugpy.server``, which loads the vendored pydevd), then checks each
feature's names with ``changes.check``, as the boot does before it switches a feature on; nothing is changed."""

import importlib
import json
import os
import sys
from importlib.util import module_from_spec, spec_from_file_location


def beside(name):  # noqa: ANN001, ANN201 - a module
    spec = spec_from_file_location("_jupyter_debug_relay_check_" + name,
                                   os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py"))
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    folder = os.path.abspath(sys.argv[1])
    del sys.path[0]
    sys.path.insert(0, os.path.dirname(folder))
    table, changes = beside("table"), beside("changes")
    import debugpy
    import debugpy.server  # noqa: F401 - loads pydevd as a launch does

    importlib.import_module("pydevd")
    found = {}
    for feature in table.FEATURES:
        if feature.process != "target" or not feature.for_python(sys.version_info):
            continue
        if feature.after not in sys.modules:
            try:
                importlib.import_module(feature.after)
            except ImportError as error:  # pytest's module, where pytest is not installed: checked when it is
                found[feature.name] = f"{feature.after} is not installed here ({error})"
                continue
        found[feature.name] = changes.check(feature)
        changes.STATE[feature.name] = found[feature.name]
    print(json.dumps({"debugpy": debugpy.__version__, "folder": os.path.dirname(debugpy.__file__),
                      "python": ".".join(map(str, sys.version_info[:3])), "features": found}))


main()
