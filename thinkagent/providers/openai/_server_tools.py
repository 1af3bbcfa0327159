"""The Responses API's built-in ("hosted") tools: their declarations, their output items as
`ServerToolCall` / `ServerToolResult` parts, and those parts sent back as input items.

- Declarations: `WebSearch` -> `{"type": "web_search"}` (`filters.allowed_domains`,
  `user_location`, `search_context_size`), `CodeExecution` -> `code_interpreter` with an
  automatic container, `FileSearch` -> `file_search`, `ImageGeneration` -> `image_generation`,
  `ToolSearch` -> `tool_search` (its deferred function tools marked `defer_loading`),
  `MCPServer` -> `mcp`. Each asks, through `include`, for what its items hold only on request
  (a search's sources, code's outputs, a file search's results), so the parts can be read.
  Refused before sending: `WebFetch` and `URLContext` (no such tool here), options the
  Responses API has no place for, web search on `gpt-4.1-nano` or at effort `minimal`
  (developers.openai.com/api/docs/guides/tools-web-search).
- Output items: one item holds both the call and its result (`web_search_call`,
  `code_interpreter_call`, `file_search_call`, `image_generation_call`, `mcp_call`,
  `tool_search_call`): it becomes a `ServerToolCall` whose `data` is the whole item and a
  `ServerToolResult` (its content for reading, `data=None`). `mcp_approval_request` is a
  `ServerToolCall` with `approval=True`; `mcp_list_tools` an `OpaqueBlock`.
- Replay: each item exactly as it came, in its place; the `ToolResult` answering an approval
  request becomes an `mcp_approval_response` (`approve`, and the reason of a denial).
- Text: `url_citation` (and other) annotations become the text part's `citations`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any, cast

from pydantic import JsonValue

from ...builtin_tools import (
    BuiltinTool,
    CodeExecution,
    FileSearch,
    ImageGeneration,
    MCPServer,
    ToolSearch,
    WebSearch,
)
from ...errors import ConfigurationError
from ...messages import (
    Citation,
    Message,
    OpaqueBlock,
    Part,
    ServerToolCall,
    ServerToolResult,
    ToolResult,
)

__all__ = [
    "HOSTED_ITEMS",
    "ITEMS",
    "approval_requests",
    "approval_response",
    "check",
    "citations",
    "declarations",
    "deferred",
    "item_parts",
    "replay_item",
    "uses",
]

WIRE = "responses"

_TAKES: Mapping[type[BuiltinTool], frozenset[str]] = {
    WebSearch: frozenset({"allowed_domains", "user_location", "search_context_size"}),
    CodeExecution: frozenset(),
    FileSearch: frozenset({"max_num_results"}),
    ImageGeneration: frozenset(),
    ToolSearch: frozenset(),
    MCPServer: frozenset(
        {"allowed_tools", "require_approval", "authorization", "headers", "description"}
    ),
}
"""The built-in tools the Responses API has, with the options it takes for each."""

_NO_WEB_SEARCH = ("gpt-4.1-nano*",)
"""Models the web search guide lists as without it."""

HOSTED_ITEMS: Mapping[str, str] = {
    "web_search_call": "web_search",
    "code_interpreter_call": "code_execution",
    "file_search_call": "file_search",
    "image_generation_call": "image_generation",
    "mcp_call": "mcp",
    "mcp_approval_request": "mcp",
    "tool_search_call": "tool_search",
}
"""The output items of hosted tool calls, by thinkagent's name for the tool."""

ITEMS = frozenset({*HOSTED_ITEMS, "mcp_list_tools", "tool_search_output"})
"""Every output item type that becomes built-in tool parts (or an opaque MCP tool listing)."""

_INCLUDES: Mapping[type[BuiltinTool], str] = {
    WebSearch: "web_search_call.action.sources",
    CodeExecution: "code_interpreter_call.outputs",
    FileSearch: "file_search_call.results",
}


