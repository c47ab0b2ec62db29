"""A target recorder's answers (``record``) are data: any answer that does not fit is one clear ``protocol_error``."""

from __future__ import annotations

import pytest

from jupyter_debug_relay.backends.debugpy.recording import answer
from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.protocols.recorder import batch

FITS = {"codes": [{"name": "average", "path": "/app.py", "first": 3, "range": None}], "tool": 4, "cap": 4_000_000,
        "bytes": 120, "dropped": 0, "first": 1, "last": 1,
        "events": [[1, 1, 0, "line", 4, [["total", "0"]], None]], "more": False}


def test_an_answer_that_fits_is_read_as_the_batch():
    read = batch(FITS, "record")
    assert read.codes[0].name == "average" and read.events == [(1, 1, 0, "line", 4, [("total", "0")], None)]


@pytest.mark.parametrize("hostile", [
    {**FITS, "codes": "__import__('os').system('id')"},  # text where the codes go: read, never run
    {**FITS, "events": [[1, 1, 0, "line", "four", [], None]]},
    {**FITS, "events": [[1, 1, 0, "line", 4, [["total", {"nested": 1}]], None]]},
    {key: value for key, value in FITS.items() if key != "tool"},
])
def test_a_batch_that_does_not_fit_is_a_protocol_error(hostile):
    with pytest.raises(RelayError) as caught:
        batch(hostile, "record")
    assert caught.value.code == "protocol_error" and caught.value.hint


@pytest.mark.parametrize("value", ["__import__('os').system('id')", repr("[1, 2]"), repr("{bad"),
                                   "'" + "x" * 9_000_000 + "'"])
def test_an_answer_that_is_no_json_object_is_a_protocol_error(value):
    with pytest.raises(RelayError) as caught:
        answer(value, "record")
    assert caught.value.code == "protocol_error"
