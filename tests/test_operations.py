"""The operations layer alone: every operation's bad inputs are refused naming the field; runs on a bare engine."""

from __future__ import annotations

import asyncio
import types
import typing

import pytest
from pydantic.fields import FieldInfo

from jupyter_debug_relay.engine.manager import SessionManager
from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.operations import OPERATIONS, parse
from jupyter_debug_relay.store.profiles import ProfileStore


def _kinds(annotation: object) -> list[object]:
    """The plain types a (possibly Optional, Annotated or union) annotation admits."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _kinds(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [k for arg in typing.get_args(annotation) for k in _kinds(arg)]
    return [] if annotation is type(None) else [annotation]


def wrong_value(info: FieldInfo) -> object:
    """A value of a type the field admits in none of its forms (a string for a number, a number for a string)."""
    kinds = _kinds(info.annotation)
    if any(typing.get_origin(k) is typing.Literal for k in kinds):
        return "no-such-choice"
    plain = tuple(typing.get_origin(k) or k for k in kinds)
    return next(v for v in ("7", 5, ["k"], {"k": 1}, 2.5) if not isinstance(v, plain) or isinstance(v, bool))


CASES = [(name, field) for name, op in OPERATIONS.items() for field in op.params.model_fields]


@pytest.mark.parametrize(("name", "field"), CASES, ids=[f"{n}.{f}" for n, f in CASES])
def test_a_wrong_typed_argument_is_refused_naming_its_field(name, field):
    info = OPERATIONS[name].params.model_fields[field]
    with pytest.raises(RelayError) as caught:
        parse(name, {field: wrong_value(info)})
    assert caught.value.code == "invalid_request"
    assert field in caught.value.details["fields"], caught.value.message
    assert repr(field) in caught.value.message and caught.value.hint.startswith(f"{name} takes:")


@pytest.mark.parametrize(("name", "args", "field"), [
    ("variables", {"ref": 0}, "ref"),
    ("variables", {"ref": 3, "count": 10_001}, "count"),
    ("stack", {"start": -1}, "start"),
    ("stack", {"levels": 0}, "levels"),
    ("add_breakpoint", {"path": "a.py", "line": 0}, "line"),
    ("add_breakpoint", {"path": "", "line": 3}, "path"),
    ("attach", {"port": 70000}, "port"),
    ("next", {"timeout": -0.5}, "timeout"),
    ("evaluate", {"expression": ""}, "expression"),
    ("set_exceptions", {"mode": "sometimes"}, "mode"),
    ("launch", {"args": ["ok", 3]}, "args.1"),
])
def test_an_argument_out_of_bounds_is_refused_naming_its_field(name, args, field):
    with pytest.raises(RelayError) as caught:
        parse(name, args)
    assert caught.value.code == "invalid_request" and caught.value.details["field"] == field


def test_defaults_and_caps():
    assert parse("next", {})[1].model_dump() == {"session": None, "timeout": 10.0, "thread_id": None, "wait": True}
    assert parse("wait", {"timeout": 10**9})[1].timeout == 300.0
    assert parse("variables", {"ref": 1})[1].count == 100


def test_an_unknown_operation_and_non_object_arguments_are_refused():
    with pytest.raises(RelayError, match="Unknown operation 'explode'"):
        parse("explode", {})
    with pytest.raises(RelayError, match="must be an object"):
        parse("next", ["s1"])


def test_every_operation_is_declared_whole():
    for name, op in OPERATIONS.items():
        assert op.name == name and op.summary.endswith(".") and op.returns is not None
        assert all(code in {"session_not_found", "file_not_found", "invalid_line", "syntax_error",
                            "invalid_condition", "not_paused", "not_running", "timeout", "target_exited",
                            "adapter_failed", "connection_failed", "unsupported", "invalid_request",
                            "protocol_error", "evaluation_failed", "not_found", "unauthorized"}
                   for code in op.errors), name


class Bare:
    """The context an operation runs against, without a Relay: a session manager and a timeout."""

    def __init__(self) -> None:
        self.manager = SessionManager()
        self.profiles = ProfileStore()
        self.request_timeout = 5.0


def run(ctx: Bare, name: str, args: dict) -> object:
    op, params = parse(name, args)
    return asyncio.run(op.run(ctx, params))


def test_breakpoint_operations_run_on_a_bare_engine(tmp_path):
    app = tmp_path / "app.py"
    app.write_text("x = 1\ny = 2\n")
    ctx = Bare()
    added = run(ctx, "add_breakpoint", {"path": str(app), "line": 2, "condition": "x > 0"})["breakpoint"]
    assert (added.line, added.condition, added.status) == (2, "x > 0", "pending")
    assert run(ctx, "update_breakpoint", {"id": added.id, "enabled": False})["breakpoint"].enabled is False
    assert run(ctx, "set_exceptions", {"mode": "raised"}) == {"exceptions": "raised", "exception_types": []}
    listed = run(ctx, "breakpoints", {})
    assert [bp.id for bp in listed["breakpoints"]] == [added.id] and listed["exceptions"] == "raised"
    assert run(ctx, "remove_breakpoint", {"id": added.id})["breakpoint"].id == added.id
    with pytest.raises(RelayError) as caught:
        run(ctx, "add_breakpoint", {"kind": "function"})
    assert caught.value.code == "invalid_request" and "needs name" in caught.value.message


def test_a_session_operation_without_sessions_says_so():
    with pytest.raises(RelayError) as caught:
        run(Bare(), "status", {})
    assert caught.value.code == "session_not_found" and caught.value.hint


def test_a_renamed_session_is_still_found_by_the_name_it_had():
    from jupyter_debug_relay.backends.ez.backend import EzBackend

    async def check() -> None:
        manager = SessionManager()
        unstarted = lambda events: EzBackend.__new__(EzBackend)  # noqa: E731 - never started: only looked up
        try:
            worker = manager.create(unstarted, "ray-worker:41")  # attached before the cluster named its task
            worker.rename("ratio:41")
            assert manager.get("ray-worker:41") is worker and manager.get("ratio:41") is worker
            other = manager.create(unstarted, "ray-worker:41")  # the old name given again: it wins
            assert manager.get("ray-worker:41") is other and manager.get("ratio:41") is worker
            with pytest.raises(RelayError) as caught:
                manager.get("area:41")
            assert caught.value.code == "session_not_found"
        finally:
            await manager.close()

    asyncio.run(check())


@pytest.mark.parametrize(("name", "expected"), [("ratio", "ratio:41"), ("Shapes.area", "Shapes.area:41"),
                                                ("my  task\tone", "my-task-one:41"), ("ray-worker", "ray-worker:41")])
def test_a_ray_session_name_is_one_word_whatever_the_task_is_called(name, expected):
    from jupyter_debug_relay.backends.ray.cluster import RayTask
    from jupyter_debug_relay.operations.ray import _session_name

    task = RayTask(id="0" * 12, worker_id="0" * 56, name=name, kind="task", job="01000000", node="1" * 12, pid=41,
                   host="127.0.0.1", port=5678, paused_threads=1)
    assert _session_name(task) == expected  # given as `--session NAME` in a magic, a space would split it
