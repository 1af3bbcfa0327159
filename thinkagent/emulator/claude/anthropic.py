"""Anthropic Messages API: ``POST /v1/messages`` (JSON and SSE) and
``POST /v1/messages/count_tokens``.

Authentication is ``x-api-key`` or ``Authorization: Bearer`` (401 without either; the key is
the account that account-bound thinking belongs to); the ``anthropic-version`` header is
required. Requests are validated by :mod:`thinkagent.emulator.claude.rules` on the
``anthropic`` platform. Responses carry ``input_transformations`` under the binding beta (on
``message_start`` when streamed), and open with a ``compaction`` block when the request's
compaction trigger was passed (streamed as its start, one ``compaction_delta`` with the whole
summary, and its stop). Streams send every event with its ``event:`` line:
``message_start``, ``ping``, then per block ``content_block_start`` /
``content_block_delta``... / ``content_block_stop`` (thinking opens with empty
``thinking`` and ``signature`` and gets one ``signature_delta`` before its stop;
``redacted_thinking`` arrives whole in its start), then ``message_delta`` and
``message_stop``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar, cast

from ..brain import reply_usage
from ..caching import CacheUse, PrefixCache
from ..encoding import chunk_text, request_id, split_json, sse_event, stable_id
from ..framework import (
    BodyLimit,
    EmulatorState,
    JsonReply,
    StreamReply,
    WireAPI,
    WireError,
    WireRequest,
    WireRoute,
)
from ..model import Reply, ReplyUsage
from . import server_tools
from .bodies import check_anthropic
from .rules import ClaudeBlock, ClaudeRequest, parse_request, render_blocks, stop_details
from .system import ClaudeError

__all__ = ["AnthropicAPI"]

SCOPE = "anthropic"

_ERRORS: Mapping[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    403: (
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    404: ("not_found_error", "Not found."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: (
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit "
        "(https://docs.claude.com/en/api/rate-limits); see the response headers for current usage. "
        "Please reduce the prompt length or the maximum tokens requested, or try again later.",
    ),
    500: ("api_error", "Internal server error"),
    503: ("api_error", "Service unavailable"),
    529: ("overloaded_error", "Overloaded"),
}


def _error_kind(status: int) -> tuple[str, str]:
    if status in _ERRORS:
        return _ERRORS[status]
    return (
        ("api_error", "Internal server error")
        if status >= 500
        else ("invalid_request_error", "Invalid request.")
    )


def _input_usage(reply: Reply, cached: CacheUse) -> dict[str, int]:
    """The input counts: ``input_tokens`` are those after the last cache breakpoint, neither
    read from the cache nor written to it."""
    usage = reply.usage
    assert usage is not None
    return {
        "input_tokens": usage.input_tokens - cached.read_tokens - cached.write_tokens,
        "cache_creation_input_tokens": cached.write_tokens,
        "cache_read_input_tokens": cached.read_tokens,
    }


def _usage(reply: Reply, cached: CacheUse, *, streaming_start: bool = False) -> dict[str, Any]:
    usage = reply.usage
    assert usage is not None
    hour = sum(tokens for ttl, tokens in cached.writes if ttl > 300)
    out: dict[str, Any] = {
        **_input_usage(reply, cached),
        "cache_creation": {
            "ephemeral_5m_input_tokens": cached.write_tokens - hour,
            "ephemeral_1h_input_tokens": hour,
        },
        "output_tokens": 1 if streaming_start else usage.output_tokens,
        "service_tier": "standard",
    }
    if not streaming_start:
        out["inference_geo"] = "not_available"
        out["output_tokens_details"] = {"thinking_tokens": usage.thinking_tokens}
    return out


_Block = ClaudeBlock | dict[str, Any]
"""A reply block: one the Claude rules render, or a server tool's block (or cited text) as
`server_tools` renders it, already in its wire shape."""


def _with_server_blocks(
    blocks: list[ClaudeBlock], reply: Reply, parsed: ClaudeRequest, seed: str, signer: Any
) -> list[_Block]:
    """The reply's server tool blocks after its thinking (and compaction), and its text with
    the citations of the pages it names."""
    uses = [*reply.server_uses, *(u for t in parsed.conversation.turns for u in t.server_uses)]
    if not reply.server_uses and not any(u.hits for u in uses):
        return list(blocks)
    server = server_tools.server_blocks(reply, seed, signer, SCOPE)
    at = next(
        (
            i
            for i, b in enumerate(blocks)
            if b.type not in ("thinking", "redacted_thinking", "compaction")
        ),
        len(blocks),
    )
    out: list[_Block] = [*blocks[:at], *server]
    for block in blocks[at:]:
        cited = (
            server_tools.citations(block.text, uses, signer, SCOPE) if block.type == "text" else []
        )
        out.append({"type": "text", "text": block.text, "citations": cited} if cited else block)
    return out


def _block_json(block: _Block) -> dict[str, Any]:
    if isinstance(block, dict):
        return block
    if block.type == "thinking":
        return {"type": "thinking", "thinking": block.text, "signature": block.signature}
    if block.type == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data_b64}
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "compaction":
        return {"type": "compaction", "content": block.text, "encrypted_content": block.data}
    if block.type == "fallback":
        return {"type": "fallback", **block.fields}
    return {"type": block.type, "id": block.id, "name": block.name, "input": dict(block.input)}


def _iterations(
    reply: Reply, fallback: Reply | None, request: ClaudeRequest
) -> list[dict[str, Any]] | None:
    """`usage.iterations` of a turn a fallback model served: the declining model's sampling,
    then the `fallback_message` that completed it."""
    if fallback is None or reply.usage is None or fallback.usage is None:
        return None

    def entry(kind: str, model: str, usage: Any) -> dict[str, Any]:
        return {
            "type": kind,
            "model": model,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }

    return [
        entry("message", request.model_name, reply.usage),
        entry("fallback_message", request.fallbacks[0], fallback.usage),
    ]


def _server_events(index: int, block: dict[str, Any]) -> list[bytes]:
    """A block in its wire shape, streamed: a server tool's call (its input in
    `input_json_delta`s) or result (whole in its start), or cited text (its citations as
    `citations_delta`s before its text)."""
    if block.get("type") == "text":
        events = [_start(index, {"type": "text", "text": ""})]
        events += [_delta(index, d) for d in server_tools.citation_deltas(block["citations"])]
        events += [
            _delta(index, {"type": "text_delta", "text": p}) for p in chunk_text(block["text"])
        ]
        return events
    out: list[bytes] = []
    for kind, payload in server_tools.stream_events(index, block):
        out.append(_start(index, payload) if kind == "start" else _delta(index, payload))
    return out


def _start(index: int, block: dict[str, Any]) -> bytes:
    return sse_event(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    return sse_event(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    )


def _combined(refused: Reply, served: Reply) -> Reply:
    """The reply a fallback-served turn reports: the serving model's stop reason, with both
    models' tokens counted."""
    first, second = refused.usage, served.usage
    if first is None or second is None:
        return served
    usage = ReplyUsage(
        input_tokens=first.input_tokens + second.input_tokens,
        output_tokens=first.output_tokens + second.output_tokens,
        thinking_tokens=first.thinking_tokens + second.thinking_tokens,
    )
    return replace(served, usage=usage)


