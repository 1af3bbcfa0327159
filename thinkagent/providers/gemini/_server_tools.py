"""Gemini's built-in tools on `generateContent`: their declarations, the parts that show their
calls and results, and the grounding metadata read as citations.

- Declarations: `WebSearch` -> `google_search` (`blocked_domains` as its `exclude_domains`, on
  Vertex AI only), `CodeExecution` -> `code_execution`, `URLContext` -> `url_context`,
  `FileSearch` -> `file_search` (its stores; Gemini API only), `MCPServer` -> `mcp_servers`
  (Gemini API only). On the Gemini API `include_server_side_tool_invocations` is asked for, so
  each call shows in the content and goes back in the chain
  (ai.google.dev/gemini-api/docs/tool-combination). Refused before sending: the tools Gemini
  lacks (`WebFetch`, `ImageGeneration`, `ToolSearch`), options it has no place for, built-in
  tools beside function tools on Gemini 2.5 (the service answers "Tool use with function
  calling is unsupported"), Google Search on image models.
- Parts: `toolCall` -> `ServerToolCall`, `toolResponse` -> `ServerToolResult`,
  `executableCode` -> `ServerToolCall` (`code_execution`), `codeExecutionResult` ->
  `ServerToolResult`; `data` is the whole part as the wire has it (its `thoughtSignature` as
  standard base64), and replay sends that part back.
- Grounding: each `groundingSupports` entry becomes a `Citation` on the text part holding its
  segment (one per grounding chunk it cites); the metadata itself stays in the message's
  `provider_details` (`grounding_metadata`, `url_context_metadata`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from google.genai import types
from pydantic import JsonValue

from ...builtin_tools import (
    BuiltinTool,
    CodeExecution,
    FileSearch,
    MCPServer,
    URLContext,
    WebSearch,
)
from ...errors import ConfigurationError
from ...messages import Citation, Part, ServerToolCall, ServerToolResult, TextPart
from ._rules import encode_signature, gemini_version

__all__ = [
    "check",
    "citations",
    "declarations",
    "is_server_part",
    "metadata_details",
    "replay_part",
    "server_part",
    "uses",
]

WIRE = "gemini"

_TAKES: Mapping[type[BuiltinTool], frozenset[str]] = {
    WebSearch: frozenset({"blocked_domains"}),
    CodeExecution: frozenset(),
    URLContext: frozenset(),
    FileSearch: frozenset(),
    MCPServer: frozenset({"authorization", "headers"}),
}
"""The built-in tools Gemini has, with the options it takes for each."""

_GEMINI_API_ONLY = (FileSearch, MCPServer)

_NAMES: Mapping[str, tuple[str, str | None]] = {
    "GOOGLE_SEARCH_WEB": ("google_search", "web_search"),
    "GOOGLE_SEARCH_IMAGE": ("google_search", "web_search"),
    "URL_CONTEXT": ("url_context", "url_context"),
    "FILE_SEARCH": ("file_search", "file_search"),
    "GOOGLE_MAPS": ("google_maps", None),
}
"""A server-side call's tool type: the tool's name, and thinkagent's name for it."""


def check(tools: Sequence[BuiltinTool], model: str, *, vertex: bool, functions: bool) -> None:
    """Raise `ConfigurationError` naming the first built-in tool (or option) Gemini, this
    platform or this model does not take."""
    platform = "Vertex AI" if vertex else "the Gemini API"
    for tool in tools:
        takes = _TAKES.get(type(tool))
        if takes is None:
            hint = " (use URLContext)" if tool.kind == "web_fetch" else ""
            raise ConfigurationError(f"{tool.label} is not available on Gemini{hint}")
        if vertex and isinstance(tool, _GEMINI_API_ONLY):
            raise ConfigurationError(f"{tool.label} is not available on Vertex AI")
        extra = [name for name in tool.options() if name not in takes]
        if isinstance(tool, WebSearch) and not vertex and "blocked_domains" in tool.options():
            extra.insert(0, "blocked_domains")
        if extra:
            raise ConfigurationError(
                f"{tool.label}: {platform} has no {extra[0]!r} for this tool"
                + (f" (it takes {', '.join(sorted(takes))})" if takes else "")
            )
        if isinstance(tool, WebSearch | URLContext | FileSearch) and "image" in model:
            raise ConfigurationError(f"{tool.label} is not available on {model}")
    version = gemini_version(model)
    if tools and functions and version is not None and version[0] < 3:
        raise ConfigurationError(
            f"{model} cannot use built-in tools beside function tools (Gemini 3 can): give "
            "one or the other"
        )


