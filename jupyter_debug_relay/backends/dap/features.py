"""The DAP verbs a backend checks against the adapter's capabilities: breakpoints of every kind, memory, and more.

``DapFeatures`` is a part of ``DapBackend``; it holds no state of its own.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ...errors import RelayError, Unsupported
from ...model import Breakpoint, BreakpointResult, Frame, Variable
from ...protocols.dap import DapRequestError
from . import messages as wire

EXCEPTION_FILTERS = {"raised": ["raised", "uncaught"], "uncaught": ["uncaught"], "none": []}
REPLACED_SETS = {  # kind -> (capability, what it is called, the request that replaces the whole set)
    "data": ("supportsDataBreakpoints", "data breakpoints", "setDataBreakpoints"),
    "instruction": ("supportsInstructionBreakpoints", "instruction breakpoints", "setInstructionBreakpoints"),
}
BREAKPOINT_OPTIONS = (  # Breakpoint field, DAP key, the capability it needs, what it is called
    ("condition", "condition", "supportsConditionalBreakpoints", "conditional breakpoints"),
    ("hit_condition", "hitCondition", "supportsHitConditionalBreakpoints", "hit conditions"),
    ("log_message", "logMessage", "supportsLogPoints", "logpoints"),
)


def _present(fields: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


class DapFeatures:
    """Breakpoints and capability-gated requests of ``DapBackend`` (which provides the attributes below)."""

    adapter_name: str
    capabilities: dict[str, Any]
    config: dict[str, Any]
    _bp_ids: dict[int, int]
    _bp_requests: set[asyncio.Future[None]]
    _early_bp_events: dict[int, dict[str, Any]]
    _line_bps: dict[str, dict[int, int]]
    _stopping: dict[int, str | None]
    _conditions: dict[int, str]
    _function_bps: dict[str, int]
    _instruction_refs: dict[int, str]
    _data_bps: dict[str, dict[str, Any]]
    _instruction_bps: dict[tuple[str, int], dict[str, Any]]
    _exit_code: int | None
    events: Any
    exception_types: tuple[str, ...]
    EXCEPTION_ROOT: str | None = None  # the root of the adapter's exception tree (exceptionOptions paths)

    if TYPE_CHECKING:
        async def request(self, command: str, arguments: dict[str, Any] | None = None,
                          timeout: float | None = None) -> Any: ...

        def violated(self, error: RelayError) -> None: ...

        def breakpoint_changed(self, bp_id: int, result: BreakpointResult) -> None: ...

        def _known(self, var: Variable, frame_id: int | None) -> Variable: ...

    # -- breakpoints ------------------------------------------------------------------------

    def _results(self, bps: list[Breakpoint], answer: wire.BreakpointsResponse) -> list[BreakpointResult]:
        results = []
        for bp, theirs in zip(bps, answer["breakpoints"], strict=False):
            if theirs.get("id") is not None:
                self._bp_ids[theirs["id"]] = bp.id
                theirs = {**theirs, **self._early_bp_events.pop(theirs["id"], {})}
            results.append(wire.breakpoint_result(theirs))
        return results

    @contextlib.contextmanager
    def _setting_breakpoints(self) -> Iterator[None]:
        """While a set of breakpoints is sent and its answer recorded (a stop meanwhile waits: ``_hit_ids``)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._bp_requests.add(done)
        try:
            yield
        finally:
            self._bp_requests.discard(done)
            done.set_result(None)
            if not self._bp_requests:
                self._early_bp_events.clear()

    def _on_breakpoint_event(self, theirs: dict[str, Any]) -> None:
        """A ``breakpoint`` event: tell the relay of the change, or keep it for the answer still on its way.

        An adapter can verify a breakpoint before it answers the setBreakpoints that made it (debugpy does so
        for a module already loaded): the event is newer than the answer, so it is folded into the answer.
        """
        their_id = theirs.get("id")
        if their_id is None:
            return
        if their_id in self._bp_ids:
            self.breakpoint_changed(self._bp_ids[their_id], wire.breakpoint_result(theirs))
        elif self._bp_requests:
            self._early_bp_events[their_id] = theirs

    async def _hit_ids(self, theirs: list[int]) -> list[int]:
        """The relay's ids of the breakpoints a stop names in the adapter's ids.

        A breakpoint set while the target runs can be hit before the answer that tells its id arrives:
        the stop waits for the sets on their way, and an id still unknown is left out (never shown as the relay's).
        """
        if self._bp_requests:
            await asyncio.wait(list(self._bp_requests))
        return [self._bp_ids[i] for i in theirs if i in self._bp_ids]

    def _breakpoints_at(self, frame: Frame) -> list[int]:
        """The relay's breakpoints at a frame, for adapters whose ``stopped`` event names none."""
        at = self._line_bps.get(frame.path or "", {}).get(frame.line) or self._function_bps.get(frame.name)
        return [at] if at else []

    def unsupported(self, feature: str) -> Unsupported:
        return Unsupported(self.adapter_name, feature)

    def _need(self, capability: str, feature: str) -> None:
        """Raise ``unsupported`` unless the adapter's ``initialize`` answer set ``capability``."""
        if not self.capabilities.get(capability):
            raise self.unsupported(f"{feature} (its capabilities lack {capability})")

    def _entries(self, bps: list[Breakpoint], kind: str) -> tuple[list[dict[str, Any]], dict[int, RelayError]]:
        """The DAP entries of the breakpoints the adapter can take, and why it cannot take the others."""
        entries, refused = [], {}
        names: dict[str, Breakpoint] = {}  # function breakpoints sent by name: the adapter keeps one per name
        for index, bp in enumerate(bps):
            entry: dict[str, Any] = {"line": bp.line} if kind == "line" else {"name": bp.name}
            try:
                self.check_condition(bp)
                for field, key, capability, feature in BREAKPOINT_OPTIONS:
                    if getattr(bp, field):
                        self._need(capability, feature)
                        entry[key] = getattr(bp, field)
                if bp.task:
                    entry = {**entry, "condition": self.sent_condition(bp)}
                if kind == "function":
                    entry = self.function_entry(bp, entry)
                    other = names.setdefault(entry["name"], bp)
                    if other is not bp:
                        raise RelayError("invalid_request", f"{self.adapter_name} keeps one function breakpoint per "
                                         f"name, and breakpoint {other.id} ({other.name}) already stops on "
                                         f"{entry['name']!r}.", "Remove one of them, or use a line breakpoint.")
            except RelayError as exc:  # unsupported, or invalid_condition
                refused[index] = exc
                continue
            entries.append(entry)
        return entries, refused

    def function_entry(self, bp: Breakpoint, entry: dict[str, Any]) -> dict[str, Any]:
        """The ``setFunctionBreakpoints`` entry of ``bp``; an adapter that matches names its own way changes it."""
        return entry

    def check_condition(self, bp: Breakpoint) -> None:
        """Refuse a condition the target's language rejects; a generic adapter judges its own (it says so)."""

    def sent_condition(self, bp: Breakpoint) -> str | None:
        """The condition the adapter is given for ``bp``: its own, and (a Python target) its ``task`` test."""
        if bp.task:
            raise self.unsupported("breakpoints of one asyncio task (task)")
        return bp.condition

    def _merge(self, bps: list[Breakpoint], answer: dict[str, Any], refused: dict[int, RelayError]
               ) -> list[BreakpointResult]:
        """One result per breakpoint: the adapter's for those sent, unverified with the reason for the others."""
        sent = [bp for index, bp in enumerate(bps) if index not in refused]
        theirs = iter(self._results(sent, answer))
        return [BreakpointResult(verified=False, message=refused[index].message, refused=True) if index in refused
                else next(theirs, BreakpointResult(verified=False)) for index in range(len(bps))]

    async def set_breakpoints(self, path: str, bps: list[Breakpoint]) -> list[BreakpointResult]:
        entries, refused = self._entries(bps, "line")
        with self._setting_breakpoints():
            answer = await self.request(
                "setBreakpoints", {"source": {"path": path}, "breakpoints": entries, "sourceModified": False}
            )
            results = self._merge(bps, answer, refused)
            self._line_bps[path] = {r.line or bp.line or 0: bp.id for bp, r in zip(bps, results, strict=True)
                                    if r.verified}
        self._remember_conditions(bps)
        for bp in bps:
            self._stopping.pop(bp.id, None)
            if bp.id in self._line_bps[path].values() and not bp.log_message and not bp.hit_condition:
                self._stopping[bp.id] = self.sent_condition(bp)
        return results

    async def set_function_breakpoints(self, bps: list[Breakpoint]) -> list[BreakpointResult]:
        self._need("supportsFunctionBreakpoints", "function breakpoints")
        entries, refused = self._entries(bps, "function")
        with self._setting_breakpoints():
            answer = await self.request("setFunctionBreakpoints", {"breakpoints": entries})
            results = self._merge(bps, answer, refused)
            sent = [(bp, r) for index, (bp, r) in enumerate(zip(bps, results, strict=True)) if index not in refused]
            self._function_bps = {entry["name"]: bp.id for entry, (bp, r) in zip(entries, sent, strict=True)
                                  if r.verified}
        self._remember_conditions(bps)
        return results

    def _remember_conditions(self, bps: list[Breakpoint]) -> None:
        for bp in bps:
            self._conditions.pop(bp.id, None)
            if bp.condition:
                self._conditions[bp.id] = bp.condition

    async def set_exception_breakpoints(self, mode: str) -> None:
        offered = {f.get("filter") for f in self.capabilities.get("exceptionBreakpointFilters") or []}
        if not offered:
            raise self.unsupported("exception breakpoints")
        filters = [f for f in EXCEPTION_FILTERS[mode] if f in offered]
        arguments: dict[str, Any] = {"filters": filters}
        if self.exception_types and filters:
            arguments["exceptionOptions"] = self.exception_options(mode)
        await self.request("setExceptionBreakpoints", arguments)

    def exception_options(self, mode: str) -> list[dict[str, Any]]:
        """DAP ``exceptionOptions`` limiting ``mode`` to ``exception_types``; the path's root is the adapter's own."""
        if self.EXCEPTION_ROOT is None:
            raise self.unsupported("exception breakpoints limited to some types")
        self._need("supportsExceptionOptions", "exception breakpoints limited to some types")
        path = [{"names": [self.EXCEPTION_ROOT]}, {"names": list(self.exception_types)}]
        return [{"path": path, "breakMode": "always" if mode == "raised" else "unhandled"}]

    # -- what only some adapters can do (each checked against the adapter's capabilities) ---

    async def _gated(self, capability: str, feature: str, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self._need(capability, feature)
        return await self.request(command, arguments)

    async def data_breakpoint_info(self, name: str, ref: int | None, frame_id: int | None) -> dict[str, Any]:
        """Whether ``name`` (in container ``ref``, or in frame ``frame_id``) can be watched: dataId, accessTypes."""
        args: dict[str, Any] = {"name": name}
        if ref:
            args["variablesReference"] = ref
        if frame_id is not None:
            args["frameId"] = frame_id
        return await self._gated("supportsDataBreakpoints", "data breakpoints", "dataBreakpointInfo", args)

    async def _replace_set(self, kind: str, table: dict[Any, dict[str, Any]], key: Any,
                           entry: dict[str, Any] | None) -> dict[str, Any]:
        """Add (or with ``entry=None`` remove) one entry of a set the adapter replaces whole; its answer for it."""
        capability, feature, command = REPLACED_SETS[kind]
        self._need(capability, feature)
        before = dict(table)
        if entry is None:
            table.pop(key, None)
        else:
            table[key] = entry
        try:
            answer = await self.request(command, {"breakpoints": list(table.values())})
        except RelayError:
            table.clear()
            table.update(before)
            raise
        results = answer["breakpoints"]
        index = list(table).index(key) if key in table else -1
        return results[index] if 0 <= index < len(results) else {}

    async def set_data_breakpoint(self, data_id: str, access_type: str | None, condition: str | None,
                                  hit_condition: str | None) -> dict[str, Any]:
        entry = {"dataId": data_id, "accessType": access_type, "condition": condition, "hitCondition": hit_condition}
        return await self._replace_set("data", self._data_bps, data_id, _present(entry))

    async def remove_data_breakpoint(self, data_id: str) -> None:
        await self._replace_set("data", self._data_bps, data_id, None)

    async def set_instruction_breakpoint(self, reference: str, offset: int, condition: str | None,
                                         hit_condition: str | None) -> dict[str, Any]:
        entry = {"instructionReference": reference, "offset": offset, "condition": condition,
                 "hitCondition": hit_condition}
        return await self._replace_set("instruction", self._instruction_bps, (reference, offset), _present(entry))

    async def remove_instruction_breakpoint(self, reference: str, offset: int) -> None:
        await self._replace_set("instruction", self._instruction_bps, (reference, offset), None)

    async def disassemble(self, reference: str | None, frame_id: int | None, offset: int, instruction_offset: int,
                          count: int) -> list[dict[str, Any]]:
        """``count`` instructions at ``reference``, else at the instruction pointer of frame ``frame_id``."""
        self._need("supportsDisassembleRequest", "disassembly")
        reference = reference or (self._instruction_refs.get(frame_id) if frame_id is not None else None)
        if not reference:
            raise RelayError("invalid_request", f"{self.adapter_name} gave no instruction pointer for this frame.",
                             "Pass a memory reference (an address such as 0x401136).")
        answer = await self.request("disassemble", {
            "memoryReference": reference, "offset": offset, "instructionOffset": instruction_offset,
            "instructionCount": count, "resolveSymbols": True})
        return answer["instructions"]

    async def set_expression(self, expression: str, value: str, frame_id: int | None) -> Variable:
        args: dict[str, Any] = {"expression": expression, "value": value}
        if frame_id is not None:
            args["frameId"] = frame_id
        try:
            answer = await self._gated("supportsSetExpression", "setting expressions", "setExpression", args)
        except DapRequestError as exc:
            raise wire.evaluation_failed(f"{expression} = {value}", exc.message) from None
        return self._known(wire.variable(expression, answer["value"], answer, expression), frame_id)

    async def read_memory(self, reference: str, offset: int, count: int) -> dict[str, Any]:
        answer = await self._gated("supportsReadMemoryRequest", "reading memory", "readMemory",
                                   {"memoryReference": reference, "offset": offset, "count": count})
        try:
            data = base64.b64decode(answer.get("data") or "", validate=True)
        except binascii.Error:
            error = RelayError("protocol_error", f"{self.adapter_name} sent a readMemory response whose data is not "
                               "base64.", details={"peer": self.adapter_name, "field": "data", "expected": "base64"})
            self.violated(error)
            raise error from None
        return {"address": answer["address"], "data": data, "unreadable": answer.get("unreadableBytes") or 0}

    async def write_memory(self, reference: str, offset: int, data: bytes, allow_partial: bool) -> int:
        answer = await self._gated("supportsWriteMemoryRequest", "writing memory", "writeMemory", {
            "memoryReference": reference, "offset": offset, "data": base64.b64encode(data).decode(),
            "allowPartial": allow_partial})
        written = answer.get("bytesWritten")
        return len(data) if written is None else written

    async def modules(self, start: int, count: int | None) -> list[dict[str, Any]]:
        args = {"startModule": start, **({"moduleCount": count} if count else {})}
        answer = await self._gated("supportsModulesRequest", "modules", "modules", args)
        return answer["modules"]

    async def loaded_sources(self) -> list[dict[str, Any]]:
        answer = await self._gated("supportsLoadedSourcesRequest", "loaded sources", "loadedSources", {})
        return answer["sources"]

    async def restart(self) -> None:
        """The adapter's own ``restart`` with the same configuration; the target runs again."""
        await self._gated("supportsRestartRequest", "restart", "restart", {"arguments": self.config})
        self._exit_code = None
        self.events.on_continued(None)
