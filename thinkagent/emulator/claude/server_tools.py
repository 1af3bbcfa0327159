"""Claude's server tools on the Messages API: declared as typed `tools` entries, run by the
service, returned as blocks of their own between the thinking and the answer, sent back whole.

* Declarations (platform.claude.com/docs/en/agents-and-tools/tool-use/tool-reference):
  ``web_search_*`` (``max_uses``), ``web_fetch_*``, ``code_execution_*``,
  ``tool_search_tool_*`` and, with beta ``mcp-client-2025-11-20``, ``mcp_toolset`` naming a
  server of the request's ``mcp_servers``. A model older than the tools' docs list (Claude 3
  Opus/Sonnet/Haiku) refuses them [guess: the refusal's text is not published].
* Blocks: a search is a ``server_tool_use`` (``srvtoolu_``, ``input.query``) and its
  ``web_search_tool_result`` whose pages carry ``encrypted_content``; the answer cites them
  with ``web_search_result_location`` citations carrying an ``encrypted_index``. Both are
  sealed with the emulator's key; replayed altered, they are refused [guess: the service's
  wording is not published]. A fetch is a ``web_fetch_tool_result`` holding the page as a
  document; code runs as ``bash_code_execution`` (its ``bash_code_execution_tool_result`` with
  ``stdout``); an MCP server's tool is an ``mcp_tool_use`` and its ``mcp_tool_result``.
* A server tool use replayed without its result in the same message (but in the last message:
  a turn paused on it, ``pause_turn``) is refused like an unanswered tool use: ``messages.N: `tool_use` ids were found without `tool_result` blocks
  immediately after: srvtoolu_...`` (danny-avila/LibreChat#12639).
* ``usage.server_tool_use`` counts ``web_search_requests`` and ``web_fetch_requests``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..encoding import as_list, as_mapping, mapping_or_none, split_json, stable_id
from ..framework import WireError
from ..model import Reply, SearchHit, ServerToolSpec, ServerUse
from ..signing import Signer
from .profiles import ClaudeProfile

__all__ = [
    "MCP_BETA",
    "check_replay",
    "citation_deltas",
    "citations",
    "declared",
    "read_blocks",
    "server_blocks",
    "server_usage",
    "stream_events",
]

MCP_BETA = "mcp-client-2025-11-20"
KIND_PAGE = "anthropic.web_search_result"
KIND_CITATION = "anthropic.web_search_citation"

_KINDS: Mapping[str, str] = {
    "web_search": "web_search",
    "web_fetch": "web_fetch",
    "code_execution": "code_execution",
    "tool_search_tool_regex": "tool_search",
    "tool_search_tool_bm25": "tool_search",
}
_CALLS = frozenset({"server_tool_use", "mcp_tool_use"})
_RESULTS = frozenset(
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


def _invalid(message: str) -> WireError:
    return WireError(400, message)


def _kind(tool_type: str) -> str | None:
    """The neutral kind of a server tool's dated type (``web_search_20250305``)."""
    base = tool_type.rsplit("_", 1)[0] if tool_type[-8:].isdigit() else tool_type
    return _KINDS.get(base)


def declared(
    raw_tools: Any, model: ClaudeProfile, betas: Sequence[str], raw_servers: Any
) -> tuple[ServerToolSpec, ...]:
    """The server tools a request declares; refuses what the model or request cannot take."""
    servers = {str(as_mapping(s).get("name")): as_mapping(s) for s in as_list(raw_servers)}
    specs: list[ServerToolSpec] = []
    for index, raw in enumerate(as_list(raw_tools)):
        tool = as_mapping(raw)
        tool_type = tool.get("type")
        if not isinstance(tool_type, str) or tool_type == "custom":
            continue
        if tool_type == "mcp_toolset":
            if MCP_BETA not in betas:
                # guess: the wording of a beta tool sent without its header is not published
                raise _invalid(
                    f"tools.{index}: the `mcp_toolset` tool requires the `{MCP_BETA}` beta header"
                )
            name = str(tool.get("mcp_server_name"))
            if name not in servers:
                # guess: the wording is not published
                raise _invalid(f"tools.{index}.mcp_server_name: no MCP server named {name!r}")
            configs = as_mapping(tool.get("configs"))
            enabled = tuple(k for k, v in configs.items() if as_mapping(v).get("enabled") is True)
            specs.append(ServerToolSpec("mcp", name=name, tools=enabled))
            continue
        kind = _kind(tool_type)
        if kind is None:
            continue  # a client tool with a type of Anthropic's (bash, memory...)
        if model.family in ("opus", "sonnet", "haiku") and (0, 0) < model.version < (3, 5):
            # guess: the refusal's wording is not published
            raise _invalid(f"tools.{index}: '{tool_type}' is not supported on {model.name}")
        max_uses = tool.get("max_uses")
        specs.append(ServerToolSpec(kind, max_uses=max_uses if isinstance(max_uses, int) else None))
    return tuple(specs)


