"""Tools from an MCP server, through the official `mcp` package (`pip install thinkagent[mcp]`).

```python
async with MCPTools.stdio("python", ["server.py"]) as server:
    agent = Agent(model, tools=server.tools)
    result = await agent.run("What is 2 + 3?")
```

`MCPTools.stdio` starts the server as a subprocess and talks to it over its standard streams;
`MCPTools.http` connects to a streamable HTTP endpoint. Either way the server's tools become
agent `Tool`s with the server's names, descriptions and input schemas; the server validates
the arguments. A call's structured content becomes the result's JSON content, its text the
text content, its images (and embedded binary resources) the result's `media`; a call the
server reports as an error goes back to the model as an error result.

Each connection runs in a task of its own, so a server that dies ends that task, never the
caller's: a call whose connection is lost gets an error result, and the next call connects
again (`reconnect_attempts` tries). The server's resources and prompts can be read
(`read_resource`, `get_prompt`), and `connection()` opens a connection for one run.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import contextvars
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from ._extras import needs

with needs("mcp", "thinkagent.mcp"):
    import anyio
    import httpx2
    import mcp_types
    from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.message import SessionMessage

from .errors import ConfigurationError
from .messages import Document, Image, Message, TextPart
from .tools import DEFAULT_MAX_RETRIES, Tool

__all__ = ["MCPConnectionError", "MCPToolError", "MCPTools"]

T = TypeVar("T")

DEFAULT_RECONNECT_ATTEMPTS = 3
"""How many times a call tries to connect again to a server whose connection was lost."""


class MCPToolError(Exception):
    """An MCP request failed: the server reported the call as failed (its text is the
    message), the connection was lost while the request was under way, or the server could
    not be reached again. A tool call that raises it goes back to the model as an error
    result."""


class MCPConnectionError(ConfigurationError):
    """The MCP server could not be reached, started or initialised when `MCPTools` was opened;
    names the server's URL or command and the cause."""


