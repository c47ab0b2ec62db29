"""Feature ``thread_visits``: each suspension of a thread has a number, the relay can ask which threads are
suspended now, each with its number and whether its own breakpoint suspended it (``suspended``), and a resume wakes
the suspended threads at once.

pydevd stops every thread at a hit and tells the first hit only; the relay reports the others' hits one by one. A
thread of the previous stop looks every 0.1 s whether it may go on: the next stop could find it still suspended on
its breakpoint's line and report its hit twice (its number says it is the same suspension). And the relay asked the
stack of every thread to find those at a breakpoint: pydevd waits 0.5 s for a thread blocked in a call of C (a join,
a sleep), so each stop of a program with such a thread took half a second. A resumed thread went on only when it
next looked (every 0.2 s): continued at once after a stop, the others never ran before the next stop.

A thread can reach its breakpoint after the relay last asked and before the relay's continue arrives (its own hit,
or suspended by the first hit on its breakpoint's line, which pydevd then does not check): the continue resumed it,
a hit lost. So ``suspended`` also marks what the relay has seen, and until a thread moves, a continue of every
thread that finds a suspension begun since resumes none: it tells the relay (``relayNotResumed``) and is answered at
once, and the relay looks again. A thread a guard (``compiled_breakpoints``) has begun to stop is not suspended yet:
a resume then marked it running before it waited, and it ran past its hit. So a continue waits a moment for such
threads to be suspended and resumes none while one is not; a guard that begins later stops its thread after the
resume (``BEGIN``)."""

import itertools
import threading
import time

COUNT = itertools.count(1)
VISITS: dict = {}  # thread ident -> the number of its present suspension (absent: not suspended)
HITS: tuple = ()  # pydevd's stop reasons of a breakpoint's own hit (line, function)
DAP_ID: list = []  # pydevd's function that gives a thread's id in DAP
FRAMES: dict = {}  # thread ident -> the frame it is suspended in
GUARDS: list = []  # the module compiled_breakpoints: the tests written into the code, and the threads they stop
SEEN: list = []  # the first suspension number the relay has not seen, since it last asked (empty: no thread moved)
BEGINNING = 0.1  # seconds a resume waits for the threads a guard is stopping to be suspended, before it looks


def _own_hit(thread) -> bool:  # noqa: ANN001 - a threading.Thread
    return getattr(thread, "stop_reason", None) in HITS


def suspended() -> dict:
    """{DAP id of a suspended thread: [the number of its suspension, whether its own breakpoint suspended it (None:
    it sits before a test written into the code for its line, which it meets when it goes on)]}."""
    SEEN[:] = [next(COUNT)]  # first: a suspension that begins while this looks is counted unseen
    found = {}
    for ident, visit in list(VISITS.items()):
        thread, frame = threading._active.get(ident), FRAMES.get(ident)
        if thread is not None:
            tests = GUARDS[0]
            hit = _own_hit(thread) or ident in tests.STOPPING  # another stop may have renamed its reason
            found[DAP_ID[0](thread)] = [visit, None if not hit and frame is not None and tests.holds(frame) else hit]
    return found


def _begun() -> list:
    """The idents of the threads a guard is stopping that are not suspended yet (or no more)."""
    return [ident for ident in tuple(GUARDS[0].STOPPING) if ident not in VISITS]


def _unseen() -> list:
    """The DAP ids of the threads suspended since the relay last asked (none if a thread moved since), and of those
    a guard is stopping that are not suspended yet: a resume now would let them run past their hit."""
    idents = [ident for ident, visit in list(VISITS.items()) if SEEN and visit >= SEEN[0]] + _begun()
    threads = [threading._active.get(ident) for ident in idents]
    return [DAP_ID[0](thread) for thread in threads if thread is not None]


def _answer_continue(debugger) -> None:  # noqa: ANN001 - pydevd's PyDB
    """Answer the continue pydevd is handling without resuming a thread (it answers only once one resumes)."""
    if not debugger.multi_threads_single_notification:
        return  # pydevd answers it itself
    notification = debugger.threads_suspended_single_notification
    with notification._callbacks_lock:
        answers, notification._callbacks = notification._callbacks, []
    for answer in answers:
        answer()


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    global HITS
    constants = change.module("_pydevd_bundle.pydevd_comm_constants")
    HITS = (constants.CMD_SET_BREAK, constants.CMD_SET_FUNCTION_BREAK)
    thread_id_of = change.module("_pydevd_bundle.pydevd_constants").get_current_thread_id
    to_dap = change.module("_pydevd_bundle._debug_adapter.pydevd_base_schema").BaseSchema._translate_id_to_dap
    DAP_ID[:] = [lambda thread: to_dap(thread_id_of(thread))]
    pydb = change.module("pydevd").PyDB
    wait = pydb.do_wait_suspend

    def do_wait_suspend(self, thread, frame, event, arg, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        ident = thread.ident  # pydevd's parameters by name: another feature checks them after this one
        VISITS[ident], FRAMES[ident] = next(COUNT), frame
        try:
            return wait(self, thread, frame, event, arg, *args, **kwargs)
        finally:
            VISITS.pop(ident, None)
            FRAMES.pop(ident, None)
            SEEN.clear()  # a thread moves: the relay looks again before its next continue

    api = change.module("_pydevd_bundle.pydevd_api").PyDevdAPI
    resume = api.request_resume_thread
    get_debugger = change.module("pydevd").get_global_debugger

    def request_resume_thread(self, thread_id):  # noqa: ANN001, ANN202 - pydevd's signature
        debugger = get_debugger()
        everyone = thread_id == "*" and debugger is not None
        deadline = time.monotonic() + BEGINNING
        while everyone and _begun() and time.monotonic() < deadline:
            time.sleep(0.001)
        with GUARDS[0].BEGIN:  # a guard that begins to stop its thread from here on does so after the resume
            unseen = _unseen() if everyone else []
            SEEN.clear()
            kept = bool(unseen) and boot.tell_relay("relayNotResumed", {"threads": unseen})
            if not kept:
                resume(self, thread_id)
        if kept:
            _answer_continue(debugger)
            return
        for ident in list(VISITS):  # each suspended thread looks now whether it may go on
            thread = threading._active.get(ident)
            if debugger is not None and thread is not None:
                debugger.get_internal_queue_and_event(thread_id_of(thread))[1].set()

    GUARDS[:] = [boot.beside("compiled_breakpoints")]
    change.replace(pydb, "do_wait_suspend", do_wait_suspend)
    change.replace(api, "request_resume_thread", request_resume_thread)
