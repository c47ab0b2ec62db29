"""Feature ``module_path``: ``python -m`` puts the working directory's full path first on ``sys.path``; debugpy puts
``""`` (which would follow a later ``chdir``). The module runs with the full path, as in a plain run."""

import os
import sys


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    runner = change.module("_pydevd_bundle.pydevd_runpy")  # pydevd's copy of runpy, which debugpy uses
    run_module_as_main = runner._run_module_as_main

    def run(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - runpy's own signature
        runner._run_module_as_main = run_module_as_main
        if sys.path and sys.path[0] == "":
            sys.path[0] = os.getcwd()
        return run_module_as_main(*args, **kwargs)

    change.replace(runner, "_run_module_as_main", run)