class MCPTools:
    """A connection to one MCP server and the agent tools it serves.

    Use it as an async context manager: entering connects, initialises the session and lists
    the tools (`tools`); leaving closes the session (and stops a stdio server). The tools may
    be called from any task of the same event loop while it is open. `prefix` prepends
    `"{prefix}_"` to every tool name (two servers with a tool of the same name);
    `allowed_tools` keeps only the tools it names (the server's names); `requires_approval`,
    `max_retries` and `timeout` apply to every tool.

    A connection lost (the server died or restarted) fails the request under way with an
    `MCPToolError` (an error result for a tool call); the next request connects again, up to
    `reconnect_attempts` times with a short pause between attempts, and is sent once the
    server answers. A request the server provably never received (refused connection, a
    session the restarted server does not know) is sent again on the new connection.

    `connection()` opens a connection of its own for the code inside it (one run), used by
    the tools called there instead of the shared one; concurrent runs each get theirs.
    """

    def __init__(
        self,
        transport: _Transport,
        *,
        prefix: str | None = None,
        allowed_tools: Collection[str] | None = None,
        requires_approval: bool = False,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
        reconnect_attempts: int = DEFAULT_RECONNECT_ATTEMPTS,
    ) -> None:
        if reconnect_attempts < 1:
            raise ConfigurationError("reconnect_attempts must be at least 1")
        if isinstance(allowed_tools, str):
            raise ConfigurationError("allowed_tools is a collection of tool names, not one name")
        self._transport = transport
        self._prefix = prefix
        self._allowed = None if allowed_tools is None else frozenset(allowed_tools)
        self._requires_approval = requires_approval
        self._max_retries = max_retries
        self._timeout = timeout
        self._reconnect_attempts = reconnect_attempts
        self._shared: _Link | None = None
        self.tools: list[Tool] = []

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        prefix: str | None = None,
        allowed_tools: Collection[str] | None = None,
        requires_approval: bool = False,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
        reconnect_attempts: int = DEFAULT_RECONNECT_ATTEMPTS,
    ) -> MCPTools:
        """The tools of the server `command args` starts, over its standard streams (a
        connection started again starts the server again)."""
        parameters = StdioServerParameters(
            command=command, args=list(args), env=dict(env) if env is not None else None, cwd=cwd
        )
        return cls(
            _Transport(" ".join([command, *args]), parameters=parameters),
            prefix=prefix,
            allowed_tools=allowed_tools,
            requires_approval=requires_approval,
            max_retries=max_retries,
            timeout=timeout,
            reconnect_attempts=reconnect_attempts,
        )

    @classmethod
    def http(
        cls,
        url: str,
        *,
        prefix: str | None = None,
        allowed_tools: Collection[str] | None = None,
        requires_approval: bool = False,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
        reconnect_attempts: int = DEFAULT_RECONNECT_ATTEMPTS,
    ) -> MCPTools:
        """The tools of the server at the streamable HTTP endpoint `url` (`.../mcp`)."""
        return cls(
            _Transport(url, url=url),
            prefix=prefix,
            allowed_tools=allowed_tools,
            requires_approval=requires_approval,
            max_retries=max_retries,
            timeout=timeout,
            reconnect_attempts=reconnect_attempts,
        )

    async def __aenter__(self) -> MCPTools:
        if self._shared is not None:
            raise ConfigurationError("this MCPTools is already open")
        link = await self._open()
        self._shared = link
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        link, self._shared = self._shared, None
        if link is not None:
            await link.close()

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncGenerator[MCPTools]:
        """A connection of its own for the code inside (`async with server.connection():`
        around one run): the tools called there use it, and it closes on the way out. Lists
        the tools the first time, so it also works on an `MCPTools` never entered."""
        link = await self._open()
        token = _RUN_LINKS.set({**(_RUN_LINKS.get() or {}), self: link})
        try:
            yield self
        finally:
            _RUN_LINKS.reset(token)
            await link.close()

    async def _open(self) -> _Link:
        link = _Link(self._transport, self._reconnect_attempts)
        await link.open()
        try:
            if not self.tools:
                self.tools = await self._listed(link)
        except BaseException:
            await link.close()
            raise
        return link

    async def _listed(self, link: _Link) -> list[Tool]:
        tools = await link.request(_list_tools)
        if self._allowed is not None:
            missing = self._allowed - {tool.name for tool in tools}
            if missing:
                raise ConfigurationError(
                    f"allowed_tools names tools the MCP server {self._transport.where} does not "
                    f"have: {', '.join(sorted(missing))} (it has: "
                    f"{', '.join(sorted(tool.name for tool in tools)) or 'none'})"
                )
            tools = [tool for tool in tools if tool.name in self._allowed]
        return [self._tool(tool) for tool in tools]

    def _link(self) -> _Link:
        links = _RUN_LINKS.get()
        link = (links.get(self) if links else None) or self._shared
        if link is None:
            raise MCPToolError("the MCP session is closed")
        return link

    def _tool(self, tool: mcp_types.Tool) -> Tool:
        name = tool.name

        async def call(arguments: dict[str, Any]) -> Any:
            return _result(await self._link().request(lambda s: s.call_tool(name, arguments)))

        return Tool.from_schema(
            call,
            name=f"{self._prefix}_{name}" if self._prefix else name,
            description=tool.description or "",
            parameters=tool.input_schema,
            max_retries=self._max_retries,
            timeout=self._timeout,
            requires_approval=self._requires_approval,
        )

    # --- resources and prompts ------------------------------------------------------------

    async def list_resources(self) -> list[mcp_types.Resource]:
        """The server's resources (every page)."""
        return await self._link().request(_list_resources)

    async def read_resource(self, uri: str) -> list[str | Image | Document]:
        """The contents of the resource at `uri`: text as `str`, bytes as an `Image` or a
        `Document` by their media type."""
        result = await self._link().request(lambda s: s.read_resource(uri))
        contents: list[str | Image | Document] = []
        for item in result.contents:
            if isinstance(item, mcp_types.TextResourceContents):
                contents.append(item.text)
            else:
                contents.append(_media(item.blob, item.mime_type))
        return contents

    async def list_prompts(self) -> list[mcp_types.Prompt]:
        """The server's prompts (every page)."""
        return await self._link().request(_list_prompts)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> list[Message]:
        """The prompt `name` filled with `arguments`, as messages (text, images and
        documents), ready to send: `agent.run(None, history=messages)` answers one that ends
        with the user's turn."""
        filled = dict(arguments) if arguments is not None else None
        result = await self._link().request(lambda s: s.get_prompt(name, filled))
        return [
            Message(role=message.role, parts=(_part(message.content),))
            for message in result.messages
        ]


