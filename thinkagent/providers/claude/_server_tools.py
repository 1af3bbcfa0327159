"""Claude's server tools on the Messages API: their declarations, their blocks as
`ServerToolCall` / `ServerToolResult` parts, text citations, and the uses the usage counts.

- Declarations (platform.claude.com/docs/en/agents-and-tools/tool-use/tool-reference):
  `WebSearch` -> `web_search_20250305` (`max_uses`, `allowed_domains` / `blocked_domains`,
  `user_location`), `WebFetch` -> `web_fetch_20250910` (with `max_content_tokens` and
  `citations`), `CodeExecution` -> `code_execution_20250825`, `ToolSearch` ->
  `tool_search_tool_regex_20251119` or `..._bm25_20251119` (its deferred function tools marked
  `defer_loading`), all generally available; `MCPServer` -> an `mcp_toolset` tool naming the
  server, the server itself in the request's `mcp_servers`, and beta `mcp-client-2025-11-20`.
  `native={"anthropic": {...}}` picks another version (`"type": "web_search_20260209"`).
- Refused before sending: the tools Claude lacks (`FileSearch`, `ImageGeneration`,
  `URLContext`), options it has no place for, MCP approvals (the connector has none), a model
  too old for the tool, and any server tool on Bedrock (not among the tools' platforms) or,
  besides basic web search, on Google Cloud.
- Blocks: `server_tool_use` and `mcp_tool_use` -> `ServerToolCall`; `web_search_tool_result`,
  `web_fetch_tool_result`, the code execution results, `tool_search_tool_result` and
  `mcp_tool_result` -> `ServerToolResult`. `data` is the whole block; `content` reads it
  without its encrypted parts.
- Text: a text block's `citations` become the part's (each whole in `data`, its
  `encrypted_index` included), and go back with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from pydantic import JsonValue

from ...builtin_tools import (
    BuiltinTool,
    CodeExecution,
    MCPServer,
    ToolSearch,
    WebFetch,
    WebSearch,
)
from ...errors import ConfigurationError
from ...messages import Citation, Part, ServerToolCall, ServerToolResult, TextPart
from ._models import claude_info

__all__ = [
    "CALL_TYPES",
    "RESULT_TYPES",
    "check",
    "citation",
    "declarations",
    "defer",
    "part_of",
    "text_block",
    "uses",
]

WIRE = "anthropic"
MCP_BETA = "mcp-client-2025-11-20"

_TAKES: Mapping[type[BuiltinTool], frozenset[str]] = {
    WebSearch: frozenset({"max_uses", "allowed_domains", "blocked_domains", "user_location"}),
    WebFetch: frozenset(
        {"max_uses", "allowed_domains", "blocked_domains", "max_content_tokens", "citations"}
    ),
    CodeExecution: frozenset(),
    ToolSearch: frozenset({"mode"}),
    MCPServer: frozenset({"allowed_tools", "require_approval", "authorization"}),
}
"""The server tools Claude has, with the options it takes for each."""

_SINCE: Mapping[type[BuiltinTool], tuple[int, int]] = {
    WebSearch: (3, 5),
    WebFetch: (3, 5),
    CodeExecution: (3, 5),
    ToolSearch: (4, 5),
}
"""The oldest Opus/Sonnet/Haiku version each tool's docs list (newer families all have them)."""

CALL_TYPES = frozenset({"server_tool_use", "mcp_tool_use"})
RESULT_TYPES = frozenset(
    {
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "mcp_tool_result",
    }
)

_BUILTIN: Mapping[str, str] = {
    "web_search": "web_search",
    "web_fetch": "web_fetch",
    "code_execution": "code_execution",
    "bash_code_execution": "code_execution",
    "text_editor_code_execution": "code_execution",
    "tool_search_tool_regex": "tool_search",
    "tool_search_tool_bm25": "tool_search",
}
"""A server tool's name, by thinkagent's name for the kind of tool."""

_RESULT_BUILTIN: Mapping[str, str] = {
    "web_search_tool_result": "web_search",
    "web_fetch_tool_result": "web_fetch",
    "code_execution_tool_result": "code_execution",
    "bash_code_execution_tool_result": "code_execution",
    "text_editor_code_execution_tool_result": "code_execution",
    "tool_search_tool_result": "tool_search",
    "mcp_tool_result": "mcp",
}


