"""Feature ``slow_values``: a value whose text pydevd has been making for ``SLOW_VALUE`` seconds (a slow
``__repr__``, a property that blocks) is named to the relay with a ``relaySlowValue`` event (name, expression), so a
variables or evaluate request that runs out of time can say which value held it. A watcher thread of pydevd's kind
looks four times a second while values are being made and sleeps otherwise; each value costs a few assignments."""

import time

SLOW_VALUE = 1.0  # seconds of making one value's text before the relay is told its name
RESOLVING: dict = {"variable": None, "since": 0.0, "told": None}  # the value whose text pydevd is making


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    ThreadingEvent = change.module("_pydev_bundle._pydev_saved_modules").ThreadingEvent  # noqa: N806 - pydevd's
    PyDBDaemonThread = change.module("_pydevd_bundle.pydevd_daemon_thread").PyDBDaemonThread  # noqa: N806

    class SlowValueWatch(PyDBDaemonThread):
        """A thread of pydevd's kind (hidden from the program's threads, never traced) that names slow values."""

        def __init__(self, py_db) -> None:  # noqa: ANN001
            super().__init__(py_db)
            self.name = "pydevd.relay.SlowValueWatch"
            self.wake = ThreadingEvent()

        def _on_run(self) -> None:
            while not self._kill_received:
                self.wake.wait()
                variable, since = RESOLVING["variable"], RESOLVING["since"]
                if variable is None:
                    self.wake.clear()
                    continue  # a value begun since the clear is seen on the next round
                left = since + SLOW_VALUE - time.monotonic()
                if left <= 0 and RESOLVING["told"] is not variable:
                    RESOLVING["told"] = variable
                    boot.tell_relay("relaySlowValue", {"name": str(getattr(variable, "name", "")),
                                                       "expression": getattr(variable, "evaluate_name", None)})
                time.sleep(min(max(left, 0.05), 0.25))

    abstract = change.module("_pydevd_bundle.pydevd_suspended_frames")._AbstractVariable
    describe = abstract.get_var_data
    watch: list = []

    def get_var_data(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - pydevd's own signature
        RESOLVING["variable"], RESOLVING["since"] = self, time.monotonic()
        if not watch and getattr(self, "py_db", None) is not None:
            watch.append(SlowValueWatch(self.py_db))
            watch[0].start()
        if watch and not watch[0].wake.is_set():
            watch[0].wake.set()
        try:
            return describe(self, *args, **kwargs)
        finally:
            RESOLVING["variable"] = None

    change.replace(abstract, "get_var_data", get_var_data)
