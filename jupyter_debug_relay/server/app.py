"""The HTTP API: an ASGI app over a ``Relay``, every route made from the operations table."""

from __future__ import annotations

import asyncio
import functools
import hmac
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route as StarletteRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..backends.dap.registry import BUILTIN
from ..errors import CODES, RelayError
from ..operations import OPERATIONS
from ..redact import mask
from ..version import __version__
from . import calls
from .persist import Persistence, ProfilePut, parse_body
from .routes import ROUTES, Route, start_options

log = logging.getLogger(__name__)

MAX_BODY = 1 << 20  # bytes of a request body
KEEPALIVE = 15.0  # seconds between SSE comments on a quiet stream

BACKENDS = ("debugpy", "dap", "mycel", "ez")


@dataclass
class ServerConfig:
    """How the server listens and what it lets through."""

    host: str = "127.0.0.1"
    port: int = 8765
    token: str = ""
    redact: bool = True
    cors_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()  # Host names accepted beside the listening address and localhost
    max_body: int = MAX_BODY
    mcp: bool = True
    mcp_tools: str = "lean"  # lean: the tools of a whole task and `operation`; all: every operation a tool
    persist: bool = False  # save the breakpoints in the home on every change, restore them at start (standalone)
    home: str = ""  # where profiles and saved breakpoints live; default: $JUPYTER_DEBUG_RELAY_HOME or the data dir
    tls_cert: str = ""  # a PEM certificate (chain) and its key: serve https
    tls_key: str = ""
    insecure: bool = False  # serve plain HTTP beyond loopback all the same (said loudly)

    def public(self) -> dict[str, Any]:
        """The configuration as ``GET /config`` shows it (no token)."""
        out = asdict(self)
        out.pop("token")
        return out


@dataclass
class _Start:
    """Where a live event stream starts: the seq of the last event before it."""

    seq: int


def error_response(exc: RelayError, status: int | None = None) -> JSONResponse:
    body = {"code": exc.code, "message": exc.message, "hint": exc.hint, "details": exc.details}
    headers = {"WWW-Authenticate": "Bearer"} if exc.code == "unauthorized" else None
    return JSONResponse({"error": body}, status or (CODES[exc.code].status if exc.code in CODES else 400),
                        headers=headers)


class Guard:
    """Host check (DNS rebinding), bearer token (all but ``GET /health``) and a request body cap."""

    def __init__(self, app: ASGIApp, config: ServerConfig) -> None:
        self.app, self.config = app, config
        self._token = config.token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, self._capped(receive), send)

    def _refusal(self, scope: Scope) -> Response | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if host not in self._hosts(scope):
            return error_response(RelayError("forbidden", f"This server does not answer to the Host {host!r}."))
        if scope["method"] == "GET" and scope["path"] == "/health":
            return None
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self._token):
            return error_response(RelayError("unauthorized", "A valid bearer token is needed.",
                                             "Send Authorization: Bearer TOKEN (the token the server was given or "
                                             "the one in its file in the Jupyter runtime dir)."))
        length = headers.get("content-length", "0")
        if not length.isdigit() or int(length) > self.config.max_body:
            return error_response(_too_large(self.config.max_body))
        return None

    def _hosts(self, scope: Scope) -> set[str]:
        port = (scope.get("server") or (None, self.config.port))[1]
        names = {self.config.host, "localhost", *self.config.allowed_hosts}
        if self.config.host in ("127.0.0.1", "0.0.0.0"):
            names.add("127.0.0.1")
        if self.config.host in ("::1", "::"):
            names.add("[::1]")
        return {f"{name}:{port}" for name in names} | set(self.config.allowed_hosts)

    def _capped(self, receive: Receive) -> Receive:
        seen = 0
        cap = self.config.max_body

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > cap:
                raise _too_large(cap)
            return message

        return counted


def _start_elsewhere(exc: RelayError, session: Any) -> RelayError:
    """``exc``; a start into a session not made yet says how to make it over HTTP, where the path names one."""
    if exc.code != "session_not_found" or exc.details.get("field") != "session":
        return exc
    body = json.dumps({"name": str(session)})
    return RelayError(exc.code, exc.message, f"Make it first (create: POST /sessions {body}), then send this request "
                      "again.", exc.details)


def _too_large(cap: int) -> RelayError:
    return RelayError("too_large", f"The request body is larger than {cap} bytes (or its length is not given "
                      "right).")