def check(tools: Sequence[BuiltinTool], model: str, scope: str) -> None:
    """Raise `ConfigurationError` naming the first server tool (or option) Claude, this
    platform or this model does not take."""
    info = claude_info(model)
    for tool in tools:
        takes = _TAKES.get(type(tool))
        if takes is None:
            hint = " (use WebFetch)" if tool.kind == "url_context" else ""
            raise ConfigurationError(f"{tool.label} is not available on Claude{hint}")
        if scope == "bedrock" or scope.startswith("bedrock"):
            raise ConfigurationError(f"{tool.label} is not available on Amazon Bedrock")
        if scope == "anthropic-vertex" and not (
            isinstance(tool, WebSearch) and not tool.native_for(WIRE)
        ):
            raise ConfigurationError(
                f"{tool.label} is not available on Google Cloud (only the basic WebSearch is)"
            )
        extra = [name for name in tool.options() if name not in takes]
        if extra:
            raise ConfigurationError(
                f"{tool.label}: Claude has no {extra[0]!r} for this tool"
                + (f" (it takes {', '.join(sorted(takes))})" if takes else "")
            )
        if isinstance(tool, MCPServer) and tool.require_approval == "always":
            raise ConfigurationError(
                f"{tool.label}: Claude's MCP connector has no approvals: give "
                "require_approval='never' or leave it out"
            )
        since = _SINCE.get(type(tool))
        if (
            info is not None
            and since is not None
            and info.family in ("opus", "sonnet", "haiku")
            and info.version < since
        ):
            raise ConfigurationError(f"{tool.label} is not available on {model}")


def declarations(
    tools: Sequence[BuiltinTool],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], tuple[str, ...]]:
    """The `tools` entries for the server tools, the request's `mcp_servers`, and the beta
    headers they need."""
    out: list[dict[str, Any]] = []
    servers: list[dict[str, Any]] = []
    betas: list[str] = []
    for tool in tools:
        spec = _declaration(tool)
        out.append({**spec, **tool.native_for(WIRE)})
        if isinstance(tool, MCPServer):
            server: dict[str, Any] = {"type": "url", "url": tool.url, "name": tool.name}
            if tool.authorization is not None:
                server["authorization_token"] = tool.authorization
            servers.append(server)
            if MCP_BETA not in betas:
                betas.append(MCP_BETA)
    return out, servers, tuple(betas)


def _domains(spec: dict[str, Any], tool: WebSearch | WebFetch) -> None:
    if tool.max_uses is not None:
        spec["max_uses"] = tool.max_uses
    if tool.allowed_domains is not None:
        spec["allowed_domains"] = list(tool.allowed_domains)
    if tool.blocked_domains is not None:
        spec["blocked_domains"] = list(tool.blocked_domains)


def _declaration(tool: BuiltinTool) -> dict[str, Any]:
    if isinstance(tool, WebSearch):
        spec: dict[str, Any] = {"type": "web_search_20250305", "name": "web_search"}
        _domains(spec, tool)
        if tool.user_location is not None:
            spec["user_location"] = {"type": "approximate", **tool.user_location.to_dict()}
        return spec
    if isinstance(tool, WebFetch):
        spec = {"type": "web_fetch_20250910", "name": "web_fetch"}
        _domains(spec, tool)
        if tool.max_content_tokens is not None:
            spec["max_content_tokens"] = tool.max_content_tokens
        if tool.citations is not None:
            spec["citations"] = {"enabled": tool.citations}
        return spec
    if isinstance(tool, CodeExecution):
        return {"type": "code_execution_20250825", "name": "code_execution"}
    if isinstance(tool, ToolSearch):
        name = f"tool_search_tool_{tool.mode}"
        return {"type": f"{name}_20251119", "name": name}
    assert isinstance(tool, MCPServer)
    spec = {"type": "mcp_toolset", "mcp_server_name": tool.name}
    if tool.allowed_tools is not None:
        spec["default_config"] = {"enabled": False}
        spec["configs"] = {name: {"enabled": True} for name in tool.allowed_tools}
    return spec


