"""Gemini's built-in tools on ``generateContent``: declared as ``tools[]`` entries, run by the
service, shown in the content as parts of their own and in the candidate's metadata.

* Declarations: ``googleSearch``, ``codeExecution``, ``urlContext``, ``fileSearch`` and
  ``mcpServers`` (the last two on the Gemini API only). Gemini 2.5 cannot combine any of them
  with ``functionDeclarations``: 400 ``Tool use with function calling is unsupported``
  (googleapis/go-genai#323); Gemini 3 can (ai.google.dev/gemini-api/docs/tool-combination).
  An image model refuses Google Search: 400 ``Search Grounding is not supported.``
  (googleapis/go-genai#429); other tools on it: the same wording per tool [guess].
* ``toolConfig.includeServerSideToolInvocations`` (Gemini API only; Vertex AI's parser does
  not know the field) puts each server-side call in the content: a ``toolCall`` part
  (``id``, ``toolType`` ``GOOGLE_SEARCH_WEB`` / ``URL_CONTEXT`` / ``FILE_SEARCH``, ``args``)
  and its ``toolResponse`` part (``response``: ``search_suggestions`` for a search), each with
  a ``thoughtSignature``, as a live Gemini 3.6 response shows (maximhq/bifrost fixtures).
  Replayed, a signature that does not verify is refused like any other ("Corrupted thought
  signature."). Without the flag only the metadata shows what the tools did.
* Code execution always shows as an ``executableCode`` part and its ``codeExecutionResult``
  (unsigned here [guess]).
* Candidate metadata: ``groundingMetadata`` (``webSearchQueries``, ``groundingChunks`` of the
  pages, ``groundingSupports`` tying answer segments to them, ``searchEntryPoint``) and
  ``urlContextMetadata``; ``usageMetadata.toolUsePromptTokenCount`` counts what the tools
  brought into the prompt.
* Remote MCP servers are accepted but not called: how their calls show in the content is not
  published.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..encoding import as_list, as_mapping, mapping_or_none, stable_id
from ..framework import WireError
from ..model import Reply, SearchHit, ServerToolSpec, ServerUse, ToolSpec

__all__ = [
    "SERVER_PART_KEYS",
    "declared",
    "grounding",
    "part_content",
    "read_parts",
    "server_parts",
    "tool_use_tokens",
]

_TOOL_KEYS: Mapping[str, str] = {
    "googleSearch": "web_search",
    "google_search": "web_search",
    "codeExecution": "code_execution",
    "code_execution": "code_execution",
    "urlContext": "url_context",
    "url_context": "url_context",
    "fileSearch": "file_search",
    "file_search": "file_search",
}
_TOOL_TYPES: Mapping[str, str] = {
    "web_search": "GOOGLE_SEARCH_WEB",
    "url_context": "URL_CONTEXT",
    "file_search": "FILE_SEARCH",
}
_KINDS = {v: k for k, v in _TOOL_TYPES.items()}
_REFUSED: Mapping[str, str] = {
    "web_search": "Search Grounding is not supported.",
    "url_context": "URL Context is not supported.",  # guess: wording modelled on the search one
    "file_search": "File Search is not supported.",  # guess: wording modelled on the search one
}

SERVER_PART_KEYS = frozenset(
    {
        "toolCall",
        "tool_call",
        "toolResponse",
        "tool_response",
        "executableCode",
        "executable_code",
        "codeExecutionResult",
        "code_execution_result",
    }
)
"""The keys of the parts that show a built-in tool's call or result."""


def _invalid(message: str) -> WireError:
    return WireError(400, message)


def declared(
    body: Mapping[str, Any],
    model_name: str,
    family: str,
    vertex: bool,
    functions: Sequence[ToolSpec],
) -> tuple[tuple[ServerToolSpec, ...], bool]:
    """The built-in tools the request declares, and whether their calls show in the content
    (``includeServerSideToolInvocations``); refuses what the model or platform does not take."""
    specs: list[ServerToolSpec] = []
    for raw in as_list(body.get("tools")):
        tool = as_mapping(raw)
        for key, value in tool.items():
            kind = _TOOL_KEYS.get(key)
            if kind is not None:
                if "image" in model_name and kind in _REFUSED:
                    raise _invalid(_REFUSED[kind])
                specs.append(ServerToolSpec(kind))
            elif key in ("mcpServers", "mcp_servers"):
                for server in as_list(value):
                    name = as_mapping(server).get("name")
                    specs.append(ServerToolSpec("mcp", name=str(name or ""), approval=False))
    if specs and functions and family == "2.5":
        raise _invalid("Tool use with function calling is unsupported")
    config = as_mapping(body.get("toolConfig") or body.get("tool_config"))
    include = config.get("includeServerSideToolInvocations")
    if include is None:
        include = config.get("include_server_side_tool_invocations")
    if include is not None and vertex:
        raise _invalid(
            'Invalid JSON payload received. Unknown name "includeServerSideToolInvocations" at '
            "'tool_config': Cannot find field."
        )
    # MCP calls are not rendered (see the module docstring): they are not planned.
    return tuple(s for s in specs if s.kind != "mcp"), include is True


def part_content(part: Mapping[str, Any]) -> str | None:
    """What a ``toolCall`` or ``toolResponse`` part's signature seals: the call or the response
    as canonical JSON (None for any other part)."""
    for key, name in (("toolCall", "call"), ("toolResponse", "response")):
        body = mapping_or_none(part.get(key))
        if body is None:
            snake = "tool_call" if key == "toolCall" else "tool_response"
            body = mapping_or_none(part.get(snake))
        if body is not None:
            return f"{name}:" + json.dumps(_canonical(body), sort_keys=True, separators=(",", ":"))
    return None


