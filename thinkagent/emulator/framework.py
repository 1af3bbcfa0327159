"""The wire-API framework: what a wire module implements, and what it gets for free.

A wire API is a subclass of :class:`WireAPI` listed in
:data:`thinkagent.emulator.wires.WIRE_APIS`. It declares its routes; each route handler
is a plain function ``(WireRequest) -> JsonReply | StreamReply`` that raises
:class:`WireError` for a request the service refuses. The framework wraps every handler
so that, for every wire API alike:

1. the body is read, up to the API's :attr:`WireAPI.body_limit` (a larger one is refused
   at once with the API's own error, unread, and recorded without it), parsed (JSON) and
   recorded, credentials stripped (:mod:`~thinkagent.emulator.recording`); a method the
   route does not serve is refused with :meth:`WireAPI.method_not_allowed`;
2. :meth:`WireAPI.authenticate` may refuse it;
3. the next queued fault for this API is taken (:mod:`~thinkagent.emulator.faults`); an
   ``http`` fault refuses the request at once;
4. an unparseable JSON body is refused with a 400;
5. the handler runs: it validates, turns the request into a neutral conversation, gets a
   :class:`~thinkagent.emulator.model.Reply` from :meth:`EmulatorState.reply` (the
   script queue, else the brain) and renders it natively;
6. the reply is sent: a :class:`JsonReply` as one body, a :class:`StreamReply` as its
   pre-encoded events (batched into one write unless a per-chunk delay is set), with the
   pending stream fault applied (cut connection, in-stream error via
   :meth:`WireAPI.stream_error`, malformed event via :meth:`WireAPI.malformed_event`);
   a delayed response stops as soon as the client disconnects or the server stops.

Every refusal is a :class:`WireError`, rendered by :meth:`WireAPI.error` with the request
at hand and sent as it is (faults do not apply to it). A scripted reply whose response a
fault breaks (``stream_error``, ``cut``, ``malformed``) goes back to the front of its
queue: scripts are consumed by successful requests only.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, Router

from . import brain
from .encoding import dumps
from .faults import Fault, FaultQueue
from .recording import MAX_RECORDED, Recorder
from .scripting import ScriptBook
from .signing import Signer

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

    from .model import Conversation, Reply, Settings

__all__ = [
    "BodyLimit",
    "EmulatorState",
    "Handler",
    "JsonReply",
    "StreamReply",
    "WireAPI",
    "WireError",
    "WireRequest",
    "WireRoute",
    "build_app",
]

log = logging.getLogger("thinkagent.emulator")

#: The scripted replies the current request's handler took (each request runs in its own
#: task, so each has its own list).
_TAKEN: contextvars.ContextVar[list[tuple[str | None, Reply]] | None] = contextvars.ContextVar(
    "thinkagent_emulator_scripted", default=None
)
#: The methods routed to every endpoint (HEAD comes with GET).
_HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
#: Faults that break the response: a scripted reply it carried is not consumed.
_BREAKING = frozenset({"stream_error", "cut", "malformed"})


@dataclass(frozen=True)
class WireRequest:
    """What a handler receives. ``headers`` have lower-case names and still include
    credentials (the handler may check them); ``body`` is the parsed JSON (``None`` when
    the body is empty); ``seq`` numbers the requests of this emulator."""

    method: str
    path: str
    path_params: Mapping[str, str]
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: Any
    seq: int


@dataclass(frozen=True)
class JsonReply:
    """A complete JSON response."""

    body: Any
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict[str, str])


@dataclass(frozen=True)
class StreamReply:
    """A streamed response as its encoded events (each ``bytes`` is one event: an SSE
    event, an event-stream message...). ``cut_at`` is the default position for stream
    faults: the index of the first event that a cut drops (the wire module sets it in
    the middle of the first thinking block)."""

    events: Sequence[bytes]
    media_type: str
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    cut_at: int | None = None


class WireError(Exception):
    """A request the service refuses. A wire (or its family's rules) raises it; the
    framework renders it natively with :meth:`WireAPI.error` and the request at hand.

    ``message=None`` is the service's usual text for ``status``; ``type`` names the
    provider's error type when it is not the usual one for the status; ``retry_after``
    (seconds) is sent as ``retry-after`` and ``retry-after-ms`` headers; ``headers`` are
    sent as they are (``allow`` on a 405)."""

    def __init__(
        self,
        status: int,
        message: str | None = None,
        *,
        type: str | None = None,
        retry_after: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message or f"HTTP {status}")
        self.status = status
        self.message = message
        self.type = type
        self.retry_after = retry_after
        self.headers: Mapping[str, str] = headers or {}


Handler = Callable[[WireRequest], "JsonReply | StreamReply"]


@dataclass(frozen=True)
class BodyLimit:
    """The largest request body a wire API takes, in bytes, and its refusal of a larger one:
    ``status`` and ``message`` (``{limit}`` stands for the size), rendered by
    :meth:`WireAPI.error` like any refusal (``None``: the API's usual text for the status)."""

    size: int
    status: int = 413
    message: str | None = None

    def error(self) -> WireError:
        message = None if self.message is None else self.message.format(limit=self.size)
        return WireError(self.status, message)


#: The limit of a wire API that declares none, and of requests to unknown routes.
DEFAULT_BODY_LIMIT = BodyLimit(32 * 2**20)


@dataclass(frozen=True)
class WireRoute:
    """One route: a Starlette path pattern (``/model/{model_id:path}/converse``), its
    handler and methods."""

    path: str
    handler: Handler
    methods: tuple[str, ...] = ("POST",)


class EmulatorState:
    """The services shared by every wire API of one emulator: the signer, the request
    recorder, the script and fault queues. Thread-safe."""

    def __init__(self, secret: bytes | str, *, max_recorded: int = MAX_RECORDED) -> None:
        self.signer = Signer(secret)
        self.recorder = Recorder(max_recorded)
        self.scripts = ScriptBook()
        self.faults = FaultQueue()
        #: Set (in the server's loop) when the server starts shutting down: slowed
        #: responses stop at once instead of holding up the shutdown.
        self.stopping: asyncio.Event | None = None
        self._seq = itertools.count(1)

    def next_seq(self) -> int:
        """A new request number."""
        return next(self._seq)

    def reply(self, api: str, conversation: Conversation, settings: Settings) -> Reply:
        """The next scripted reply for ``api`` (with usage filled in), else the brain's plan."""
        entry = self.scripts.take(api)
        if entry is None:
            return brain.plan(conversation, settings)
        taken = _TAKEN.get()
        if taken is not None:  # the framework puts it back if the response breaks
            taken.append(entry)
        scripted = entry[1]
        if scripted.usage is not None:
            return scripted
        return replace(scripted, usage=brain.reply_usage(conversation, scripted))


class WireAPI:
    """Base class of a wire API. Subclasses set :attr:`name` and implement
    :meth:`routes`, :meth:`error` and, for streaming APIs, :meth:`stream_error` and
    :meth:`malformed_event`. One instance serves one emulator; ``self.state`` gives the
    shared services."""

    #: The key used by scripts, faults and recorded requests (``"anthropic"``).
    name: ClassVar[str] = ""
    #: The service's documented request size limit and how it refuses a larger body.
    body_limit: ClassVar[BodyLimit] = DEFAULT_BODY_LIMIT

    def __init__(self, state: EmulatorState) -> None:
        self.state = state

    def routes(self) -> Sequence[WireRoute]:
        """The routes this API serves."""
        raise NotImplementedError

    def authenticate(self, request: WireRequest) -> None:
        """Raise the native :class:`WireError` for a request without credentials."""

    def error(self, request: WireRequest, error: WireError) -> JsonReply:
        """The native error response to ``request`` for ``error``, for any status (the
        framework adds ``error.headers`` and the retry headers)."""
        raise NotImplementedError

    def stream_error(self, request: WireRequest, error: WireError, *, index: int) -> bytes:
        """One encoded in-stream error event for ``error`` (``stream_error`` faults);
        ``index`` is its position in the stream (the number of events sent before it)."""
        raise NotImplementedError

    def malformed_event(self) -> bytes:
        """One encoded stream event whose payload is not valid JSON (``malformed`` faults)."""
        return b"data: {malformed\n\n"

    def reset(self) -> None:
        """Forget what this API keeps between requests (:meth:`Emulator.reset`)."""

    def method_not_allowed(self, request: WireRequest, allowed: Sequence[str]) -> WireError:
        """The refusal of a served path called with another method (default: a 405 with
        an ``allow`` header)."""
        return WireError(
            405,
            f"Method {request.method} is not allowed for {request.path}.",
            headers={"allow": ", ".join(allowed)},
        )


def _retry_headers(retry_after: float | None) -> dict[str, str]:
    """``retry-after`` (seconds) and ``retry-after-ms`` headers, as the SDKs read them."""
    if retry_after is None:
        return {}
    seconds = f"{retry_after:g}" if retry_after != int(retry_after) else str(int(retry_after))
    return {"retry-after": seconds, "retry-after-ms": str(round(retry_after * 1000))}


class _ChunkResponse(Response):
    """Sends pre-encoded chunks; optionally slowly, optionally leaving the body
    incomplete so that uvicorn closes the connection (the ``cut`` fault)."""

    def __init__(
        self,
        chunks: Sequence[bytes],
        status: int,
        headers: Mapping[str, str],
        media_type: str,
        *,
        complete: bool = True,
        delay: float = 0.0,
        stopping: asyncio.Event | None = None,
    ) -> None:
        self.status_code = status
        self.media_type = media_type
        self.background = None
        self.init_headers(headers)
        self._chunks = chunks
        self._complete = complete
        self._delay = delay
        self._stopping = stopping

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        if self._delay > 0:
            if not await self._send_slowly(receive, send):
                return  # the client went away, or the server is stopping: no more of it
        elif self._chunks:
            await send(
                {"type": "http.response.body", "body": b"".join(self._chunks), "more_body": True}
            )
        if self._complete:
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _send_slowly(self, receive: Receive, send: Send) -> bool:
        """Send each chunk after the delay; ``False`` as soon as the client disconnects
        or the server starts stopping (uvicorn ignores sends to a closed connection, so
        without watching ``receive`` a slowed stream would sleep on to its end, and
        without watching the server it would hold up the shutdown until its timeout)."""
        watched: list[asyncio.Future[Any]] = [asyncio.ensure_future(_disconnect(receive))]
        if self._stopping is not None:
            watched.append(asyncio.ensure_future(self._stopping.wait()))
        try:
            for chunk in self._chunks:
                done, _ = await asyncio.wait(
                    watched, timeout=self._delay, return_when=asyncio.FIRST_COMPLETED
                )
                if done:
                    return False
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            for task in watched:
                task.cancel()
        return True


async def _disconnect(receive: Receive) -> None:
    """Return when the ASGI server reports ``http.disconnect`` (the body is already read)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def _json_response(reply: JsonReply) -> Response:
    return Response(dumps(reply.body), reply.status, dict(reply.headers), "application/json")


def _refuse(api: WireAPI, request: WireRequest, error: WireError) -> Response:
    """``error`` rendered natively for ``request``, with its headers and retry headers."""
    reply = api.error(request, error)
    headers = {**reply.headers, **_retry_headers(error.retry_after), **error.headers}
    return Response(dumps(reply.body), reply.status, headers, "application/json")


def _fault_error(fault: Fault) -> WireError:
    return WireError(fault.status, fault.message, retry_after=fault.retry_after)


def _apply(
    api: WireAPI, request: WireRequest, out: JsonReply | StreamReply, fault: Fault | None
) -> Response:
    """Send ``out``, with the request's (non-``http``) fault applied."""
    stopping = api.state.stopping
    if isinstance(out, JsonReply):
        if fault is None:
            return _json_response(out)
        if fault.kind == "stream_error":  # no stream to break: fail like an HTTP error
            return _refuse(api, request, _fault_error(fault))
        body = dumps(out.body)
        headers = dict(out.headers)
        if fault.kind == "malformed":
            return Response(body[: max(len(body) // 2, 1)], 200, headers, "application/json")
        if fault.kind == "cut":  # sent chunked, so the client sees an incomplete body
            half = [body[: len(body) // 2]]
            return _ChunkResponse(
                half,
                out.status,
                headers,
                "application/json",
                complete=False,
                delay=fault.delay,
                stopping=stopping,
            )
        return _ChunkResponse(
            [body], out.status, headers, "application/json", delay=fault.delay, stopping=stopping
        )

    events = list(out.events)
    complete = True
    if fault is not None and fault.kind != "slow":
        default = out.cut_at if out.cut_at is not None else len(events) // 2
        at = max(0, min(fault.after if fault.after is not None else default, len(events)))
        events = events[:at]
        if fault.kind == "cut":
            complete = False
        elif fault.kind == "malformed":
            events.append(api.malformed_event())
        else:
            events.append(api.stream_error(request, _fault_error(fault), index=at))
    delay = fault.delay if fault is not None else 0.0
    return _ChunkResponse(
        events,
        200,
        out.headers,
        out.media_type,
        complete=complete,
        delay=delay,
        stopping=stopping,
    )


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The request's body, or ``None`` when it is larger than ``limit`` bytes: as declared
    (nothing of it is read) or as it arrives (reading stops there). uvicorn reads and drops
    what is left once the response has gone, so the client gets to read it."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _parse_json(raw: bytes) -> tuple[Any, bool]:
    """(the parsed body or ``None``, whether it is invalid). Nesting too deep for the
    parser is invalid JSON too, not a crash, and so is a string holding half of a surrogate
    pair (``"\\ud800"``): JSON text is Unicode, and the services' parsers refuse it. So are
    ``NaN`` and ``Infinity``, which Python's parser takes and JSON does not have."""
    if not raw:
        return None, False
    try:
        body = json.loads(raw, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return None, True
    if b"\\ud" in raw or b"\\uD" in raw:  # an escaped surrogate: paired, or not
        try:
            json.dumps(body, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            return None, True
    return body, False


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _endpoint(
    api: WireAPI, handler: Handler, methods: Sequence[str]
) -> Callable[[Request], Awaitable[Response]]:
    state = api.state

    async def endpoint(request: Request) -> Response:
        raw = await _read_body(request, api.body_limit.size)
        method: str = request.scope["method"]
        path: str = request.scope["path"]
        headers = dict(request.headers.items())
        query = dict(request.query_params.multi_items())
        body, bad_json = _parse_json(raw or b"")
        state.recorder.add(api.name, method, path, query.items(), headers.items(), body)
        wreq = WireRequest(
            method, path, request.path_params, query, headers, body, state.next_seq()
        )
        if raw is None:  # refused before anything else, as the services' front ends do
            return _refuse(api, wreq, api.body_limit.error())
        if method not in methods:
            return _refuse(api, wreq, api.method_not_allowed(wreq, methods))
        try:
            api.authenticate(wreq)
        except WireError as error:
            return _refuse(api, wreq, error)
        fault = state.faults.take(api.name)
        if fault is not None and fault.kind == "http":
            return _refuse(api, wreq, _fault_error(fault))
        if bad_json:
            return _refuse(api, wreq, WireError(400, "The request body is not valid JSON."))
        taken: list[tuple[str | None, Reply]] = []
        token = _TAKEN.set(taken)
        try:
            out = handler(wreq)
        except WireError as error:
            state.scripts.restore(taken)
            return _refuse(api, wreq, error)
        except Exception:
            state.scripts.restore(taken)
            log.exception("emulator handler for %s %s failed", method, path)
            return _refuse(api, wreq, WireError(500))
        finally:
            _TAKEN.reset(token)
        if taken and fault is not None and fault.kind in _BREAKING:
            state.scripts.restore(taken)  # one scripted reply per *successful* request
        return _apply(api, wreq, out, fault)

    return endpoint


def build_app(apis: Sequence[WireAPI], state: EmulatorState) -> Router:
    """The ASGI app serving every route of ``apis``; unknown routes are recorded and
    answered with a JSON 404, served routes called with another method are recorded and
    answered with :meth:`WireAPI.method_not_allowed`."""
    routes: list[Route] = []
    for api in apis:
        for route in api.routes():
            # Every method reaches the endpoint, which answers the others natively.
            endpoint = _endpoint(api, route.handler, route.methods)
            routes.append(Route(route.path, endpoint, methods=list(_HTTP_METHODS)))

    async def not_found(scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        body, _ = _parse_json(await _read_body(request, DEFAULT_BODY_LIMIT.size) or b"")
        state.recorder.add(
            None,
            request.method,
            request.url.path,
            request.query_params.multi_items(),
            request.headers.items(),
            body,
        )
        message = f"The emulator has no route for {request.method} {request.url.path}."
        payload = {
            "error": {
                "code": 404,
                "type": "not_found_error",
                "status": "NOT_FOUND",
                "message": message,
            }
        }
        await Response(dumps(payload), 404, media_type="application/json")(scope, receive, send)

    return Router(routes=routes, default=not_found)