_RUN_LINKS: contextvars.ContextVar[Mapping[MCPTools, _Link] | None] = contextvars.ContextVar(
    "thinkagent_mcp_run_links", default=None
)
"""The connections `MCPTools.connection()` opened for the code running in this context."""


class _Transport:
    """How to reach the server: a stdio command or an HTTP URL; `where` names it in errors
    (the command and its arguments, never its environment)."""

    __slots__ = ("parameters", "url", "where")

    def __init__(
        self, where: str, *, parameters: StdioServerParameters | None = None, url: str | None = None
    ) -> None:
        self.where = f"at {url}" if url is not None else f"`{where}`"
        self.parameters = parameters
        self.url = url

    def streams(self) -> AbstractAsyncContextManager[tuple[Any, Any]]:
        if self.url is not None:
            return streamable_http_client(self.url)
        assert self.parameters is not None
        return stdio_client(self.parameters)


class _Link:
    """One logical connection: the live `_Connection`, replaced by a new one when it is lost
    (under a lock, so concurrent calls reconnect once), until `close`. A connection replaced
    while requests are still under way on it is closed once the last of them is answered."""

    def __init__(self, transport: _Transport, attempts: int) -> None:
        self._transport = transport
        self._attempts = attempts
        self._connection: _Connection | None = None
        self._lock = asyncio.Lock()
        self._retired: set[_Connection] = set()  # replaced, requests still under way on them
        self._closing: set[asyncio.Task[None]] = set()
        self._closed = False

    async def open(self) -> None:
        connection = _Connection(self._transport)
        await connection.open()
        self._connection = connection

    async def close(self) -> None:
        """Close every connection now (a request still under way fails)."""
        self._closed = True
        connection, self._connection = self._connection, None
        for each in {*self._retired, *([connection] if connection is not None else [])}:
            self._retire(each, now=True)
        while self._closing:
            closing = set(self._closing)
            await asyncio.wait(closing)
            self._closing -= closing

    async def request(self, send: Callable[[ClientSession], Awaitable[T]]) -> T:
        """`send` on a live session; once more on a new one when the server provably never
        ran it."""
        connection = await self._live()
        if self._transport.url is None:
            connection = await self._pinged(connection)
        try:
            return await self._on(connection, send)
        except MCPError as error:
            if not await self._lost(connection, error):
                raise
            if not connection.unsent(error):
                raise MCPToolError(
                    f"the connection to the MCP server {self._transport.where} was lost during "
                    f"the request: {connection.reason(error)}"
                ) from None
        return await self._on(await self._live(), send)

    async def _on(
        self, connection: _Connection, send: Callable[[ClientSession], Awaitable[T]]
    ) -> T:
        connection.users += 1
        try:
            return await send(connection.session)
        finally:
            connection.users -= 1
            if connection.retired and not connection.users:
                self._retire(connection)

    async def _pinged(self, connection: _Connection) -> _Connection:
        """`connection`, or a new one if a ping finds it lost. A stdio server killed since it
        last answered is found out by the ping (safe to lose), not by the request: a request
        the dead process could not read fails just as one it was running when it died."""
        try:
            await self._on(connection, lambda session: session.send_ping())
        except MCPError as error:
            if not await self._lost(connection, error):
                raise
            return await self._live()
        return connection

    async def _lost(self, connection: _Connection, error: MCPError) -> bool:
        """Whether `error` says the connection is gone (then it is retired, to be replaced):
        closed, or (over HTTP) a request refused as invalid, which is how a server answers a
        session it does not know (it restarted: a 404, which the client SDK reports as an
        invalid request; the MCP specification says to start a new session then)."""
        if error.code == mcp_types.CONNECTION_CLOSED:
            await connection.ended(1.0)  # its task records why
        elif not (error.code == mcp_types.INVALID_REQUEST and self._transport.url is not None):
            return False
        self._retire(connection)
        return True

    def _retire(self, connection: _Connection, *, now: bool = False) -> None:
        """No new request goes to `connection`; it closes once none is under way on it."""
        connection.retired = True
        if connection.closing:
            return
        if connection.users and not now:
            self._retired.add(connection)
            return
        self._retired.discard(connection)
        connection.closing = True
        task = asyncio.ensure_future(connection.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _live(self) -> _Connection:
        connection = self._connection
        if connection is not None and connection.alive:
            return connection
        async with self._lock:
            connection = self._connection
            if connection is not None and connection.alive:
                return connection
            if self._closed:
                raise MCPToolError("the MCP session is closed")
            if connection is not None:
                self._retire(connection)
            failure: MCPConnectionError | None = None
            for attempt in range(self._attempts):
                if attempt:
                    await asyncio.sleep(min(0.1 * 2 ** (attempt - 1), 1.0))
                fresh = _Connection(self._transport)
                try:
                    await fresh.open()
                except MCPConnectionError as error:
                    failure = error
                    continue
                self._connection = fresh
                return fresh
            raise MCPToolError(f"{failure} ({self._attempts} attempts)") from None


class _Connection:
    """One session with the server, run by a task of its own: the transport's task group
    lives there, so when the server dies the cancellation it sends ends this task (its
    failure kept in `failure`), never a caller's."""

    def __init__(self, transport: _Transport) -> None:
        self._transport = transport
        self._session: ClientSession | None = None
        self._wake = asyncio.Event()  # close asked, or the server's stream ended
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.failure: BaseException | None = None
        self.users = 0  # requests under way
        self.retired = False  # replaced: takes no new request
        self.closing = False

    @property
    def session(self) -> ClientSession:
        assert self._session is not None
        return self._session

    @property
    def alive(self) -> bool:
        return (
            self._session is not None
            and not self.retired
            and not self._wake.is_set()
            and not self.done
        )

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    async def open(self) -> None:
        self._task = asyncio.create_task(self._run(), name="thinkagent-mcp-connection")
        try:
            await self._ready.wait()
        except BaseException:
            await self.close()
            raise
        if self._session is None:
            await self.close()
            raise MCPConnectionError(
                f"cannot connect to the MCP server {self._transport.where}: "
                f"{_describe(self.failure)}"
            ) from _leaf(self.failure)

    async def _run(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport.streams())
                watched = _Watched(read, self._wake)
                session = await stack.enter_async_context(ClientSession(watched, write))
                await session.initialize()
                self._session = session
                self._ready.set()
                await self._wake.wait()
        except BaseException as error:  # whatever ended it, it ends here
            if isinstance(error, KeyboardInterrupt | SystemExit):
                raise
            self.failure = error
        finally:
            self._wake.set()
            self._ready.set()

    async def ended(self, within: float) -> None:
        """Wait (at most `within` seconds) for the task to end."""
        if self._task is not None and not self._task.done():
            await asyncio.wait({self._task}, timeout=within)

    async def close(self) -> None:
        """Close the session and stop the transport (a stdio server with it)."""
        self._wake.set()
        task = self._task
        if task is None or task.done():
            return
        if self._session is None:  # still connecting: nothing to close gracefully
            task.cancel()
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            task.cancel()
            raise

    def unsent(self, error: MCPError) -> bool:
        """Whether the request that failed with `error` provably never ran on the server:
        refused as invalid (JSON-RPC's -32600: not run; a restarted server's answer to a
        session it does not know), or no connection could be made."""
        if error.code == mcp_types.INVALID_REQUEST:
            return True
        return isinstance(_leaf(self.failure), httpx2.ConnectError | httpx2.ConnectTimeout)

    def reason(self, error: MCPError) -> str:
        return _describe(self.failure) if self.failure is not None else str(error)


class _Watched:
    """The transport's read stream, setting `ended` when it ends (the server went away), so
    the connection knows it is lost before a request finds out."""

    def __init__(self, stream: Any, ended: asyncio.Event) -> None:
        self._stream = stream
        self._ended = ended

    @property
    def last_context(self) -> contextvars.Context | None:
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._ended.set()
            raise

    def __aiter__(self) -> _Watched:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _Watched:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


def _leaf(error: BaseException | None) -> BaseException | None:
    """The first exception inside nested exception groups that is not a cancellation (what
    went wrong, not how the task group reported it)."""
    while error is not None:
        inner: Sequence[BaseException] | None = getattr(error, "exceptions", None)
        if not inner:
            return error
        error = next((e for e in inner if not isinstance(e, asyncio.CancelledError)), inner[0])
    return None


def _describe(error: BaseException | None) -> str:
    leaf = _leaf(error)
    if leaf is None:
        return "the connection closed"
    return f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__


async def _list_tools(session: ClientSession) -> list[mcp_types.Tool]:
    return await _pages(session.list_tools, lambda page: page.tools)


async def _list_resources(session: ClientSession) -> list[mcp_types.Resource]:
    return await _pages(session.list_resources, lambda page: page.resources)


async def _list_prompts(session: ClientSession) -> list[mcp_types.Prompt]:
    return await _pages(session.list_prompts, lambda page: page.prompts)


async def _pages(
    fetch: Callable[..., Awaitable[Any]], items: Callable[[Any], Sequence[T]]
) -> list[T]:
    """Every item of a paginated listing."""
    out: list[T] = []
    cursor: str | None = None
    while True:
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await fetch(params=params)
        out += items(page)
        cursor = page.next_cursor
        if not cursor:
            return out


def _result(result: mcp_types.CallToolResult) -> Any:
    """A call's result as a tool's return value: content, with images and documents."""
    texts: list[str] = []
    media: list[Image | Document] = []
    for block in result.content:
        part = _part(block)
        if isinstance(part, TextPart):
            texts.append(part.text)
        else:
            media.append(part)
    if result.is_error:
        raise MCPToolError("\n".join(texts) or "the tool failed")
    content: Any
    if result.structured_content is not None:
        content = result.structured_content  # the text blocks repeat it for older clients
    elif len(texts) == 1:
        content = texts[0]
    else:
        content = texts or None
    if not media:
        return content
    return [*([] if content is None else [content]), *media]


def _part(block: mcp_types.ContentBlock) -> TextPart | Image | Document:
    """One content block (of a tool result or a prompt message) as a part."""
    if isinstance(block, mcp_types.TextContent):
        return TextPart(text=block.text)
    if isinstance(block, mcp_types.ImageContent):
        return Image(data=_bytes(block.data), media_type=block.mime_type)
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return TextPart(text=resource.text)
        return _media(resource.blob, resource.mime_type)
    if isinstance(block, mcp_types.ResourceLink):
        return TextPart(text=f"Resource: {block.uri}")
    return TextPart(text=f"[{block.type} content omitted]")  # audio, and what comes later


def _media(blob: str, mime_type: str | None) -> Image | Document:
    media_type = mime_type or "application/octet-stream"
    kind = Image if media_type.startswith("image/") else Document
    return kind(data=_bytes(blob), media_type=media_type)


def _bytes(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except binascii.Error as exc:
        raise MCPToolError(f"the server sent media that is not base64: {exc}") from None
