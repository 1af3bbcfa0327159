"""The Responses API's built-in tools ("hosted tools"): declared in ``tools``, run by the
service, returned as output items of their own and sent back as input items.

* Declarations (``tools[]``): ``web_search`` (and ``web_search_preview``,
  ``web_search_2025_08_26``), ``code_interpreter``, ``file_search`` (``vector_store_ids``),
  ``image_generation``, ``tool_search``, ``mcp`` (``server_label``, ``server_url`` or
  ``connector_id``, ``allowed_tools``, ``require_approval``: ``always`` unless set, as the
  MCP guide says). A model without web search (``gpt-4.1-nano``, a DeepSeek or xAI model here)
  refuses it: 400 ``Hosted tool 'web_search' is not supported with <model>.`` with
  ``param: "tools"`` (openai/codex#4881, QuantumNous/new-api#1586).
* Output items (SDK ``ResponseOutputItem``): ``web_search_call`` (``action.sources`` only with
  ``include: ["web_search_call.action.sources"]``), ``code_interpreter_call`` (``outputs`` only
  with ``code_interpreter_call.outputs``), ``file_search_call`` (``results`` only with
  ``file_search_call.results``), ``image_generation_call``, and for a remote MCP server
  ``mcp_list_tools`` (once, unless the input already lists that server's tools), then
  ``mcp_approval_request`` (``mcpr_``: the response ends there) or ``mcp_call`` (with the
  ``approval_request_id`` it ran after). Answer text cites search pages with ``url_citation``
  annotations.
* Input: the same items, read back into the conversation, and ``mcp_approval_response``
  (``approval_request_id``, ``approve``), which must answer an ``mcp_approval_request`` of the
  input (the message is a guess: the service's text is not published).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..encoding import as_list, as_mapping, hex_id
from ..model import Reply, SearchHit, ServerToolSpec, ServerUse, Turn
from .rules import OpenAIError, OpenAIProfile, text_of

__all__ = [
    "HOSTED_ITEMS",
    "declared",
    "output_items",
    "read_item",
    "stream_item",
    "url_citations",
]

_KINDS: Mapping[str, str] = {
    "web_search": "web_search",
    "web_search_preview": "web_search",
    "web_search_2025_08_26": "web_search",
    "web_search_preview_2025_03_11": "web_search",
    "code_interpreter": "code_execution",
    "file_search": "file_search",
    "image_generation": "image_generation",
    "tool_search": "tool_search",
    "mcp": "mcp",
}
"""Hosted tool types, by the neutral kind of tool they are."""

_NO_WEB_SEARCH = frozenset({"gpt-4.1-nano"})
"""Models the web search guide says do not take it."""

HOSTED_ITEMS = frozenset(
    {
        "web_search_call",
        "code_interpreter_call",
        "file_search_call",
        "image_generation_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_call",
    }
)
"""The output item types of hosted tools (each may follow a reasoning item)."""

_INCLUDES = {
    "web_search": "web_search_call.action.sources",
    "code_execution": "code_interpreter_call.outputs",
    "file_search": "file_search_call.results",
}


def declared(raw_tools: Any, model: OpenAIProfile) -> tuple[ServerToolSpec, ...]:
    """The hosted tools ``tools`` declares; a model without one refuses it."""
    specs: list[ServerToolSpec] = []
    for index, raw in enumerate(as_list(raw_tools)):
        tool = as_mapping(raw)
        kind = _KINDS.get(str(tool.get("type")))
        if kind is None:
            continue
        tool_type = str(tool.get("type"))
        base = model.name.lower().removeprefix("ft:").split(":")[0]
        if kind == "web_search" and (
            model.family != "openai" or any(base.startswith(n) for n in _NO_WEB_SEARCH)
        ):
            raise OpenAIError(
                400, f"Hosted tool '{tool_type}' is not supported with {model.name}.", param="tools"
            )
        if kind == "mcp":
            specs.append(_mcp(tool, index))
        else:
            specs.append(ServerToolSpec(kind))
    return tuple(specs)


def _mcp(tool: Mapping[str, Any], index: int) -> ServerToolSpec:
    label = tool.get("server_label")
    if not isinstance(label, str) or not label:
        raise OpenAIError(
            400,
            f"Missing required parameter: 'tools[{index}].server_label'.",
            param=f"tools[{index}].server_label",
            code="missing_required_parameter",
        )
    if not any(isinstance(tool.get(k), str) for k in ("server_url", "connector_id", "tunnel_id")):
        raise OpenAIError(
            400,
            f"Missing required parameter: 'tools[{index}].server_url'.",
            param=f"tools[{index}].server_url",
            code="missing_required_parameter",
        )
    allowed = tool.get("allowed_tools")
    if isinstance(allowed, Mapping):
        allowed = as_mapping(allowed).get("tool_names")
    names = tuple(str(n) for n in as_list(allowed))
    approval = tool.get("require_approval", "always")
    return ServerToolSpec("mcp", name=label, tools=names, approval=approval != "never")


def _call_id(prefix: str, seed: str, n: int) -> str:
    return hex_id(prefix, seed, "server", str(n))


def output_items(
    reply: Reply, seed: str, include: Sequence[Any], listed: set[str]
) -> list[dict[str, Any]]:
    """The output items of the reply's built-in tool uses, in order; ``listed`` holds the MCP
    servers whose tools the input (or this output) already lists."""
    items: list[dict[str, Any]] = []
    for n, use in enumerate(reply.server_uses):
        shown = _INCLUDES.get(use.kind) in include
        if use.kind == "web_search":
            action: dict[str, Any] = {"type": "search", "query": use.arguments.get("query", "")}
            if shown:
                action["sources"] = [{"type": "url", "url": hit.url} for hit in use.hits]
            items.append(
                {
                    "id": use.id or _call_id("ws_", seed, n),
                    "type": "web_search_call",
                    "status": "completed",
                    "action": action,
                }
            )
        elif use.kind == "code_execution":
            items.append(
                {
                    "id": use.id or _call_id("ci_", seed, n),
                    "type": "code_interpreter_call",
                    "status": "completed",
                    "code": use.arguments.get("code", ""),
                    "container_id": hex_id("cntr_", seed, "container"),
                    "outputs": [{"type": "logs", "logs": use.output}] if shown else None,
                }
            )
        elif use.kind == "file_search":
            items.append(
                {
                    "id": use.id or _call_id("fs_", seed, n),
                    "type": "file_search_call",
                    "status": "completed",
                    "queries": list(use.arguments.get("queries") or []),
                    "results": [
                        {
                            "file_id": hit.url,
                            "filename": hit.title,
                            "text": hit.snippet,
                            "score": 1.0,
                        }
                        for hit in use.hits
                    ]
                    if shown
                    else None,
                }
            )
        elif use.kind == "image_generation":
            items.append(
                {
                    "id": use.id or _call_id("ig_", seed, n),
                    "type": "image_generation_call",
                    "status": "completed",
                    "result": use.output,
                }
            )
        elif use.kind == "mcp":
            items.extend(_mcp_items(use, seed, n, listed))
    return items


def _mcp_items(use: ServerUse, seed: str, n: int, listed: set[str]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if use.server not in listed:
        listed.add(use.server)
        items.append(
            {
                "id": _call_id("mcpl_", seed, n),
                "type": "mcp_list_tools",
                "server_label": use.server,
                "tools": [
                    {
                        "name": use.name,
                        "description": f"The {use.name} tool of {use.server}.",
                        "input_schema": {
                            "type": "object",
                            "properties": {"query": {"type": "string"}},
                            "required": ["query"],
                        },
                        "annotations": None,
                    }
                ],
            }
        )
    arguments = json.dumps(dict(use.arguments))
    if use.approval == "pending":
        items.append(
            {
                "id": use.id or _call_id("mcpr_", seed, n),
                "type": "mcp_approval_request",
                "server_label": use.server,
                "name": use.name,
                "arguments": arguments,
            }
        )
        return items
    items.append(
        {
            "id": use.id or _call_id("mcp_", seed, n),
            "type": "mcp_call",
            "approval_request_id": use.approval_id,
            "arguments": arguments,
            "error": None,
            "name": use.name,
            "output": use.output,
            "server_label": use.server,
            "status": "completed",
        }
    )
    return items


def url_citations(text: str, uses: Sequence[ServerUse]) -> list[dict[str, Any]]:
    """``url_citation`` annotations for each search page the text names (by its URL)."""
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    for use in uses:
        if use.kind != "web_search":
            continue
        for hit in use.hits:
            start = text.find(hit.url)
            if start >= 0 and hit.url not in seen:
                seen.add(hit.url)
                found.append(
                    {
                        "type": "url_citation",
                        "start_index": start,
                        "end_index": start + len(hit.url),
                        "url": hit.url,
                        "title": hit.title or hit.url,
                    }
                )
    return found


def read_item(item: Mapping[str, Any], listed: set[str]) -> ServerUse | None:
    """The built-in tool use an input item replays (None for an MCP tool listing, which only
    adds its server to ``listed``)."""
    kind = item.get("type")
    item_id = str(item.get("id") or "")
    if kind == "web_search_call":
        action = as_mapping(item.get("action"))
        hits = tuple(
            SearchHit(str(as_mapping(s).get("url")), "", "") for s in as_list(action.get("sources"))
        )
        return ServerUse(
            "web_search", "web_search", {"query": str(action.get("query") or "")}, hits, id=item_id
        )
    if kind == "code_interpreter_call":
        logs = "".join(str(as_mapping(o).get("logs") or "") for o in as_list(item.get("outputs")))
        return ServerUse(
            "code_execution",
            "code_execution",
            {"code": str(item.get("code") or "")},
            output=logs,
            id=item_id,
        )
    if kind == "file_search_call":
        return ServerUse(
            "file_search",
            "file_search",
            {"queries": list(as_list(item.get("queries")))},
            id=item_id,
        )
    if kind == "image_generation_call":
        return ServerUse(
            "image_generation",
            "image_generation",
            {},
            output=str(item.get("result") or ""),
            id=item_id,
        )
    if kind == "mcp_list_tools":
        listed.add(str(item.get("server_label")))
        return None
    if kind in ("mcp_approval_request", "mcp_call"):
        pending = kind == "mcp_approval_request"
        approved = not pending and item.get("approval_request_id") is not None
        return ServerUse(
            "mcp",
            str(item.get("name")),
            _arguments(item.get("arguments")),
            output=text_of(item.get("output")) if not pending else "",
            server=str(item.get("server_label")),
            approval="pending" if pending else "approved" if approved else "none",
            id=item_id,
        )
    return None


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {}
        return dict(as_mapping(value))
    return dict(as_mapping(raw))


def check_approvals(items: Sequence[Mapping[str, Any]]) -> None:
    """Each ``mcp_approval_response`` answers an ``mcp_approval_request`` of the input."""
    requested = {
        str(item.get("id")) for item in items if item.get("type") == "mcp_approval_request"
    }
    for index, item in enumerate(items):
        if item.get("type") != "mcp_approval_response":
            continue
        request_id = str(item.get("approval_request_id"))
        if request_id not in requested:
            # guess: the service's wording for an answer to no request is not published
            raise OpenAIError(
                400,
                f"No approval request found with id '{request_id}'.",
                param=f"input[{index}].approval_request_id",
            )


def approval_turn(item: Mapping[str, Any]) -> Turn:
    """A user turn holding one ``mcp_approval_response``."""
    return Turn(
        "user", approvals=((str(item.get("approval_request_id")), item.get("approve") is True),)
    )


def stream_item(item: Mapping[str, Any], index: int, emit: Callable[..., None]) -> None:
    """A hosted tool's item as the service streams it: added (in progress, without what only
    the finished item holds), its progress events, then done."""
    kind = item["type"]
    at = {"item_id": item.get("id", ""), "output_index": index}
    opened = dict(item)
    if kind in (
        "web_search_call",
        "code_interpreter_call",
        "file_search_call",
        "image_generation_call",
        "mcp_call",
    ):
        opened["status"] = "in_progress"
    for key in ("outputs", "results", "result", "output"):
        if key in opened:
            opened[key] = None
    if kind == "mcp_call":
        opened["arguments"] = ""
    emit("response.output_item.added", item=opened, output_index=index)
    if kind == "web_search_call":
        for phase in ("in_progress", "searching", "completed"):
            emit(f"response.web_search_call.{phase}", **at)
    elif kind == "file_search_call":
        for phase in ("in_progress", "searching", "completed"):
            emit(f"response.file_search_call.{phase}", **at)
    elif kind == "code_interpreter_call":
        emit("response.code_interpreter_call.in_progress", **at)
        emit("response.code_interpreter_call_code.delta", **at, delta=item.get("code", ""))
        emit("response.code_interpreter_call_code.done", **at, code=item.get("code", ""))
        emit("response.code_interpreter_call.interpreting", **at)
        emit("response.code_interpreter_call.completed", **at)
    elif kind == "image_generation_call":
        for phase in ("in_progress", "generating", "completed"):
            emit(f"response.image_generation_call.{phase}", **at)
    elif kind == "mcp_list_tools":
        emit("response.mcp_list_tools.in_progress", **at)
        emit("response.mcp_list_tools.completed", **at)
    elif kind == "mcp_call":
        emit("response.mcp_call.in_progress", **at)
        emit("response.mcp_call_arguments.delta", **at, delta=item.get("arguments", ""))
        emit("response.mcp_call_arguments.done", **at, arguments=item.get("arguments", ""))
        emit("response.mcp_call.completed", **at)
    emit("response.output_item.done", item=dict(item), output_index=index)