def declarations(tools: Sequence[BuiltinTool]) -> list[types.Tool]:
    """The `tools` entries declaring the built-in tools (checked by `check` first)."""
    out: list[types.Tool] = []
    for tool in tools:
        native = tool.native_for(WIRE)
        if isinstance(tool, WebSearch):
            search = types.GoogleSearch(
                exclude_domains=list(tool.blocked_domains) if tool.blocked_domains else None
            )
            out.append(types.Tool(google_search=search, **native))
        elif isinstance(tool, CodeExecution):
            out.append(types.Tool(code_execution=types.ToolCodeExecution(), **native))
        elif isinstance(tool, URLContext):
            out.append(types.Tool(url_context=types.UrlContext(), **native))
        elif isinstance(tool, FileSearch):
            store = types.FileSearch(file_search_store_names=list(tool.vector_store_ids))
            out.append(types.Tool(file_search=store, **native))
        else:
            assert isinstance(tool, MCPServer)
            headers = dict(tool.headers or {})
            if tool.authorization is not None:
                headers["Authorization"] = f"Bearer {tool.authorization}"
            transport = types.StreamableHttpTransport(url=tool.url, headers=headers or None)
            server = types.McpServer(name=tool.name, streamable_http_transport=transport)
            out.append(types.Tool(mcp_servers=[server], **native))
    return out


def is_server_part(part: types.Part) -> bool:
    """Whether `part` shows a built-in tool's call or result."""
    return (
        part.tool_call is not None
        or part.tool_response is not None
        or part.executable_code is not None
        or part.code_execution_result is not None
    )


def _data(part: types.Part) -> dict[str, JsonValue]:
    """The part as the wire has it (camelCase; its signature as standard base64)."""
    data = cast(
        "dict[str, JsonValue]", part.model_dump(mode="json", by_alias=True, exclude_none=True)
    )
    if part.thought_signature is not None:
        data["thoughtSignature"] = encode_signature(part.thought_signature)
    return data


def server_part(part: types.Part, fallback_id: str, last_call: str | None) -> Part:
    """The shared part for a built-in tool's part: `fallback_id` names a call that came
    without an id, `last_call` is the id of the call a result without one answers."""
    data = _data(part)
    kind = next(iter(k for k in data if k != "thoughtSignature"), "unknown")
    if part.tool_call is not None:
        call = part.tool_call
        name, builtin = _name(call.tool_type)
        return ServerToolCall(
            id=call.id or fallback_id,
            name=name,
            builtin=builtin,
            arguments=cast("dict[str, JsonValue]", call.args or {}),
            type=kind,
            data=data,
        )
    if part.tool_response is not None:
        response = part.tool_response
        name, builtin = _name(response.tool_type)
        return ServerToolResult(
            call_id=response.id or last_call or fallback_id,
            name=name,
            builtin=builtin,
            content=cast("JsonValue", response.response),
            type=kind,
            data=data,
        )
    if part.executable_code is not None:
        code = part.executable_code
        language = code.language.value if code.language is not None else None
        return ServerToolCall(
            id=code.id or fallback_id,
            name="code_execution",
            builtin="code_execution",
            arguments={"code": code.code, "language": language},
            type=kind,
            data=data,
        )
    result = part.code_execution_result
    assert result is not None
    outcome = result.outcome.value if result.outcome is not None else None
    return ServerToolResult(
        call_id=result.id or last_call or fallback_id,
        name="code_execution",
        builtin="code_execution",
        content={"outcome": outcome, "output": result.output},
        is_error=outcome not in (None, "OUTCOME_OK"),
        type=kind,
        data=data,
    )