def _answering(handler: Callable[[Any, Request], Any]) -> Callable[[Any, Request], Any]:
    """An endpoint whose ``RelayError`` becomes its error answer."""

    @functools.wraps(handler)
    async def endpoint(self: Any, request: Request) -> Response:
        try:
            return await handler(self, request)
        except RelayError as exc:
            return error_response(exc)

    return endpoint


class RelayApp:
    """The endpoints over one relay; ``app`` is the ASGI application."""

    def __init__(self, relay: Any, config: ServerConfig, shutdown: Callable[[], None] | None = None,
                 mcp_app: ASGIApp | None = None) -> None:
        self.relay, self.config, self._shutdown = relay, config, shutdown
        self.closing = asyncio.Event()
        self.persistence = Persistence(relay, config.home)
        routes = [
            StarletteRoute("/breakpoint-profiles/{name}", self.get_profile, methods=["GET"]),
            StarletteRoute("/breakpoint-profiles/{name}", self.put_profile, methods=["PUT"]),
        ]
        routes += [StarletteRoute(r.path, self._endpoint(r), methods=[r.method], name=r.op_name) for r in ROUTES]
        routes += [
            StarletteRoute("/health", self.health, methods=["GET"]),
            StarletteRoute("/info", self.info, methods=["GET"]),
            StarletteRoute("/config", self.get_config, methods=["GET"]),
            StarletteRoute("/shutdown", self.shutdown, methods=["POST"]),
            StarletteRoute("/openapi.json", self.openapi, methods=["GET"]),
            StarletteRoute("/sessions/{session}/events", self.events, methods=["GET"]),
        ]
        app = Starlette(routes=routes, exception_handlers={HTTPException: self._http_error, Exception: self._crash})
        if mcp_app is not None:
            app.mount("/mcp", mcp_app)
        inner: ASGIApp = Guard(app, config)
        if config.cors_origins:
            inner = CORSMiddleware(inner, allow_origins=list(config.cors_origins), allow_methods=["*"],
                                   allow_headers=["Authorization", "Content-Type", "Last-Event-ID"])
        self.app = inner
        self._openapi: dict[str, Any] | None = None

    # -- operations ---------------------------------------------------------------------------

    def _endpoint(self, route: Route) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                return JSONResponse(await self._answer(route, request))
            except RelayError as exc:
                return error_response(exc)
        return endpoint

    async def _answer(self, route: Route, request: Request) -> Any:
        body = None if route.in_query else await _json_body(request)
        args = route.arguments(dict(request.path_params), dict(request.query_params), body)
        if "session" in args and not route.op.takes_session and "session" not in route.op.params.model_fields:
            await calls.run(self.relay, "status", {"session": args.pop("session")})  # 404 for a session not there
        redact = self.config.redact
        if route.starts:
            options = start_options(route.op_name, args)
            try:
                return await calls.run_start(self.relay, route.op_name, args, options.wait, options.timeout, redact)
            except RelayError as exc:
                raise _start_elsewhere(exc, args.get("session")) from None
        if route.waits:
            return await calls.run_waiting(self.relay, route.op_name, args, redact)
        return await calls.run(self.relay, route.op_name, args, redact)

    # -- the server ---------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def info(self, request: Request) -> Response:
        return JSONResponse({"name": "jupyter_debug_relay", "version": __version__, "backends": list(BACKENDS),
                             "adapters": sorted(BUILTIN), "operations": sorted(OPERATIONS),
                             "capabilities": ["sse", "openapi", "redaction"] + (["mcp"] if self.config.mcp else [])})

    async def get_config(self, request: Request) -> Response:
        return JSONResponse(self.config.public())

    async def shutdown(self, request: Request) -> Response:
        """End every session (reaping their targets), then stop serving."""
        self.closing.set()
        if self.relay.on_loop():  # served on the relay's loop: end the sessions here, the owner closes the relay
            await self.relay.manager.close()
        else:
            await asyncio.to_thread(self.relay.close)
        if self._shutdown is not None:
            asyncio.get_running_loop().call_later(0.05, self._shutdown)
        return JSONResponse({"shutting_down": True})

    async def openapi(self, request: Request) -> Response:
        if self._openapi is None:
            from .openapi import document

            self._openapi = await asyncio.to_thread(document)  # built once, off the loop that serves
        return JSONResponse(self._openapi)

    # -- breakpoint profiles, export and import ------------------------------------------------

    def _shown(self, data: Any) -> JSONResponse:
        return JSONResponse(mask(data) if self.config.redact else data)

    @_answering
    async def get_profile(self, request: Request) -> Response:
        return self._shown(await asyncio.to_thread(self.persistence.store.load, request.path_params["name"]))

    @_answering
    async def put_profile(self, request: Request) -> Response:
        """Keep the given set under the name, or (no breakpoints given) the relay's breakpoints now."""
        name = request.path_params["name"]
        given = parse_body(ProfilePut, "put_breakpoint_profile", await _json_body(request))
        now = await asyncio.to_thread(self.persistence.current)
        breakpoints = now["breakpoints"] if given.breakpoints is None else [
            bp.model_dump(exclude_none=True) for bp in given.breakpoints]
        saved = await asyncio.to_thread(self.persistence.store.save, name, breakpoints,
                                        given.exceptions or now["exceptions"])
        return self._shown(saved)

    # -- events -------------------------------------------------------------------------------

    async def events(self, request: Request) -> Response:
        """Server-Sent Events of one session: live, or strictly after ``Last-Event-ID``, each event once."""
        try:
            status = await calls.run(self.relay, "status", {"session": request.path_params["session"]})
        except RelayError as exc:
            return error_response(exc)
        session = status["session"]["id"]
        last = request.headers.get("last-event-id") or request.query_params.get("last_event_id")
        try:
            after = int(last) if last is not None else None
        except ValueError:
            return error_response(RelayError("invalid_request", f"Last-Event-ID must be an event's id, not {last!r}.",
                                             details={"field": "Last-Event-ID"}))
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        unsubscribe, newest = await asyncio.to_thread(
            self.relay.subscribe_after, lambda event: loop.call_soon_threadsafe(queue.put_nowait, event), session)
        if after is None:  # a live stream says where it starts, so a client that loses it resumes from there
            after, backlog = newest, [_Start(newest)]
        else:
            backlog = [e for e in await asyncio.to_thread(self.relay.events_since, after) if e.session == session]
        return StreamingResponse(self._stream(request, queue, backlog, after, unsubscribe),
                                 media_type="text/event-stream", headers={"Cache-Control": "no-store"})

    async def _stream(self, request: Request, queue: asyncio.Queue[Any], backlog: list[Any], after: int | None,
                      unsubscribe: Callable[[], None]) -> AsyncIterator[str]:
        sent = after if after is not None else 0
        try:
            yield ": stream open\n\n"
            for event in backlog:
                yield self._frame(event)
                sent = event.seq
            closing = asyncio.ensure_future(self.closing.wait())
            getter: asyncio.Future[Any] | None = None
            try:
                while not self.closing.is_set():
                    getter = asyncio.ensure_future(queue.get())
                    done, _ = await asyncio.wait({getter, closing}, timeout=KEEPALIVE,
                                                 return_when=asyncio.FIRST_COMPLETED)
                    if getter not in done:
                        getter.cancel()
                        if not done:
                            yield ": keepalive\n\n"
                        continue
                    event = getter.result()
                    if event.event == "dropped":
                        yield self._frame(event, with_id=False)
                    elif event.seq > sent:
                        yield self._frame(event)
                        sent = event.seq
            finally:
                closing.cancel()
                if getter is not None:
                    getter.cancel()
        finally:
            unsubscribe()

    def _frame(self, event: Any, with_id: bool = True) -> str:
        if isinstance(event, _Start):
            return f"id: {event.seq}\n\n"  # no data: sets the client's last event id, dispatches nothing
        data = event.to_dict()
        if self.config.redact:
            data = mask(data)
        head = f"id: {event.seq}\n" if with_id else ""
        return f"{head}event: {event.event}\ndata: {json.dumps(data, default=str)}\n\n"

    # -- errors -------------------------------------------------------------------------------

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "invalid_request")
        return error_response(RelayError(code, f"{request.method} {request.url.path}: {exc.detail}",
                                         "See GET /openapi.json for the endpoints."), exc.status_code)

    async def _crash(self, request: Request, exc: Exception) -> Response:
        if isinstance(exc, RelayError):
            return error_response(exc)
        log.exception("internal error on %s %s", request.method, request.url.path)
        return error_response(RelayError("internal_error", f"The server failed on this request: {exc!r}"))


async def _json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise RelayError("invalid_request", f"The request body is not JSON: {exc}.",
                         "Send a JSON object, e.g. {}.") from None
    except RecursionError:
        raise RelayError("invalid_request", "The request body is nested too deeply.") from None


def create_app(relay: Any, config: ServerConfig, shutdown: Callable[[], None] | None = None,
               mcp_app: ASGIApp | None = None) -> RelayApp:
    """The HTTP API over ``relay``; ``shutdown`` is called after ``POST /shutdown`` closed the relay."""
    return RelayApp(relay, config, shutdown, mcp_app)
