"""Feature ``exit_is_an_end``: ``sys.exit`` with a number or None ends the program; it never stops as an uncaught
exception. debugpy ignores only the codes 0 and None by default, and releases before 1.8.22 stopped on any other
code on Python 3.12+ (``sys.exit(3)``, pytest's exit with failures). A ``sys.exit("message")`` still stops, as in
debugpy: its text is an error the program reports."""


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    pydb = change.module("pydevd").PyDB
    ignored = pydb.ignore_system_exit_code

    def ignore_system_exit_code(self, system_exit_exc):  # noqa: ANN001, ANN202 - pydevd's signature
        code = getattr(system_exit_exc, "code", system_exit_exc)
        return code is None or isinstance(code, int) or ignored(self, system_exit_exc)

    change.replace(pydb, "ignore_system_exit_code", ignore_system_exit_code)