def _seal(signer: Signer, scope: str, kind: str, content: str) -> str:
    return signer.seal_b64(scope, kind, content, size=96)


def _page(url: Any, title: Any) -> str:
    """What a page's ``encrypted_content`` (and a citation's ``encrypted_index``) seals: the
    page's URL and title, which the block shows beside it."""
    return json.dumps([str(url), str(title)])


def server_blocks(reply: Reply, seed: str, signer: Signer, scope: str) -> list[dict[str, Any]]:
    """The blocks of the reply's server tool uses, each call followed by its result."""
    blocks: list[dict[str, Any]] = []
    for n, use in enumerate(reply.server_uses):
        if use.kind == "mcp":
            call_id = use.id or stable_id("mcptoolu_01", seed, str(n))
            blocks.append(
                {
                    "type": "mcp_tool_use",
                    "id": call_id,
                    "name": use.name,
                    "server_name": use.server,
                    "input": dict(use.arguments),
                }
            )
            blocks.append(
                {
                    "type": "mcp_tool_result",
                    "tool_use_id": call_id,
                    "is_error": False,
                    "content": [{"type": "text", "text": use.output}],
                }
            )
            continue
        call_id = use.id or stable_id("srvtoolu_01", seed, str(n))
        if use.kind == "web_search":
            blocks.append(_call(call_id, "web_search", {"query": use.arguments.get("query", "")}))
            blocks.append(
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": call_id,
                    "content": [
                        {
                            "type": "web_search_result",
                            "url": hit.url,
                            "title": hit.title,
                            "encrypted_content": _seal(
                                signer, scope, KIND_PAGE, _page(hit.url, hit.title)
                            ),
                            "page_age": None,
                        }
                        for hit in use.hits
                    ],
                }
            )
        elif use.kind in ("web_fetch", "url_context"):
            url = str(use.arguments.get("url", ""))
            blocks.append(_call(call_id, "web_fetch", {"url": url}))
            text = use.hits[0].snippet if use.hits else ""
            blocks.append(
                {
                    "type": "web_fetch_tool_result",
                    "tool_use_id": call_id,
                    "content": {
                        "type": "web_fetch_result",
                        "url": url,
                        "content": {
                            "type": "document",
                            "source": {"type": "text", "media_type": "text/plain", "data": text},
                            "title": use.hits[0].title if use.hits else url,
                        },
                        "retrieved_at": "2026-01-01T00:00:00Z",
                    },
                }
            )
        elif use.kind == "code_execution":
            command = f"python3 -c {json.dumps(str(use.arguments.get('code', '')))}"
            blocks.append(_call(call_id, "bash_code_execution", {"command": command}))
            blocks.append(
                {
                    "type": "bash_code_execution_tool_result",
                    "tool_use_id": call_id,
                    "content": {
                        "type": "bash_code_execution_result",
                        "stdout": use.output,
                        "stderr": "",
                        "return_code": 0,
                        "content": [],
                    },
                }
            )
    return blocks


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "server_tool_use", "id": call_id, "name": name, "input": arguments}


def citations(
    text: str, uses: Sequence[ServerUse], signer: Signer, scope: str
) -> list[dict[str, Any]]:
    """``web_search_result_location`` citations for each page the answer names by URL."""
    found: list[dict[str, Any]] = []
    for use in uses:
        for hit in use.hits if use.kind == "web_search" else ():
            if hit.url in text and hit.snippet:
                found.append(
                    {
                        "type": "web_search_result_location",
                        "url": hit.url,
                        "title": hit.title,
                        "cited_text": hit.snippet[:150],
                        "encrypted_index": _seal(
                            signer, scope, KIND_CITATION, _page(hit.url, hit.title)
                        ),
                    }
                )
    return found


def server_usage(reply: Reply) -> dict[str, int]:
    """``usage.server_tool_use`` of the reply."""
    return {
        "web_search_requests": sum(1 for u in reply.server_uses if u.kind == "web_search"),
        "web_fetch_requests": sum(
            1 for u in reply.server_uses if u.kind in ("web_fetch", "url_context")
        ),
    }


