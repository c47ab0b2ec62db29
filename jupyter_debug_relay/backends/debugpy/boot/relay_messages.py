"""Feature ``relay_messages``: as pydevd gets its configuration, the boot tells the relay what it switched on
(``relayFeatures``) and when the target's start phases ended (``relayStartup``), before the launch answers.

Every other change inside pydevd needs it: the relay must hear which speed-ups are off, and why."""


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    pydevd = change.module("pydevd")
    configured = pydevd.PyDB.on_configuration_done

    def on_configuration_done(self):  # noqa: ANN001, ANN202 - pydevd's signature
        boot.report()
        return configured(self)

    change.replace(pydevd.PyDB, "on_configuration_done", on_configuration_done)
