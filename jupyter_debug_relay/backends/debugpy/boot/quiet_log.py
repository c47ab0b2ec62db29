"""Feature ``quiet_log``: debugpy describes the environment (every installed distribution's metadata, read twice:
0.5 s in a venv of 150 packages) and formats an exception's traceback and stack (a program ending by ``sys.exit``,
as pytest does: 5-10 ms) before it knows whether a log will take them; each is made only when a log takes its
level."""


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    log = change.module("debugpy.common.log")
    describe, exception = log.describe_environment, log._exception

    def describe_environment(header: str) -> None:
        if "info" in log._levels:
            describe(header)

    def _exception(*args, **kwargs) -> None:  # noqa: ANN002, ANN003 - debugpy's signature
        level = kwargs.get("level", "error")
        if level == "error" or level in log._levels:  # what log.write_format writes
            exception(*args, **kwargs)

    change.replace(log, "describe_environment", describe_environment)
    change.replace(log, "_exception", _exception)
