"""Feature ``gc_freeze``: the objects made before the program starts are set aside from the collector (``gc.freeze``).

They are the interpreter's start and the debugger's (debugpy, pydevd and the boot: 13,000 objects on Python 3.13),
and they live as long as the process. Every full collection of the program (pytest makes five as it ends) and the
interpreter's collections at its exit went through them all: on 3.13 a 1 s pytest run spent 100-170 ms more at its
exit with pydevd imported than without. Frozen, they are left out, as ``gc.freeze``'s own documentation advises for
what a server makes before it forks. What the program can see of it: ``gc.get_objects()`` and
``gc.get_referrers()`` leave out the objects made before its first line (``gc.get_freeze_count()`` counts them), and
``gc.unfreeze()`` gives them back to the collector. On Python 3.11, breakpoints changed while the program runs give
them back too: the lazy tracer (``lazy_tracing.py``) looks for the functions of their files among all objects.
"""

import gc


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    """Freeze what exists when ``runner._run_code`` (a script's and a ``-m`` module's alike) first runs."""
    runner = change.module("_pydevd_bundle.pydevd_runpy")  # pydevd's copy of runpy, which debugpy uses
    run_code = runner._run_code

    def _run_code(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - runpy's own signature
        runner._run_code = run_code
        gc.freeze()
        return run_code(*args, **kwargs)

    change.replace(runner, "_run_code", _run_code)
