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
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import Any

from ._extras import needs

with needs("mcp", "thinkagent.mcp"):
    import mcp_types
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

from .errors import ConfigurationError
from .messages import Document, Image
from .tools import DEFAULT_MAX_RETRIES, Tool

__all__ = ["MCPToolError", "MCPTools"]


class MCPToolError(Exception):
    """The MCP server reported the call as failed (its text is the message)."""


class MCPTools:
    """A connection to one MCP server and the agent tools it serves.

    Use it as an async context manager: entering connects, initialises the session and lists
    the tools (`tools`); leaving closes the session (and stops a stdio server). Enter and leave
    it in the same task; the tools may be called from any task of the same event loop while it
    is open. `prefix` prepends `"{prefix}_"` to every tool name (two servers with a tool of the
    same name); `requires_approval`, `max_retries` and `timeout` apply to every tool.
    """

    def __init__(
        self,
        transport: _Transport,
        *,
        prefix: str | None = None,
        requires_approval: bool = False,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
    ) -> None:
        self._transport = transport
        self._prefix = prefix
        self._requires_approval = requires_approval
        self._max_retries = max_retries
        self._timeout = timeout
        self._stack: AsyncExitStack | None = None
        self._session: ClientSession | None = None
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
        requires_approval: bool = False,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
    ) -> MCPTools:
        """The tools of the server `command args` starts, over its standard streams."""
        parameters = StdioServerParameters(
            command=command, args=list(args), env=dict(env) if env is not None else None, cwd=cwd
        )
        return cls(
            _Transport("stdio", parameters=parameters),
            prefix=prefix,
            requires_approval=requires_approval,
            max_retries=max_retries,
            timeout=timeout,
        )

    @classmethod
    def http(
        cls,
        url: str,
        *,
        prefix: str | None = None,
        requires_approval: bool = False,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
    ) -> MCPTools:
        """The tools of the server at the streamable HTTP endpoint `url` (`.../mcp`)."""
        return cls(
            _Transport("http", url=url),
            prefix=prefix,
            requires_approval=requires_approval,
            max_retries=max_retries,
            timeout=timeout,
        )

    async def __aenter__(self) -> MCPTools:
        if self._stack is not None:
            raise ConfigurationError("this MCPTools is already open")
        stack = AsyncExitStack()
        try:
            if self._transport.kind == "stdio":
                assert self._transport.parameters is not None
                streams = await stack.enter_async_context(stdio_client(self._transport.parameters))
            else:
                assert self._transport.url is not None
                streams = await stack.enter_async_context(
                    streamable_http_client(self._transport.url)
                )
            session = await stack.enter_async_context(ClientSession(*streams))
            await session.initialize()
            self._session = session
            self.tools = [self._tool(tool) for tool in await self._list(session)]
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._stack, self._session = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    @staticmethod
    async def _list(session: ClientSession) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        while True:
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                return tools

    def _tool(self, tool: mcp_types.Tool) -> Tool:
        name = tool.name

        async def call(arguments: dict[str, Any]) -> Any:
            session = self._session
            if session is None:
                raise MCPToolError("the MCP session is closed")
            return _result(await session.call_tool(name, arguments))

        return Tool.from_schema(
            call,
            name=f"{self._prefix}_{name}" if self._prefix else name,
            description=tool.description or "",
            parameters=tool.input_schema,
            max_retries=self._max_retries,
            timeout=self._timeout,
            requires_approval=self._requires_approval,
        )


class _Transport:
    __slots__ = ("kind", "parameters", "url")

    def __init__(
        self, kind: str, *, parameters: StdioServerParameters | None = None, url: str | None = None
    ) -> None:
        self.kind = kind
        self.parameters = parameters
        self.url = url


def _result(result: mcp_types.CallToolResult) -> Any:
    """A call's result as a tool's return value: content, with images and documents."""
    texts: list[str] = []
    media: list[Image | Document] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            texts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent):
            media.append(Image(data=_bytes(block.data), media_type=block.mime_type))
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, mcp_types.TextResourceContents):
                texts.append(resource.text)
            else:
                media_type = resource.mime_type or "application/octet-stream"
                kind = Image if media_type.startswith("image/") else Document
                media.append(kind(data=_bytes(resource.blob), media_type=media_type))
        elif isinstance(block, mcp_types.ResourceLink):
            texts.append(f"Resource: {block.uri}")
        else:  # audio, and whatever later protocol versions add
            texts.append(f"[{block.type} content omitted]")
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


def _bytes(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except binascii.Error as exc:
        raise MCPToolError(f"the server sent media that is not base64: {exc}") from None
