"""The split of a launched target's stdout into the program's text and the boot's marked log lines."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jupyter_debug_relay.backends.debugpy.log_lines import LIMIT, LogLines, marks

TOKEN = "0123abcd4567ef89"
START, END = marks(TOKEN)


def split(pieces: list[str], token: str = TOKEN) -> list[tuple[str, str]]:
    """What LogLines passes on for ``pieces``, as (category, text), the texts of one category run joined."""
    out: list[tuple[str, str]] = []

    def take(category: str, text: str) -> None:
        if out and out[-1][0] == category:
            out[-1] = (category, out[-1][1] + text)
        else:
            out.append((category, text))

    lines = LogLines(token, take)
    for piece in pieces:
        lines.feed(piece)
    lines.flush()
    return out


def cut(text: str, at: list[int]) -> list[str]:
    points = sorted({min(i, len(text)) for i in at})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


def test_a_log_line_between_two_prints_is_told_apart_in_its_place():
    stream = f"before 0\n{START}log 0\n{END}after 0\n"
    assert split([stream]) == [("stdout", "before 0\n"), ("console", "log 0\n"), ("stdout", "after 0\n")]


@given(st.lists(st.tuples(st.booleans(), st.text(alphabet="ab\n\x00\x02\x03é", max_size=12)), max_size=8),
       st.lists(st.integers(min_value=0, max_value=200), max_size=10))
def test_however_the_pipe_cuts_the_stream_the_split_is_the_same(parts: list[tuple[bool, str]], at: list[int]):
    stream = "".join(f"{START}{text}{END}" if logged else text for logged, text in parts)
    assert split(cut(stream, at)) == split([stream])
    assert "".join(text for _, text in split([stream])) == "".join(text for _, text in parts)


def test_marks_of_another_token_are_the_programs_text():
    other_start, other_end = marks("ffffffffffffffff")
    forged = f"{other_start}not a log line\n{other_end}"
    assert split([forged]) == [("stdout", forged)]


def test_what_begins_a_mark_is_held_only_until_it_is_known_not_to_be_one():
    lines: list[tuple[str, str]] = []
    splitter = LogLines(TOKEN, lambda category, text: lines.append((category, text)))
    splitter.feed("text\x00" + TOKEN[:4])
    assert lines == [("stdout", "text")]
    splitter.feed("no mark")
    assert lines == [("stdout", "text"), ("stdout", "\x00" + TOKEN[:4] + "no mark")]


def test_a_log_line_without_its_end_is_passed_on_past_the_limit_and_at_the_end():
    held = "x" * (LIMIT + 1)
    assert split([START + held]) == [("console", held)]
    assert split([START + "cut short"]) == [("console", "cut short")]