def _name(tool_type: types.ToolType | None) -> tuple[str, str | None]:
    raw = tool_type.value if tool_type is not None else "TOOL_TYPE_UNSPECIFIED"
    return _NAMES.get(raw, (raw.lower(), None))


def replay_part(part: ServerToolCall | ServerToolResult) -> types.Part | None:
    """The part that sends a built-in tool's call or result back, exactly as it came."""
    if part.data is None:
        return None
    return types.Part.model_validate(part.data)


def citations(parts: Sequence[Part], metadata: types.GroundingMetadata | None) -> list[Part]:
    """`parts` with the citations the grounding supports give their text parts."""
    if metadata is None or not metadata.grounding_supports:
        return list(parts)
    chunks = metadata.grounding_chunks or []
    found: dict[int, list[Citation]] = {}
    for support in metadata.grounding_supports:
        segment = support.segment
        if segment is None or not segment.text:
            continue
        located = _locate(parts, segment)
        if located is None:
            continue
        index, start = located
        support_data = cast(
            "dict[str, JsonValue]",
            support.model_dump(mode="json", by_alias=True, exclude_none=True),
        )
        for chunk_index in support.grounding_chunk_indices or []:
            chunk = chunks[chunk_index] if 0 <= chunk_index < len(chunks) else None
            source = _source(chunk)
            found.setdefault(index, []).append(
                Citation(
                    type="grounding_support",
                    url=source[0],
                    title=source[1],
                    cited_text=segment.text,
                    start=start,
                    end=start + len(segment.text),
                    data={**support_data, "groundingChunkIndices": [chunk_index]},
                )
            )
    out = list(parts)
    for index, cited in found.items():
        text = out[index]
        assert isinstance(text, TextPart)
        out[index] = text.model_copy(update={"citations": (*text.citations, *cited)})
    return out


def _locate(parts: Sequence[Part], segment: types.Segment) -> tuple[int, int] | None:
    """The text part holding the segment and where in it (characters) the segment starts: by
    its byte offsets where they fit, else by its text."""
    wanted = segment.text or ""
    for index, part in enumerate(parts):
        if not isinstance(part, TextPart) or wanted not in part.text:
            continue
        encoded = part.text.encode()
        begin = segment.start_index or 0
        if encoded[begin : begin + len(wanted.encode())].decode(errors="replace") == wanted:
            return index, len(encoded[:begin].decode(errors="replace"))
        return index, part.text.index(wanted)
    return None


def _source(chunk: types.GroundingChunk | None) -> tuple[str | None, str | None]:
    if chunk is None:
        return None, None
    for source in (chunk.web, chunk.retrieved_context):
        if source is not None:
            return getattr(source, "uri", None), getattr(source, "title", None)
    return None, None


def uses(parts: Sequence[Part], metadata: types.GroundingMetadata | None) -> dict[str, int]:
    """The built-in tool uses a response records: its calls, or, where the calls are not
    shown (Vertex AI), the searches its grounding metadata names."""
    counts: dict[str, int] = {}
    for part in parts:
        if isinstance(part, ServerToolCall) and part.builtin is not None:
            counts[part.builtin] = counts.get(part.builtin, 0) + 1
    if "web_search" not in counts and metadata is not None and metadata.web_search_queries:
        counts["web_search"] = len(metadata.web_search_queries)
    return counts


def metadata_details(candidate: types.Candidate | None) -> dict[str, JsonValue]:
    """The candidate's grounding and URL context metadata, for `provider_details`."""
    details: dict[str, JsonValue] = {}
    if candidate is None:
        return details
    for key, value in (
        ("grounding_metadata", candidate.grounding_metadata),
        ("url_context_metadata", candidate.url_context_metadata),
    ):
        if value is not None:
            details[key] = cast(
                "JsonValue", value.model_dump(mode="json", by_alias=True, exclude_none=True)
            )
    return details
