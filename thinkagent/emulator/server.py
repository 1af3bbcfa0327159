"""The :class:`Emulator`: serves every wire API on 127.0.0.1 from a background thread,
and builds official SDK clients pointed at it."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import socket
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ._extras import needs
from .framework import EmulatorState, build_app
from .recording import MAX_RECORDED
from .signing import DEFAULT_SECRET
from .wires import WIRE_APIS

if TYPE_CHECKING:
    from types import TracebackType

    import anthropic
    import openai
    from google import genai
    from uvicorn.server import ServerState

    from .faults import Fault
    from .model import Reply
    from .recording import RecordedRequest

__all__ = ["Emulator"]

#: Dummy credentials the client factories use; the emulator only checks they are present.
DUMMY_KEY = "emulator-key"
DUMMY_AWS_KEY_ID = "AKIAEMULATOR0000KEY"
DUMMY_AWS_SECRET = "emulator-secret-access-key"
AZURE_API_VERSION = "2025-04-01-preview"
VERTEX_PROJECT = "emulator-project"
VERTEX_LOCATION = "us-central1"


_THREAD_PREFIX = "thinkagent-emulator-"
_INCOMPLETE = "ASGI callable returned without completing response."

#: Seconds a connection gets to send a request's headers before it is closed.
HEADER_TIMEOUT = 10.0

_log = logging.getLogger("thinkagent.emulator.server")
"""What uvicorn's protocol reports about the emulator's connections (invalid requests...):
the emulator's own logger, so the host's ``uvicorn.*`` loggers never see the emulator."""


def _not_an_intentional_cut(record: logging.LogRecord) -> bool:
    """uvicorn reports a response left incomplete; the emulator does that on purpose (the
    ``cut`` fault closes the connection mid-body that way, and a slowed response stops so when
    its client leaves or the server stops)."""
    return record.msg != _INCOMPLETE


_log.addFilter(_not_an_intentional_cut)


class _Config(uvicorn.Config):
    """uvicorn's configuration without its logging setup: ``uvicorn.Config`` sets the levels
    of the process-wide ``uvicorn.*`` loggers and removes their handlers, which would change
    the logging of an application that embeds the emulator."""

    def __init__(self, app: Callable[..., Any], *, header_timeout: float, **options: Any) -> None:
        self.header_timeout = header_timeout
        super().__init__(app, **options)

    def configure_logging(self) -> None:
        pass


class _Protocol(HttpToolsProtocol):
    """uvicorn's HTTP protocol as the emulator serves it: it logs to the emulator's own logger,
    writes no access lines, and closes a connection whose request headers have not all arrived
    ``header_timeout`` seconds after the connection opened (or the request began)."""

    def __init__(
        self,
        config: uvicorn.Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.logger = self.access_logger = _log
        self.access_log = False
        self._header_timeout = cast("_Config", config).header_timeout
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)
        self._await_headers()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_timer is None:  # a request after another on a kept-alive connection
            self._await_headers()

    def on_headers_complete(self) -> None:
        self._headers_arrived()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_arrived()
        super().connection_lost(exc)

    def _await_headers(self) -> None:
        self._header_timer = self.loop.call_later(self._header_timeout, self._headers_late)

    def _headers_arrived(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()


class _Server(uvicorn.Server):
    """uvicorn's server, stopped by an event instead of its 0.1 s polling tick, without what
    it does process-wide (signal handlers, start and stop lines on uvicorn's logger)."""

    def __init__(self, config: uvicorn.Config, state: EmulatorState) -> None:
        super().__init__(config)
        self.state = state
        self.stop_event: asyncio.Event | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        config = self.config
        if not config.loaded:
            config.load()
        self.lifespan = config.lifespan_class(config)
        await self.startup(sockets=sockets)
        if not self.should_exit:
            await self.main_loop()
        if self.started:
            await self.shutdown(sockets=sockets)

    async def main_loop(self) -> None:
        self.stop_event = asyncio.Event()
        if self.should_exit:
            return
        await self.stop_event.wait()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's graceful shutdown without its fixed 0.1 s sleeps: stop the slowed
        responses, close the listeners, ask every connection to close, wait (briefly
        polling) for in-flight responses."""
        if self.state.stopping is not None:
            self.state.stopping.set()
        for server in self.servers:
            server.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.config.timeout_graceful_shutdown or 0)
        # uvicorn signals no event when its connections and tasks end, hence the polling.
        while (self.server_state.connections or self.server_state.tasks) and loop.time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.002)
        for task in self.server_state.tasks:
            task.cancel()


class Emulator:
    """Local, protocol-faithful stand-ins for the reasoning wire APIs.

    Usable as ``with Emulator() as emu:`` and ``async with Emulator() as emu:`` (also
    inside a running event loop: the server runs in its own thread and loop), or with
    :meth:`start` / :meth:`close`. Starting blocks until the port is bound; closing
    joins the thread.

    ``secret`` keys every signature; the fixed default keeps signed histories valid
    across emulators in one test suite. ``port=0`` picks a free port. ``max_recorded``
    bounds :attr:`requests` (the most recent ones are kept). ``header_timeout`` is how long
    a connection may take to send a request's headers before it is closed.

    Starting it leaves the process's logging as it is: the server reports through the
    ``thinkagent.emulator.server`` logger, never through uvicorn's loggers.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        secret: bytes | str = DEFAULT_SECRET,
        max_recorded: int = MAX_RECORDED,
        header_timeout: float = HEADER_TIMEOUT,
    ) -> None:
        self.host = host
        self.port = port
        self.header_timeout = header_timeout
        self.state = EmulatorState(secret, max_recorded=max_recorded)
        self.apis = tuple(cls(self.state) for cls in WIRE_APIS)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._error: BaseException | None = None

    # --- lifecycle ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:PORT``."""
        if self._thread is None:
            raise RuntimeError(
                "the emulator is not running; use `with Emulator() as emu:` or call start()"
            )
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> Emulator:
        """Bind the port and serve in a background thread; returns when the server accepts
        connections."""
        if self._thread is not None:
            return self
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # proto=IPPROTO_TCP makes asyncio set TCP_NODELAY on accepted connections (else
        # Nagle plus delayed ACKs add ~40 ms to every response).
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
            sock.listen(2048)
        except OSError:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        config = _Config(
            build_app(self.apis, self.state),
            header_timeout=self.header_timeout,
            host=self.host,
            port=self.port,
            loop="asyncio",
            http=_Protocol,
            lifespan="off",
            log_config=None,
            server_header=False,
            date_header=False,
            timeout_graceful_shutdown=2,
        )
        server = _Server(config, self.state)
        ready = threading.Event()
        self._error = None

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                asyncio.set_event_loop(loop)
                self.state.stopping = asyncio.Event()  # used in this loop only
                task = loop.create_task(server.serve(sockets=[sock]))

                def check_started() -> None:
                    if server.started or task.done():
                        ready.set()
                    else:
                        loop.call_later(0.001, check_started)

                loop.call_soon(check_started)
                loop.run_until_complete(task)
            except BaseException as exc:  # reported to start() or close()
                self._error = exc
            finally:
                ready.set()
                with contextlib.suppress(Exception):
                    loop.run_until_complete(loop.shutdown_asyncgens())
                    loop.run_until_complete(loop.shutdown_default_executor())
                loop.close()
                sock.close()

        thread = threading.Thread(target=run, name=f"{_THREAD_PREFIX}{self.port}", daemon=True)
        self._server = server
        self._thread = thread
        thread.start()
        ready.wait()
        if not server.started:
            thread.join()
            self._thread = None
            error = self._error
            raise RuntimeError(f"the emulator failed to start: {error!r}") from error
        return self

    def close(self) -> None:
        """Stop serving and join the server thread (idempotent)."""
        thread, server, loop = self._thread, self._server, self._loop
        if thread is None or server is None:
            return
        server.should_exit = True
        if loop is not None and server.stop_event is not None:
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(server.stop_event.set)
        thread.join()
        self._thread = None
        self._server = None
        self._loop = None
        self.state.stopping = None

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Emulator:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.close)

    def __repr__(self) -> str:
        where = self.url if self.running else "stopped"
        return f"<Emulator {where}>"

    # --- recording, scripting, faults --------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the requests received so far, oldest first (credentials removed;
        the last ``max_recorded``, 10,000 by default)."""
        return self.state.recorder.snapshot()

    def clear(self) -> None:
        """Forget the recorded requests."""
        self.state.recorder.clear()

    def reset(self) -> None:
        """Forget the recorded requests, the stored Responses items and interactions, and
        drop pending scripts and faults."""
        self.state.recorder.clear()
        self.state.scripts.clear()
        self.state.faults.clear()
        for api in self.apis:
            api.reset()

    def script(self, api: str | None, replies: Iterable[Reply]) -> None:
        """Queue exact replies for the next successful requests of wire API ``api``
        (``"anthropic"``, ``"bedrock"``...; ``None`` for any API). When the queue is
        exhausted the built-in deterministic behaviour resumes."""
        self.state.scripts.add(api, replies)

    def inject(self, *faults: Fault, times: int = 1) -> None:
        """Queue faults; each is consumed by one matching request (``times`` repeats it)."""
        for fault in faults:
            self.state.faults.add(fault, times)

    @property
    def pending_faults(self) -> list[Fault]:
        """Faults not consumed yet."""
        return self.state.faults.pending()

    # --- endpoints and clients ---------------------------------------------------------

    @property
    def endpoints(self) -> dict[str, str]:
        """The base URL of each API, as printed by ``python -m thinkagent.emulator``."""
        url = self.url
        return {
            "Anthropic": url,
            "Bedrock": url,
            "Gemini": url,
            "Vertex": url,
            "OpenAI": url + "/v1",
            "Azure": url,
        }

    def anthropic_client(self, **kwargs: Any) -> anthropic.AsyncAnthropic:
        """An ``anthropic.AsyncAnthropic`` pointed at the emulator (dummy API key, default
        retries). ``kwargs`` override the defaults (``max_retries=0``...)."""
        with needs("anthropic", "Emulator.anthropic_client"):
            import anthropic

        options: dict[str, Any] = {"base_url": self.url}
        if not any(
            k in kwargs for k in ("api_key", "auth_token", "credentials", "config", "profile")
        ):
            options["api_key"] = DUMMY_KEY
        options.update(kwargs)
        return anthropic.AsyncAnthropic(**options)

    def bedrock_client(self, **kwargs: Any) -> Any:
        """A boto3 ``bedrock-runtime`` client pointed at the emulator (region us-east-1,
        dummy SigV4 credentials, default retries). ``kwargs`` go to ``boto3.client``."""
        with needs("bedrock", "Emulator.bedrock_client"):
            boto3: Any = importlib.import_module("boto3")  # untyped; imported lazily

        options: dict[str, Any] = {
            "region_name": "us-east-1",
            "endpoint_url": self.url,
            "aws_access_key_id": DUMMY_AWS_KEY_ID,
            "aws_secret_access_key": DUMMY_AWS_SECRET,
        }
        options.update(kwargs)
        return boto3.client("bedrock-runtime", **options)

    def gemini_client(self, **kwargs: Any) -> genai.Client:
        """A ``google.genai.Client`` for the Gemini API pointed at the emulator (dummy API
        key, ``/v1beta`` paths). ``kwargs`` override the defaults; a given
        ``http_options`` keeps its own settings but gets the emulator's ``base_url``."""
        with needs("gemini", "Emulator.gemini_client"):
            from google import genai

        options: dict[str, Any] = {"api_key": DUMMY_KEY}
        options.update(kwargs)
        options["http_options"] = self._http_options(
            kwargs.get("http_options"), api_version="v1beta"
        )
        return genai.Client(**options)

    def vertex_client(self, **kwargs: Any) -> genai.Client:
        """A ``google.genai.Client`` in Vertex AI mode pointed at the emulator, with a
        static dummy OAuth token (no network, no refresh), project ``emulator-project``
        and location ``us-central1``."""
        with needs("gemini", "Emulator.vertex_client"):
            from google import genai
            from google.oauth2.credentials import Credentials

        options: dict[str, Any] = {
            "vertexai": True,
            "project": VERTEX_PROJECT,
            "location": VERTEX_LOCATION,
            "credentials": Credentials(token=DUMMY_KEY),  # pyright: ignore[reportCallIssue]
        }
        options.update(kwargs)
        options["http_options"] = self._http_options(kwargs.get("http_options"))
        return genai.Client(**options)

    def _http_options(self, given: Any, api_version: str | None = None) -> Any:
        from google.genai import types

        if given is None:
            options = types.HttpOptions()
        elif isinstance(given, types.HttpOptions):
            options = given.model_copy()
        else:
            options = types.HttpOptions.model_validate(given)
        options.base_url = self.url
        if api_version is not None and options.api_version is None:
            options.api_version = api_version
        return options

    def openai_client(self, **kwargs: Any) -> openai.AsyncOpenAI:
        """An ``openai.AsyncOpenAI`` pointed at ``url + "/v1"`` (dummy API key).

        Pointed at the emulator's OpenAI endpoint (no ``base_url`` given), it declares the
        ``openai`` dialect in its ``x-thinkagent-dialect`` default header, so a Chat model
        built on it is taken for OpenAI's own endpoint, as one on ``api.openai.com`` is; a
        ``base_url`` of a compatible host's route (``/deepseek/v1``...) declares nothing."""
        with needs("openai", "Emulator.openai_client"):
            import openai

        options: dict[str, Any] = {"api_key": DUMMY_KEY, "base_url": self.url + "/v1"}
        if kwargs.get("base_url") is None:
            kwargs.pop("base_url", None)
            headers = {"x-thinkagent-dialect": "openai", **kwargs.pop("default_headers", {})}
            options["default_headers"] = headers
        options.update(kwargs)
        return openai.AsyncOpenAI(**options)

    def mantle_client(self, **kwargs: Any) -> openai.AsyncOpenAI:
        """An ``openai.AsyncOpenAI`` for the emulator's Bedrock Mantle (the Responses API
        Bedrock runs), at ``url + "/mantle/v1"`` (dummy Bedrock API key)."""
        return self.openai_client(**{"base_url": self.url + "/mantle/v1", **kwargs})

    def azure_client(self, **kwargs: Any) -> openai.AsyncAzureOpenAI:
        """An ``openai.AsyncAzureOpenAI`` with ``azure_endpoint`` at the emulator (dummy
        ``api-key``, ``api_version`` 2025-04-01-preview); requests go to
        ``/openai/deployments/{model}/...?api-version=...``."""
        with needs("openai", "Emulator.azure_client"):
            import openai

        options: dict[str, Any] = {"azure_endpoint": self.url, "api_version": AZURE_API_VERSION}
        if not any(k in kwargs for k in ("api_key", "azure_ad_token", "azure_ad_token_provider")):
            options["api_key"] = DUMMY_KEY
        options.update(kwargs)
        return openai.AsyncAzureOpenAI(**options)