def defer(tools: list[dict[str, Any]], builtin: Sequence[BuiltinTool]) -> None:
    """Mark the function tools a `ToolSearch` defers (`defer_loading`), in place."""
    deferred = {name for t in builtin if isinstance(t, ToolSearch) for name in t.deferred}
    for spec in tools:
        if spec.get("name") in deferred:
            spec["defer_loading"] = True


def part_of(data: dict[str, JsonValue], calls: Mapping[str, ServerToolCall]) -> Part | None:
    """The part for a server tool's block (`data`, as it came), or None for another block;
    `calls` are the message's calls so far, by id (a result takes its call's name)."""
    kind = str(data.get("type"))
    if kind in CALL_TYPES:
        name = str(data.get("name"))
        server = data.get("server_name")
        arguments = data.get("input")
        return ServerToolCall(
            id=str(data.get("id")),
            name=name,
            builtin="mcp" if kind == "mcp_tool_use" else _BUILTIN.get(name),
            arguments=cast("dict[str, JsonValue]", arguments)
            if isinstance(arguments, dict)
            else {},
            server=server if isinstance(server, str) else None,
            type=kind,
            data=data,
        )
    if kind in RESULT_TYPES:
        call_id = str(data.get("tool_use_id"))
        call = calls.get(call_id)
        content, failed = _content(kind, data)
        return ServerToolResult(
            call_id=call_id,
            name=call.name if call is not None else _RESULT_BUILTIN[kind],
            builtin=_RESULT_BUILTIN[kind],
            content=content,
            is_error=failed,
            type=kind,
            data=data,
        )
    return None


def _content(kind: str, data: Mapping[str, JsonValue]) -> tuple[JsonValue, bool]:
    """A result block's content for reading (encrypted parts left out), and whether it is an
    error."""
    if kind == "mcp_tool_result":
        return data.get("content"), data.get("is_error") is True
    content = data.get("content")
    if isinstance(content, list):  # web search results
        pages: list[JsonValue] = []
        for item in content:
            if isinstance(item, dict):
                pages.append(
                    {k: v for k, v in item.items() if k not in ("encrypted_content", "type")}
                )
        return pages, False
    if isinstance(content, dict):
        inner = cast("dict[str, JsonValue]", content)
        failed = str(inner.get("type", "")).endswith("_error")
        return {k: v for k, v in inner.items() if k not in ("encrypted_content", "type")}, failed
    return content, False


def citation(data: dict[str, JsonValue]) -> Citation:
    """A text block's citation, kept whole."""
    url, title, cited = (
        data.get("url"),
        data.get("title") or data.get("document_title"),
        data.get("cited_text"),
    )
    start, end = data.get("start_char_index"), data.get("end_char_index")
    return Citation(
        type=str(data.get("type")),
        url=url if isinstance(url, str) else None,
        title=title if isinstance(title, str) else None,
        cited_text=cited if isinstance(cited, str) else None,
        start=start if isinstance(start, int) and start >= 0 else None,
        end=end if isinstance(end, int) and end >= 0 else None,
        data=data,
    )


def text_block(part: TextPart) -> dict[str, Any]:
    """A text part as Claude takes it back: its citations whole, when it has any."""
    block: dict[str, Any] = {"type": "text", "text": part.text}
    if part.citations:
        block["citations"] = [dict(c.data) for c in part.citations]
    return block


def uses(server_tool_use: Any, parts: Sequence[Part]) -> dict[str, int]:
    """The server tool uses of a response: `usage.server_tool_use` (`web_search_requests`,
    `web_fetch_requests`...), and the message's other calls (code execution, MCP)."""
    counts: dict[str, int] = {}
    reported: set[str] = set()
    if server_tool_use is not None:
        fields = cast("dict[str, Any]", server_tool_use.model_dump(mode="json", exclude_unset=True))
        for key, value in fields.items():
            if key.endswith("_requests") and isinstance(value, int):
                name = key.removesuffix("_requests")
                reported.add(name)
                if value:
                    counts[name] = value
    for part in parts:
        if isinstance(part, ServerToolCall) and part.builtin and part.builtin not in reported:
            counts[part.builtin] = counts.get(part.builtin, 0) + 1
    return counts