def check(tools: Sequence[BuiltinTool], model: str, effort: str | None = None) -> None:
    """Raise `ConfigurationError` naming the first tool (or option) the Responses API or
    `model` does not take."""
    for tool in tools:
        takes = _TAKES.get(type(tool))
        if takes is None:
            hint = " (use WebSearch)" if tool.kind in ("web_fetch", "url_context") else ""
            raise ConfigurationError(f"{tool.label} is not available on the Responses API{hint}")
        extra = [name for name in tool.options() if name not in takes]
        if extra:
            raise ConfigurationError(
                f"{tool.label}: the Responses API has no {extra[0]!r} for this tool"
                + (f" (it takes {', '.join(sorted(takes))})" if takes else "")
            )
        if isinstance(tool, MCPServer) and tool.require_approval is None:
            pass  # the service asks for approval by default
        if isinstance(tool, WebSearch):
            if any(fnmatch.fnmatchcase(model.lower(), p) for p in _NO_WEB_SEARCH):
                raise ConfigurationError(f"WebSearch is not available on {model}")
            if effort == "minimal":
                raise ConfigurationError(
                    "WebSearch is not available at reasoning effort 'minimal': use 'low' or more"
                )


def declarations(
    tools: Sequence[BuiltinTool], model: str, effort: str | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The `tools` entries for the built-in tools, and the `include` values they need."""
    check(tools, model, effort)
    out: list[dict[str, Any]] = []
    include: list[str] = []
    for tool in tools:
        out.append({**_declaration(tool), **tool.native_for(WIRE)})
        wanted = _INCLUDES.get(type(tool))
        if wanted is not None and wanted not in include:
            include.append(wanted)
    return out, include


def _declaration(tool: BuiltinTool) -> dict[str, Any]:
    if isinstance(tool, WebSearch):
        spec: dict[str, Any] = {"type": "web_search"}
        if tool.allowed_domains is not None:
            spec["filters"] = {"allowed_domains": list(tool.allowed_domains)}
        if tool.user_location is not None:
            spec["user_location"] = {"type": "approximate", **tool.user_location.to_dict()}
        if tool.search_context_size is not None:
            spec["search_context_size"] = tool.search_context_size
        return spec
    if isinstance(tool, CodeExecution):
        return {"type": "code_interpreter", "container": {"type": "auto"}}
    if isinstance(tool, FileSearch):
        spec = {"type": "file_search", "vector_store_ids": list(tool.vector_store_ids)}
        if tool.max_num_results is not None:
            spec["max_num_results"] = tool.max_num_results
        return spec
    if isinstance(tool, ImageGeneration):
        return {"type": "image_generation"}
    if isinstance(tool, ToolSearch):
        return {"type": "tool_search"}
    assert isinstance(tool, MCPServer)
    spec = {"type": "mcp", "server_label": tool.name, "server_url": tool.url}
    if tool.allowed_tools is not None:
        spec["allowed_tools"] = list(tool.allowed_tools)
    if tool.require_approval is not None:
        spec["require_approval"] = tool.require_approval
    if tool.authorization is not None:
        spec["authorization"] = tool.authorization
    if tool.headers is not None:
        spec["headers"] = dict(tool.headers)
    if tool.description is not None:
        spec["server_description"] = tool.description
    return spec


def deferred(tools: Sequence[BuiltinTool]) -> frozenset[str]:
    """The function tools a `ToolSearch` defers (`defer_loading`)."""
    return frozenset(name for t in tools if isinstance(t, ToolSearch) for name in t.deferred)


def item_parts(item: dict[str, JsonValue]) -> list[Part]:
    """The parts of a hosted tool's output item (`item` as it came, unknown keys included):
    a call and its result, an approval request, or an MCP server's tool listing."""
    kind = str(item.get("type"))
    if kind == "mcp_list_tools":
        return [OpaqueBlock.of(item)]
    if kind == "tool_search_output":  # the tools a search loaded: its own item
        call_id = item.get("call_id") or item.get("id")
        return [
            ServerToolResult(
                call_id=str(call_id),
                name="tool_search",
                builtin="tool_search",
                content=item.get("tools"),
                type=kind,
                data=item,
            )
        ]
    builtin = HOSTED_ITEMS[kind]
    item_id = str(item.get("id") or "")
    server = item.get("server_label")
    server_name = server if isinstance(server, str) else None
    if kind == "mcp_approval_request":
        return [
            ServerToolCall(
                id=item_id,
                name=str(item.get("name")),
                builtin=builtin,
                arguments=_arguments(item.get("arguments")),
                server=server_name,
                approval=True,
                type=kind,
                data=item,
            )
        ]
    name, arguments, content, error = _call(kind, item)
    if kind == "tool_search_call":  # its result is a `tool_search_output` item of its own
        call_id = item.get("call_id")
        return [
            ServerToolCall(
                id=str(call_id) if call_id else item_id,
                name=name,
                builtin=builtin,
                arguments=arguments,
                type=kind,
                data=item,
            )
        ]
    call = ServerToolCall(
        id=item_id,
        name=name,
        builtin=builtin,
        arguments=arguments,
        server=server_name,
        type=kind,
        data=item,
    )
    result = ServerToolResult(
        call_id=item_id,
        name=name,
        builtin=builtin,
        content=content,
        is_error=error,
        type=kind,
    )
    return [call, result]


def _call(
    kind: str, item: Mapping[str, JsonValue]
) -> tuple[str, dict[str, JsonValue] | str, JsonValue, bool]:
    """(tool name, arguments, result content, whether it failed) of a hosted call's item."""
    status = item.get("status")
    failed = status in ("failed", "incomplete")
    if kind == "web_search_call":
        action = _mapping(item.get("action"))
        arguments = {k: v for k, v in action.items() if k != "sources"}
        sources = action.get("sources")
        return "web_search", arguments, sources if isinstance(sources, list) else None, failed
    if kind == "code_interpreter_call":
        return "code_interpreter", {"code": item.get("code")}, item.get("outputs"), failed
    if kind == "file_search_call":
        return "file_search", {"queries": item.get("queries")}, item.get("results"), failed
    if kind == "image_generation_call":
        # The image (base64) stays in the call's data: not copied into the result.
        return "image_generation", {}, None, failed
    if kind == "tool_search_call":
        arguments = item.get("arguments")
        return "tool_search", arguments if isinstance(arguments, dict) else {}, None, failed
    error = item.get("error")
    return (
        str(item.get("name")),
        _arguments(item.get("arguments")),
        error if error is not None else item.get("output"),
        failed or error is not None,
    )


def _mapping(value: JsonValue) -> dict[str, JsonValue]:
    return cast("dict[str, JsonValue]", value) if isinstance(value, dict) else {}


def _arguments(value: JsonValue) -> dict[str, JsonValue] | str:
    return value if isinstance(value, str | dict) else ""  # pyright: ignore[reportReturnType]


def replay_item(part: Part) -> dict[str, Any] | None:
    """The input item that sends a hosted tool's part back: its item as it came (a result
    that travels inside its call's item: None)."""
    if isinstance(part, ServerToolCall | OpaqueBlock):
        return dict(part.data)
    if isinstance(part, ServerToolResult) and part.data is not None:
        return dict(part.data)
    return None


def approval_requests(messages: Sequence[Message]) -> set[str]:
    """The ids of the approval requests among `messages`."""
    return {
        part.id
        for message in messages
        if message.role == "assistant"
        for part in message.parts
        if isinstance(part, ServerToolCall) and part.approval
    }


def approval_response(result: ToolResult) -> dict[str, Any]:
    """The `mcp_approval_response` for the decision on an approval request."""
    item: dict[str, Any] = {
        "type": "mcp_approval_response",
        "approval_request_id": result.call_id,
        "approve": not result.is_error,
    }
    if result.is_error:
        item["reason"] = result.content_text()
    return item


def citations(annotations: Sequence[dict[str, JsonValue]]) -> tuple[Citation, ...]:
    """A text's annotations as its citations (each kept whole in `data`)."""
    found: list[Citation] = []
    for annotation in annotations:
        url, title = annotation.get("url"), annotation.get("title") or annotation.get("filename")
        start, end = annotation.get("start_index"), annotation.get("end_index")
        found.append(
            Citation(
                type=str(annotation.get("type")),
                url=url if isinstance(url, str) else None,
                title=title if isinstance(title, str) else None,
                start=start if isinstance(start, int) and start >= 0 else None,
                end=end if isinstance(end, int) and end >= 0 else None,
                data=annotation,
            )
        )
    return tuple(found)


def uses(parts: Sequence[Part]) -> dict[str, int]:
    """The built-in tool uses a message's parts record (approval requests are not uses)."""
    counts: dict[str, int] = {}
    for part in parts:
        if isinstance(part, ServerToolCall) and not part.approval and part.builtin is not None:
            counts[part.builtin] = counts.get(part.builtin, 0) + 1
    return counts
