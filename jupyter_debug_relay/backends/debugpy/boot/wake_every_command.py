"""Feature ``wake_every_command``: pydevd's suspended threads get wake-up events that do not lose a wake-up.

pydevd's suspended thread takes one command off its queue, then waits on the event and clears it: two commands
posted together (an evaluate and a stack, twenty evaluates from twenty clients) set it once, so the second waited
for the 0.2 s timeout, and each one after it 0.2 s more. ``QueueEvent`` stays set while commands wait."""


class QueueEvent:
    """A suspended thread's wake-up event that stays set while commands wait in its queue."""

    __slots__ = ("event", "queue")

    def __init__(self, event, queue) -> None:  # noqa: ANN001 - pydevd's threading.Event and queue.Queue
        self.event, self.queue = event, queue

    def set(self) -> None:
        self.event.set()

    def is_set(self) -> bool:
        return self.event.is_set()

    def wait(self, timeout=None) -> bool:  # noqa: ANN001 - threading.Event.wait
        return self.event.wait(timeout)

    def clear(self) -> None:
        self.event.clear()
        if not self.queue.empty():
            self.event.set()


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    pydb = change.module("pydevd").PyDB
    queue_and_event = pydb.get_internal_queue_and_event

    def get_internal_queue_and_event(self, thread_id):  # noqa: ANN001, ANN202 - pydevd's signature
        queue, event = queue_and_event(self, thread_id)
        return queue, QueueEvent(event, queue)

    change.replace(pydb, "get_internal_queue_and_event", get_internal_queue_and_event)
