"""The translation of what a DAP adapter answers into the relay's model (backends/dap/messages.py)."""

from __future__ import annotations

from jupyter_debug_relay.backends.dap.messages import exception_info


def test_an_exception_type_drops_pydevds_note_on_where_it_pauses():
    said = {"exceptionId": "ZeroDivisionError", "description": "division by zero", "breakMode": "unhandled",
            "details": {"typeName": "ZeroDivisionError       (note: full exception trace is shown but execution is "
                                    "paused at: ray._raylet.execute_task)", "message": "division by zero",
                        "stackTrace": "Traceback ..."}}
    info = exception_info(said)
    assert (info.type, info.message, info.traceback) == ("ZeroDivisionError", "division by zero", "Traceback ...")


def test_an_exception_type_without_details_is_its_id():
    info = exception_info({"exceptionId": "ValueError", "description": "bad", "breakMode": "always"})
    assert (info.type, info.message) == ("ValueError", "bad")
