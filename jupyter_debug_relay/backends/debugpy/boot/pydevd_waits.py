"""Feature ``pydevd_waits``: the waits pydevd adds to a start and an end, which a launch by the relay does not need.

- At the start, ``PyDB.initialize_network`` sleeps 0.1 s to "give threads time to start".
- At the end, pydevd's ``CheckAliveThread``, which Python's shutdown waits for, looks every 0.2 s
  (``TIMEOUT_SLOW``) whether the program's threads are gone; then ``dispose_and_kill_all_pydevd_threads`` waits
  up to 0.5 s, looking every 0.1 s, for pydevd's own daemon threads. Two of them never end before the process
  does (the reader, blocked on the relay's socket, and the command thread): 0.7 s were added to every program's
  end. Here, once Python shuts down (``threading._register_atexit``, before it waits for threads), the check looks
  every 10 ms, and the wait is for the one thread whose work is not done: the writer, which sends what is left.
"""

import threading

CHECK_EVERY = 0.01  # seconds between pydevd's looks at whether the program's threads are gone, once it shuts down


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    """Take out pydevd's waits at the start and at the end."""
    pydevd = change.module("pydevd")
    start_without_pause(change, pydevd)
    end_without_waits(change, pydevd)


def start_without_pause(change, pydevd) -> None:  # noqa: ANN001 - changes.Changes, pydevd.py
    """``PyDB.initialize_network`` sleeps 0.1 s to "give threads time to start"; ``Thread.start`` already
    returns once its thread runs, so the sleep only delays the program (the pause is skipped in that call only)."""
    initialize = pydevd.PyDB.initialize_network
    clock = pydevd.time
    caller: list = []

    class Clock:
        """pydevd's ``time`` module, but for the calling thread's sleep in ``initialize_network``."""

        def __getattr__(self, name: str):  # noqa: ANN204
            return getattr(clock, name)

        @staticmethod
        def sleep(seconds: float) -> None:
            if pydevd.threading.get_ident() not in caller:
                clock.sleep(seconds)

    def initialize_network(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - pydevd's signature
        caller.append(pydevd.threading.get_ident())
        pydevd.time = Clock()
        try:
            return initialize(self, *args, **kwargs)
        finally:
            pydevd.time = clock
            caller.clear()

    change.replace(pydevd.PyDB, "initialize_network", initialize_network)


def end_without_waits(change, pydevd) -> None:  # noqa: ANN001 - changes.Changes, pydevd.py
    """As Python shuts down, have pydevd see the program's end within ``CHECK_EVERY``, and wait for its writer only."""
    class Checking(pydevd.ThreadingEvent):
        """The alive check's event, looked at every ``CHECK_EVERY`` whatever the timeout asked."""

        def wait(self, timeout=None) -> bool:  # noqa: ANN001 - threading.Event.wait's signature
            return super().wait(CHECK_EVERY if timeout is None else min(timeout, CHECK_EVERY))

    def check_often() -> None:
        debugger = pydevd.get_global_debugger()
        check = getattr(debugger, "check_alive_thread", None)
        if check is not None:
            waiting, check._wait_event = check._wait_event, Checking()
            waiting.set()  # its wait under way ends now

    def wait_for_the_writer(self, timeout: float) -> None:  # noqa: ANN001 - a PyDB
        writer = self.writer
        if writer is not None and writer is not threading.current_thread():
            writer.join(timeout)

    change.replace(pydevd.PyDB, "_PyDB__wait_for_threads_to_finish", wait_for_the_writer)
    threading._register_atexit(check_often)  # last: it cannot be undone