def _canonical(value: Any) -> Any:
    """``value`` with camelCase keys (the SDK may send either spelling)."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in as_mapping(value).items():
            head, *rest = str(key).split("_")
            out[head + "".join(w.title() for w in rest)] = _canonical(item)
        return out
    if isinstance(value, list):
        return [_canonical(v) for v in as_list(value)]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def read_parts(parts: Sequence[Mapping[str, Any]]) -> tuple[ServerUse, ...]:
    """The built-in tool uses a replayed model turn's parts show."""
    uses: list[ServerUse] = []
    for part in parts:
        call = mapping_or_none(part.get("toolCall") or part.get("tool_call"))
        code = mapping_or_none(part.get("executableCode") or part.get("executable_code"))
        result = mapping_or_none(
            part.get("codeExecutionResult") or part.get("code_execution_result")
        )
        if call is not None:
            tool_type = str(call.get("toolType") or call.get("tool_type") or "")
            kind = _KINDS.get(tool_type, tool_type.lower())
            args = as_mapping(call.get("args"))
            queries = as_list(args.get("queries"))
            arguments = {"query": str(queries[0])} if queries else dict(args)
            uses.append(ServerUse(kind, kind, arguments, id=str(call.get("id") or "")))
        elif code is not None:
            uses.append(
                ServerUse("code_execution", "code_execution", {"code": str(code.get("code") or "")})
            )
        elif result is not None and uses and uses[-1].kind == "code_execution":
            last = uses[-1]
            uses[-1] = ServerUse(
                last.kind, last.name, last.arguments, output=str(result.get("output") or "")
            )
    return tuple(uses)


def server_parts(
    reply: Reply, seed: str, include: bool, seal: Callable[[str], str]
) -> list[dict[str, Any]]:
    """The parts showing the reply's built-in tool uses, in order: code execution always,
    other calls and responses with ``includeServerSideToolInvocations`` (each signed by
    ``seal(content)``)."""
    parts: list[dict[str, Any]] = []
    for n, use in enumerate(reply.server_uses):
        call_id = use.id or stable_id("", seed, "tool", str(n), length=8)
        if use.kind == "code_execution":
            parts.append(
                {
                    "executableCode": {
                        "id": call_id,
                        "language": "PYTHON",
                        "code": use.arguments.get("code", ""),
                    }
                }
            )
            parts.append(
                {
                    "codeExecutionResult": {
                        "id": call_id,
                        "outcome": "OUTCOME_OK",
                        "output": use.output,
                    }
                }
            )
            continue
        tool_type = _TOOL_TYPES.get(use.kind)
        if tool_type is None or not include:
            continue
        if use.kind == "web_search":
            args: dict[str, Any] = {"queries": [use.arguments.get("query", "")]}
            response: dict[str, Any] = {"search_suggestions": _chips(use)}
        elif use.kind == "url_context":
            args = {"urls": [use.arguments.get("url", "")]}
            response = {"retrieved": [hit.url for hit in use.hits]}  # guess: shape not published
        else:
            args = dict(use.arguments)
            response = {"results": [hit.title for hit in use.hits]}  # guess: shape not published
        call: dict[str, Any] = {"toolCall": {"id": call_id, "toolType": tool_type, "args": args}}
        answer: dict[str, Any] = {
            "toolResponse": {"id": call_id, "toolType": tool_type, "response": response}
        }
        for part in (call, answer):
            content = part_content(part)
            assert content is not None
            part["thoughtSignature"] = seal(content)
            parts.append(part)
    return parts


def _chips(use: ServerUse) -> str:
    queries = "".join(f'<a class="chip">{use.arguments.get("query", "")}</a>' for _ in (0,))
    return f'<div class="carousel">{queries}</div>'


def grounding(reply: Reply, text_parts: Sequence[tuple[int, str]]) -> dict[str, Any]:
    """The candidate's metadata for the reply's searches and URL fetches: ``groundingMetadata``
    (with a support for each answer part that names a page's URL) and
    ``urlContextMetadata``."""
    out: dict[str, Any] = {}
    searches = [u for u in reply.server_uses if u.kind == "web_search"]
    if searches:
        hits: list[SearchHit] = [hit for use in searches for hit in use.hits]
        supports: list[dict[str, Any]] = []
        for index, text in text_parts:
            for chunk, hit in enumerate(hits):
                start = text.find(hit.url)
                if start < 0:
                    continue
                begin = len(text[:start].encode())
                supports.append(
                    {
                        "segment": {
                            "partIndex": index,
                            "startIndex": begin,
                            "endIndex": begin + len(hit.url.encode()),
                            "text": hit.url,
                        },
                        "groundingChunkIndices": [chunk],
                    }
                )
        out["groundingMetadata"] = {
            "webSearchQueries": [str(u.arguments.get("query", "")) for u in searches],
            "groundingChunks": [{"web": {"uri": hit.url, "title": hit.title}} for hit in hits],
            "groundingSupports": supports,
            "searchEntryPoint": {"renderedContent": _chips(searches[0])},
        }
    fetches = [u for u in reply.server_uses if u.kind == "url_context"]
    if fetches:
        out["urlContextMetadata"] = {
            "urlMetadata": [
                {"retrievedUrl": hit.url, "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS"}
                for use in fetches
                for hit in use.hits
            ]
        }
    return out


def tool_use_tokens(reply: Reply) -> int:
    """``toolUsePromptTokenCount``: about four characters a token of what the tools returned."""
    chars = sum(
        len(hit.title) + len(hit.snippet) + len(hit.url)
        for u in reply.server_uses
        for hit in u.hits
    )
    chars += sum(len(u.output) for u in reply.server_uses)
    return (chars + 3) // 4
