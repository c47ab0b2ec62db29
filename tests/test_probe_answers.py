"""A Python target's answers to the relay's probes (tasks, the recorder, the boot's looks) are read as data only."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_debug_relay.backends.debugpy.probe_answers import json_answer


def test_the_repr_of_a_json_text_is_its_document():
    assert json_answer(repr('{"1": [3, true]}'), 100) == {"1": [3, True]}


@pytest.mark.parametrize(("value", "why"), [
    ("__import__('os').system('touch /tmp/owned')", "not the text of a JSON document"),  # code, never run
    ("{'1': [3, None]}", "not the text of a JSON document"),  # a Python literal that is no string
    (repr("{not json"), "JSONDecodeError"),
    (repr("[" * 100_000 + "]" * 100_000), "RecursionError"),
    ("'" + "x" * 50 + "'", "over the 40"),
])
def test_anything_else_is_a_value_error_saying_why(value, why):
    with pytest.raises(ValueError, match=why):
        json_answer(value, 40 if "over" in why else 1_000_000)


@given(st.text(max_size=200))
def test_any_text_is_a_document_or_a_value_error(value):
    try:
        json_answer(value, 1_000)
    except ValueError:
        pass