def check_replay(
    messages: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], signer: Signer, scope: str
) -> None:
    """Replayed server tool blocks: every use answered in its own message, every page and
    citation as the service sealed it."""
    for i, (role, blocks) in enumerate(messages):
        if role != "assistant":
            continue
        answered = {b.get("tool_use_id") for b in blocks if b.get("type") in _RESULTS}
        missing = [
            str(b.get("id"))
            for b in blocks
            if b.get("type") in _CALLS and b.get("id") not in answered
        ]
        if missing and i < len(messages) - 1:  # the last may be a turn paused on the use
            # (`pause_turn`: sent back as it is, the service continues it)
            raise _invalid(
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
                "`tool_result` block in the next message."
            )
        for j, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "web_search_tool_result":
                for k, raw in enumerate(as_list(block.get("content"))):
                    page = as_mapping(raw)
                    if page.get("type") != "web_search_result":
                        continue
                    content = _page(page.get("url"), page.get("title"))
                    if not _opens(signer, scope, KIND_PAGE, page.get("encrypted_content"), content):
                        # guess: the service's wording for altered search results is not published
                        raise _invalid(
                            f"messages.{i}.content.{j}.content.{k}.encrypted_content: Invalid "
                            "encrypted content in `web_search_result` block"
                        )
            elif kind == "text":
                for k, raw in enumerate(as_list(block.get("citations"))):
                    cited = as_mapping(raw)
                    if cited.get("type") != "web_search_result_location":
                        continue
                    content = _page(cited.get("url"), cited.get("title"))
                    if not _opens(
                        signer, scope, KIND_CITATION, cited.get("encrypted_index"), content
                    ):
                        # guess: the service's wording for an altered citation is not published
                        raise _invalid(
                            f"messages.{i}.content.{j}.citations.{k}.encrypted_index: Invalid "
                            "encrypted index in `web_search_result_location` citation"
                        )


def _opens(signer: Signer, scope: str, kind: str, token: Any, content: str) -> bool:
    """Whether ``token`` is the emulator's seal of ``content`` for this scope."""
    return isinstance(token, str) and signer.verify_b64(scope, kind, token, content)


def read_blocks(blocks: Sequence[Mapping[str, Any]]) -> tuple[ServerUse, ...]:
    """The server tool uses a replayed assistant message's blocks show."""
    uses: list[ServerUse] = []
    results = {str(b.get("tool_use_id")): b for b in blocks if b.get("type") in _RESULTS}
    for block in blocks:
        kind = block.get("type")
        if kind not in _CALLS:
            continue
        call_id = str(block.get("id"))
        arguments = dict(as_mapping(block.get("input")))
        result = results.get(call_id, {})
        if kind == "mcp_tool_use":
            output = " ".join(
                str(as_mapping(c).get("text") or "") for c in as_list(result.get("content"))
            )
            uses.append(
                ServerUse(
                    "mcp",
                    str(block.get("name")),
                    arguments,
                    output=output,
                    server=str(block.get("server_name")),
                    id=call_id,
                )
            )
            continue
        name = str(block.get("name"))
        hits = tuple(
            SearchHit(str(as_mapping(p).get("url")), str(as_mapping(p).get("title")), "")
            for p in as_list(result.get("content"))
            if as_mapping(p).get("type") == "web_search_result"
        )
        content = mapping_or_none(result.get("content")) or {}
        neutral = {"bash_code_execution": "code_execution", "code_execution": "code_execution"}
        uses.append(
            ServerUse(
                neutral.get(name, _KINDS.get(name, name)),
                name,
                arguments,
                hits=hits,
                output=str(content.get("stdout") or ""),
                id=call_id,
            )
        )
    return tuple(uses)


def stream_events(index: int, block: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A server tool's block as the service streams it: a call opens with an empty input that
    ``input_json_delta`` events fill; a result arrives whole in its start."""
    if block.get("type") in _CALLS:
        opened: dict[str, Any] = {**block, "input": {}}
        events: list[tuple[str, dict[str, Any]]] = [("start", opened)]
        text = json.dumps(dict(as_mapping(block.get("input"))))
        events += [
            ("delta", {"type": "input_json_delta", "partial_json": p}) for p in split_json(text)
        ]
        return events
    return [("start", dict(block))]


def citation_deltas(cited: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A text block's citations as ``citations_delta`` events."""
    return [{"type": "citations_delta", "citation": dict(c)} for c in cited]
