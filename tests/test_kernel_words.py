"""The magics' words: each word the grammar knows is run by exactly one method of one group of words."""

from __future__ import annotations

from jupyter_debug_relay import Relay
from jupyter_debug_relay.kernel.commands import Commands
from jupyter_debug_relay.kernel.grammar import SESSION_COMMANDS
from jupyter_debug_relay.kernel.parsing import BP_COMMANDS


def test_every_word_of_the_grammar_has_one_method_and_every_method_a_word():
    with Relay() as relay:
        words = set(Commands(relay).words)
    said = {f"do_{verb}" for verb in SESSION_COMMANDS} | {f"bp_{verb.replace('-', '_')}" for verb in BP_COMMANDS}
    assert words - {"bp_line"} == said, (words ^ said)


def test_a_word_run_on_the_context_of_the_kernel_changes_the_current_session_for_every_group(write):
    program = write("app.py", "x = 1\nprint(x)\n")
    with Relay() as relay:
        commands = Commands(relay)
        assert commands.run_session("status").text.startswith("error session_not_found")
        commands.run_session("create --name empty")  # a word of one group makes a session current ...
        assert commands.current is not None and commands.run_session("watch list").text.startswith("no watch")
        started = commands.run_session(f"launch {program}")  # ... and another group's word sees the new one
        assert started.text.startswith("s2: "), started.text
        assert commands.run_session("status").text.startswith("s2 (debugpy"), commands.run_session("status").text
        commands.run_session("stop")