class AnthropicAPI(WireAPI):
    """The Anthropic Messages wire API (scope ``anthropic``)."""

    name: ClassVar[str] = "anthropic"
    # https://docs.claude.com/en/api/overview#request-size-limits: 32 MB, 413 request_too_large
    body_limit: ClassVar[BodyLimit] = BodyLimit(32 * 2**20)

    def __init__(self, state: EmulatorState) -> None:
        super().__init__(state)
        self.cache = PrefixCache()
        """Prompt caching: the prefixes requests marked, per account and model."""

    def reset(self) -> None:
        self.cache.clear()

    def routes(self) -> Sequence[WireRoute]:
        return (
            WireRoute("/v1/messages", self.messages),
            WireRoute("/v1/messages/count_tokens", self.count_tokens),
        )

    def authenticate(self, request: WireRequest) -> None:
        if not request.headers.get("x-api-key") and not request.headers.get("authorization"):
            raise WireError(401, "x-api-key header is required")
        if not request.headers.get("anthropic-version"):
            raise WireError(400, "anthropic-version: header is required")

    def error(self, request: WireRequest, error: WireError) -> JsonReply:
        kind, default = _error_kind(error.status)
        rid = request_id("req_011C", request.seq)
        detail: dict[str, Any] = {"type": error.type or kind, "message": error.message or default}
        if isinstance(error, ClaudeError):
            detail["details"] = {"error_code": error.code}
        body = {"type": "error", "error": detail, "request_id": rid}
        headers = {"request-id": rid}
        if error.status >= 500:
            headers["x-should-retry"] = "true"
        return JsonReply(body, error.status, headers)

    def stream_error(self, request: WireRequest, error: WireError, *, index: int) -> bytes:
        kind, default = _error_kind(error.status)
        return sse_event(
            "error",
            {"type": "error", "error": {"type": kind, "message": error.message or default}},
        )

    def malformed_event(self) -> bytes:
        return b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {\n\n'

    # --- handlers ---------------------------------------------------------------------

    def _parse(self, request: WireRequest, *, require_max_tokens: bool = True) -> ClaudeRequest:
        body = request.body
        if not isinstance(body, Mapping):
            raise WireError(
                400, "Input should be a valid dictionary or object to extract fields from"
            )
        check_anthropic(cast("Mapping[str, Any]", body))
        credential = request.headers.get("x-api-key") or request.headers.get("authorization", "")
        return parse_request(
            cast("Mapping[str, Any]", body),
            platform=SCOPE,
            signer=self.state.signer,
            account=hashlib.sha256(credential.encode()).hexdigest()[:16],
            require_max_tokens=require_max_tokens,
            betas=[
                b.strip() for b in request.headers.get("anthropic-beta", "").split(",") if b.strip()
            ],
        )

    def count_tokens(self, request: WireRequest) -> JsonReply:
        parsed = self._parse(request, require_max_tokens=False)
        usage = reply_usage(parsed.conversation, Reply())
        return JsonReply({"input_tokens": usage.input_tokens})

    def messages(self, request: WireRequest) -> JsonReply | StreamReply:
        parsed = self._parse(request)
        cached = parsed.cache.use(self.cache) if parsed.cache is not None else CacheUse()
        reply = self.state.reply(self.name, parsed.conversation, parsed.settings)
        fallback = None
        if reply.stop == "refusal" and parsed.fallbacks:  # the next model continues the turn
            fallback = self.state.reply(self.name, parsed.conversation, parsed.settings)
        seed = parsed.conversation.digest()
        blocks = _with_server_blocks(
            render_blocks(
                reply,
                parsed,
                signer=self.state.signer,
                tool_id_prefix="toolu_01",
                seed=seed,
                fallback=fallback,
            ),
            reply,
            parsed,
            seed,
            self.state.signer,
        )
        served = reply if fallback is None else _combined(reply, fallback)
        details = stop_details(served, parsed, self.state.signer, f"{seed}/{request.seq}")
        iterations = _iterations(reply, fallback, parsed)
        message_id = stable_id("msg_01", seed, str(served.stop))
        model = cast("str", cast("Mapping[str, Any]", request.body)["model"])
        rid = request_id("req_011C", request.seq)
        headers = {"request-id": rid}
        if parsed.stream:
            return self._stream(
                message_id, model, served, blocks, headers, parsed, cached, details, iterations
            )
        usage = _usage(served, cached)
        if iterations is not None:
            usage["iterations"] = iterations
        if parsed.conversation.server_tools:
            usage["server_tool_use"] = server_tools.server_usage(reply)
        body: dict[str, Any] = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [_block_json(b) for b in blocks],
            "stop_reason": served.stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if details is not None:
            body["stop_details"] = details
        if parsed.transformations is not None:
            body["input_transformations"] = parsed.transformations
        return JsonReply(body, 200, headers)

    def _stream(
        self,
        message_id: str,
        model: str,
        reply: Reply,
        blocks: Sequence[_Block],
        headers: Mapping[str, str],
        parsed: ClaudeRequest,
        cached: CacheUse,
        details: dict[str, Any] | None = None,
        iterations: list[dict[str, Any]] | None = None,
    ) -> StreamReply:
        usage = reply.usage
        assert usage is not None
        start: dict[str, Any] = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": _usage(reply, cached, streaming_start=True),
        }
        if parsed.transformations is not None:
            start["input_transformations"] = parsed.transformations
        events: list[bytes] = [
            sse_event("message_start", {"type": "message_start", "message": start}),
            sse_event("ping", {"type": "ping"}),
        ]
        cut_at: int | None = None
        for index, block in enumerate(blocks):
            if isinstance(block, dict):
                events += _server_events(index, block)
                events.append(
                    sse_event("content_block_stop", {"type": "content_block_stop", "index": index})
                )
                continue
            if block.type == "thinking":
                events.append(_start(index, {"type": "thinking", "thinking": "", "signature": ""}))
                pieces = chunk_text(block.text)
                first_delta = len(events)
                events += [_delta(index, {"type": "thinking_delta", "thinking": p}) for p in pieces]
                if cut_at is None:
                    cut_at = first_delta + max(1, len(pieces) // 2) if pieces else first_delta
                events.append(
                    _delta(index, {"type": "signature_delta", "signature": block.signature})
                )
            elif block.type == "redacted_thinking":
                events.append(_start(index, {"type": "redacted_thinking", "data": block.data_b64}))
            elif block.type == "compaction":
                events.append(_start(index, {"type": "compaction", "content": ""}))
                events.append(
                    _delta(
                        index,
                        {
                            "type": "compaction_delta",
                            "content": block.text,
                            "encrypted_content": block.data,
                        },
                    )
                )
            elif block.type == "fallback":  # a start and a stop, no delta
                events.append(_start(index, _block_json(block)))
            elif block.type == "text":
                events.append(_start(index, {"type": "text", "text": ""}))
                events += [
                    _delta(index, {"type": "text_delta", "text": p}) for p in chunk_text(block.text)
                ]
            else:
                events.append(
                    _start(
                        index, {"type": block.type, "id": block.id, "name": block.name, "input": {}}
                    )
                )
                events += [
                    _delta(index, {"type": "input_json_delta", "partial_json": p})
                    for p in ["", *split_json(block.input_json)]
                ]
            events.append(
                sse_event("content_block_stop", {"type": "content_block_stop", "index": index})
            )
        delta_usage: dict[str, Any] = {
            **_input_usage(reply, cached),
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"thinking_tokens": usage.thinking_tokens},
        }
        if iterations is not None:
            delta_usage["iterations"] = iterations
        if parsed.conversation.server_tools:
            delta_usage["server_tool_use"] = server_tools.server_usage(reply)
        delta: dict[str, Any] = {"stop_reason": reply.stop, "stop_sequence": None}
        if details is not None:
            delta["stop_details"] = details
        events.append(
            sse_event(
                "message_delta",
                {"type": "message_delta", "delta": delta, "usage": delta_usage},
            )
        )
        events.append(sse_event("message_stop", {"type": "message_stop"}))
        stream_headers = {**headers, "cache-control": "no-cache"}
        return StreamReply(events, "text/event-stream; charset=utf-8", stream_headers, cut_at)
