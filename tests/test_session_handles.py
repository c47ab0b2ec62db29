"""A session's handle type follows its backend: each has the verbs its backend can have, and no others."""

from __future__ import annotations

from jupyter_debug_relay import DapSessionHandle, MycelSessionHandle, SessionHandle
from jupyter_debug_relay.facade.handles import handle_for


def test_a_launched_python_session_is_a_dap_handle_without_mycel_verbs(relay, write):
    app = write("app.py", "print('hi')\n")
    session = relay.launch(app, stop_on_entry=True)
    session.wait_for_stop(20)
    assert isinstance(session, DapSessionHandle) and not isinstance(session, MycelSessionHandle)
    assert session.adapter == "pydevd" and not hasattr(session, "inspect") and not hasattr(session, "consume")
    assert isinstance(relay.get(session.id), DapSessionHandle) and relay.sessions == [session]
    session.terminate()


def test_the_handle_type_is_chosen_by_the_backend():
    class Fake:
        def __init__(self, backend):
            self.backend, self.id = backend, "s9"

    from jupyter_debug_relay.backends.ez.backend import EzBackend
    from jupyter_debug_relay.backends.mycel.backend import MycelBackend

    mycel = MycelBackend.__new__(MycelBackend)
    ez = EzBackend.__new__(EzBackend)
    assert type(handle_for(None, Fake(mycel))) is MycelSessionHandle
    assert type(handle_for(None, Fake(ez))) is SessionHandle
    assert not hasattr(handle_for(None, Fake(ez)), "read_memory")
