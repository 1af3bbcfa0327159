"""`AnthropicModel`: Claude's thinking through the official `anthropic` SDK (Messages API).

```python
from thinkagent import Agent
from thinkagent.providers.claude import AnthropicModel, ClaudeThinking

model = AnthropicModel("claude-opus-4-7", thinking=ClaudeThinking.adaptive(), effort="high")
result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
```

Responses become one assistant `Message` with the blocks in the order Claude returned them:
`thinking` -> `ThinkingBlock.signed(text, signature)`, `redacted_thinking` ->
`ThinkingBlock.redacted_payload(data)`, `text` -> `TextPart` (with its citations), `tool_use` ->
`ToolCall`, a server tool's blocks -> `ServerToolCall` / `ServerToolResult` (`_server_tools`), and
any other block (`compaction`...) -> `OpaqueBlock`, kept whole. On later turns
the blocks go back byte for byte, each in its place: thinking to this scope and Claude's other
platforms (`anthropic_scope`), opaque blocks to this scope only; reasoning without a valid proof
is never sent as thinking. See `docs/providers/anthropic.md`.
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, cast

import anthropic
import httpx2
from anthropic import types as wire
from pydantic import JsonValue

from ...builtin_tools import BuiltinTool
from ...errors import ConfigurationError, ProviderError
from ...history import ForeignReasoning
from ...messages import (
    Citation,
    Document,
    FinishReason,
    Image,
    Message,
    OpaqueBlock,
    Part,
    ServerToolCall,
    ServerToolResult,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)
from ...stream import ModelDelta, PartEnd, StreamBuilder, WarningEvent
from .._common import (
    UNREADABLE,
    arguments_object,
    connection_error,
    copy_settings,
    endpoint_host,
    interrupted,
    request_options,
    retryable_status,
    unreadable,
)
from ..base import (
    MediaSupport,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ModelStreamEvent,
)
from . import _server_tools
from ._models import claude_info
from ._rules import (
    ClaudeModel,
    ClaudeThinking,
    Effort,
    Prepared,
    PromptCache,
    finish_reason,
    raise_mapped,
    token_usage,
    transformations_warning,
)

__all__ = ["DEFAULT_MAX_TOKENS", "MEDIA", "SCOPE", "AnthropicModel", "anthropic_scope"]

SCOPE = "anthropic"
"""The scope of messages from the Claude API (api.anthropic.com)."""

DEFAULT_MAX_TOKENS = 8192
"""`max_tokens` when neither the model nor the request settings give one."""

MEDIA = MediaSupport(
    types=frozenset(
        {"image/jpeg", "image/png", "image/gif", "image/webp", "application/pdf", "text/plain"}
    ),
    urls=True,
    max_bytes=32 * 1024 * 1024,
    in_tool_results=True,
)
"""What the Messages API takes: JPEG, PNG, GIF and WebP images (5 MB each), PDF and plain-text
documents, as bytes or by URL, also in tool results, within its 32 MB request limit
(platform.claude.com/docs/en/build-with-claude/vision, …/pdf-support)."""

_MAX_IMAGE_BYTES = 5 * 1024 * 1024

_PLATFORMS: Mapping[str, str] = {
    "AsyncAnthropicBedrock": "bedrock",
    "AsyncAnthropicBedrockMantle": "bedrock",
    "AsyncAnthropicAWS": "anthropic-aws",
    "AsyncAnthropicVertex": "anthropic-vertex",
    "AsyncAnthropicGoogleCloud": "anthropic-vertex",
    "AsyncAnthropicFoundry": "anthropic-foundry",
}
"""The SDK's clients for Claude's cloud platforms, and their scopes."""

_RETRYABLE_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})

_SDK_ERRORS = (anthropic.APIError, anthropic.CredentialsError, TypeError, ValueError)
"""What `messages.create` raises: the API's errors, and what the SDK refuses before sending."""

_INTERPRETED = frozenset({"thinking", "redacted_thinking", "text", "tool_use"})
"""The block types that become shared parts; every other block is kept as an `OpaqueBlock`."""


def anthropic_scope(client: object) -> str:
    """The scope of an `anthropic` client's messages, from where it sends them.

    `"anthropic"` for the Claude API (api.anthropic.com); `"bedrock"`, `"anthropic-aws"`,
    `"anthropic-vertex"` or `"anthropic-foundry"` for the SDK's clients of Claude's cloud
    platforms (their thinking is compatible with the Claude API's); `"anthropic@<host>"` (with
    the port when it is not the scheme's default) for any other endpoint speaking the
    Anthropic format: another vendor's (DeepSeek's, Kimi's, MiniMax's), a gateway, a local
    server. Claude's thinking never goes to such an endpoint, nor its blocks to Claude.
    """
    for cls in type(client).__mro__:
        platform = _PLATFORMS.get(cls.__name__)
        if platform is not None:
            return platform
    base_url = getattr(client, "base_url", None)
    if base_url is None:
        return SCOPE
    host = endpoint_host(base_url)
    return SCOPE if host == "api.anthropic.com" else f"{SCOPE}@{host}"


class AnthropicModel(ClaudeModel[anthropic.AsyncAnthropic]):
    """A Claude model behind the Anthropic Messages API, through `anthropic.AsyncAnthropic`.

    - `client`: your `AsyncAnthropic` (its retries, timeouts and base URL apply); built from
      the environment (`ANTHROPIC_API_KEY`...) when omitted.
    - `thinking`: a `ClaudeThinking`; `None` sends no `thinking` field (the model's default:
      the newest models think adaptively, older ones do not think). A configuration the model
      refuses is a `ConfigurationError` with the service's reason.
    - `effort`: `output_config.effort` (`low`, `medium`, `high`, `xhigh`, `max`).
    - `max_tokens`: the default output limit (a request's `max_tokens` setting overrides it);
      it must be above a thinking budget that is not interleaved.
    - `foreign_reasoning`: what happens to reasoning that cannot go back as Claude thinking
      (another provider's, or a block without a signature): `"drop"` (default) or `"text"`.
    - `settings`: default `ModelSettings`, under each request's own.
    - `extra_body`, `extra_headers`: passed through on every request (beta headers, fields the
      SDK does not name yet).
    - `scope`: the scope of this model's messages; by default from the client
      (`anthropic_scope`). Give one name to several endpoints that share keys.

    Every option is read back through a read-only property of the same name.
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: anthropic.AsyncAnthropic | None = None,
        thinking: ClaudeThinking | None = None,
        effort: Effort | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        foreign_reasoning: ForeignReasoning = "drop",
        settings: ModelSettings | None = None,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        scope: str | None = None,
    ) -> None:
        client = anthropic.AsyncAnthropic() if client is None else client
        super().__init__(
            model_name,
            client=client,
            scope=scope or anthropic_scope(client),
            thinking=thinking,
            effort=effort,
            max_tokens=max_tokens,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
        )
        self._extra_body = MappingProxyType(dict(extra_body or {}))
        self._extra_headers = MappingProxyType(dict(extra_headers or {}))
        info = claude_info(model_name)
        self._profile = ModelProfile(
            native_output=info is not None and info.structured_output, media=MEDIA
        )

    @property
    def extra_body(self) -> Mapping[str, Any]:
        """Fields added to every request body."""
        return self._extra_body

    @property
    def extra_headers(self) -> Mapping[str, str]:
        """Headers added to every request."""
        return self._extra_headers

    @property
    def profile(self) -> ModelProfile:
        """What this model takes beyond text: the Messages API's images and documents (`MEDIA`),
        and native structured output (`output_config.format`, which works with thinking and
        tools) on the models Anthropic documents it for (Claude 4.5 and newer)."""
        return self._profile

    def check_builtin_tools(self, tools: Sequence[BuiltinTool]) -> None:
        """Raise `ConfigurationError` for a server tool (or option) Claude, this platform or
        this model lacks (see `_server_tools`)."""
        _server_tools.check(tools, self.model_name, self.scope)

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for `client.messages.create` (without `stream`).

        Raises `ConfigurationError` for settings Claude would refuse (a forced tool choice
        with a thinking budget, a budget not below `max_tokens`, an image over 5 MB), and
        `HistoryError` for a history it would refuse, before anything is sent.
        """
        return self._build(request)[0]

    def _build(self, request: ModelRequest) -> tuple[dict[str, Any], Prepared]:
        prepared = self._prepare(request, request.tools)
        settings = prepared.settings
        params: dict[str, Any] = {
            "model": self.model_name,
            "max_tokens": prepared.max_tokens,
            "messages": _messages(prepared),
        }
        cache = prepared.cache
        marker = _marker(cache) if cache is not None else None
        if request.instructions:
            params["system"] = (
                [{"type": "text", "text": request.instructions, "cache_control": marker}]
                if marker is not None
                else request.instructions
            )
        if prepared.thinking is not None:
            params["thinking"] = prepared.thinking.to_param()
        output_config: dict[str, Any] = {}
        if prepared.effort is not None:
            output_config["effort"] = prepared.effort
        if request.output is not None and request.output.mode == "native":
            output_config["format"] = {"type": "json_schema", "schema": request.output.schema}
        if output_config:
            params["output_config"] = output_config
        server, servers, server_betas = self._server_tools(request)
        if request.tools:
            tools: list[dict[str, Any]] = []
            for tool in request.tools:
                spec: dict[str, Any] = {"name": tool.name, "input_schema": tool.parameters}
                if tool.description:
                    spec["description"] = tool.description
                tools.append(spec)
            _server_tools.defer(tools, request.builtin_tools)
            if marker is not None and not request.instructions:
                shown = [t for t in tools if "defer_loading" not in t]
                if shown:
                    shown[-1]["cache_control"] = marker
            params["tools"] = tools
            tool_choice = _tool_choice(
                settings.get("tool_choice"), settings.get("parallel_tool_calls")
            )
            if tool_choice is not None:
                params["tool_choice"] = tool_choice
        if server:
            params["tools"] = [*params.get("tools", []), *server]
        copy_settings(settings, params, stop_sequences="stop_sequences")
        headers = self._extra_headers
        if prepared.betas or server_betas:
            given = [b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()]
            betas = ",".join(dict.fromkeys([*given, *prepared.betas, *server_betas]))
            headers = {**headers, "anthropic-beta": betas}
        body = self._extra_body
        if servers:  # the MCP connector's servers: not a parameter of this SDK's `create`
            body = {"mcp_servers": servers, **body}
        # This SDK has no sampling parameters; the API still reads them from the body.
        request_options(params, settings, body, headers, body_settings=("temperature", "top_p"))
        return params, prepared

    def _server_tools(
        self, request: ModelRequest
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], tuple[str, ...]]:
        """The request's server tools: declarations, MCP servers, beta headers (checked: what
        Claude lacks, and a function tool named like a server tool, is refused)."""
        if not request.builtin_tools:
            return [], [], ()
        _server_tools.check(request.builtin_tools, self.model_name, self.scope)
        declared, servers, betas = _server_tools.declarations(request.builtin_tools)
        names = {str(d.get("name")) for d in declared if "name" in d}
        clash = next((t.name for t in request.tools if t.name in names), None)
        if clash is not None:
            raise ConfigurationError(
                f"a tool is named {clash!r}, the name of a server tool in the request: rename it"
            )
        return declared, servers, betas

    def build_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The `messages` parameter for a history: Claude's thinking replayed exactly."""
        return _messages(self._prepare(ModelRequest(messages=messages), ()))

    async def request(self, request: ModelRequest) -> ModelResponse:
        params, prepared = self._build(request)
        try:
            message = cast("wire.Message", await self.client.messages.create(**params))
        except _SDK_ERRORS as exc:
            raise_mapped(self.map_error(exc), exc)
        try:
            return self._response(message, prepared)
        except UNREADABLE as exc:
            raise unreadable(exc, scope=self.scope) from exc

    def parse_response(self, message: wire.Message) -> ModelResponse:
        """The shared form of an SDK `Message`: blocks in order, usage, finish reason, and a
        `thinking_dropped` warning for the blocks the service says it dropped."""
        return self._response(message, None)

    def _response(self, message: wire.Message, prepared: Prepared | None) -> ModelResponse:
        parts: list[Part] = []
        calls: dict[str, ServerToolCall] = {}
        for block in message.content:
            if block.type == "thinking":
                parts.append(ThinkingBlock.signed(block.thinking, block.signature))
            elif block.type == "redacted_thinking":
                parts.append(ThinkingBlock.redacted_payload(block.data))
            elif block.type == "text":
                cited = tuple(
                    _server_tools.citation(c.model_dump(mode="json", exclude_unset=True))
                    for c in block.citations or ()
                )
                parts.append(TextPart(text=block.text, citations=cited))
            elif block.type == "tool_use":
                parts.append(
                    ToolCall(
                        id=block.id,
                        name=block.name,
                        arguments=cast("dict[str, JsonValue]", dict(block.input)),
                    )
                )
            else:
                data = block.model_dump(mode="json", exclude_unset=True)
                part = _server_tools.part_of(data, calls) or OpaqueBlock.of(data)
                if isinstance(part, ServerToolCall):
                    calls[part.id] = part
                parts.append(part)
        transformations = _transformations(message)
        warnings: Sequence[WarningEvent] = prepared.warnings if prepared else ()
        dropped = transformations_warning(transformations, self.scope)
        if dropped is not None:
            warnings = [*warnings, dropped]
        details = self._details(
            prepared, parts, message.stop_reason, message.stop_sequence, transformations
        )
        return ModelResponse(
            Message(
                role="assistant",
                parts=tuple(parts),
                scope=self.scope,
                model=message.model or self.model_name,
                id=message.id,
                usage=_with_uses(
                    _usage(message.usage, None),
                    getattr(message.usage, "server_tool_use", None),
                    parts,
                ),
                finish_reason=self.map_finish_reason(message.stop_reason),
                provider_details=details,
            ),
            warnings=tuple(warnings),
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Warnings, then deltas as Claude streams them with a `PartEnd` at each block's end,
        then the complete `ModelResponse`. Raises `StreamInterrupted` (with the unsigned partial
        message) when the stream ends before `message_stop`, and `ProviderError` for an error
        event."""
        params, prepared = self._build(request)
        for warning in prepared.warnings:
            yield warning
        try:
            events = await self.client.messages.create(**params, stream=True)
        except _SDK_ERRORS as exc:
            raise_mapped(self.map_error(exc), exc)
        parts = _Stream(self.scope)
        broken: Exception | None = None
        try:
            async with events:
                async for event in events:
                    if (out := parts.fold(event)) is not None:
                        yield out
        except anthropic.APIStatusError as exc:  # an error event in the stream
            raise self.map_error(exc) from exc
        except (httpx2.HTTPError, anthropic.APIConnectionError, json.JSONDecodeError) as exc:
            broken = exc  # a dropped connection, a truncated body, an event that is not JSON
        model = parts.start.model if parts.start is not None and parts.start.model else None
        model = model or self.model_name
        if broken is not None or not parts.finished:
            reason = (
                "the stream ended before message_stop"
                if broken is None
                else f"the stream broke before message_stop: {broken}"
            )
            raise interrupted(reason, parts.builder, scope=self.scope, model=model) from broken
        yield ModelResponse(parts.message(self, prepared, model), warnings=parts.warnings(prepared))

    def map_error(self, exc: BaseException) -> BaseException:
        """The thinkagent error for an SDK exception: `ProviderError` for the API's errors (its
        own message, status and type) and connection failures, `ConfigurationError` for what the
        SDK refuses before sending (no credentials, a long non-streamed request); anything else
        comes back as it is."""
        if isinstance(exc, anthropic.APIStatusError):
            status: int | None = exc.status_code
            error_type = cast("str | None", exc.type)
            # `api_message` is the body's `error.message`
            message = exc.api_message or exc.message
            if status == 200:  # an error event after the stream started
                status = None
            retryable = error_type in _RETRYABLE_TYPES or retryable_status(status)
            return ProviderError(
                message, scope=self.scope, status=status, retryable=retryable, error_type=error_type
            )
        if isinstance(exc, anthropic.APIConnectionError):
            timeout = isinstance(exc, anthropic.APITimeoutError)
            return connection_error(exc.message, scope=self.scope, timeout=timeout)
        if isinstance(exc, anthropic.APIError):
            return ProviderError(exc.message, scope=self.scope, error_type=type(exc).__name__)
        if isinstance(exc, json.JSONDecodeError):  # a 200 whose body is not JSON
            return unreadable(exc, scope=self.scope)
        text = str(exc)
        if isinstance(exc, anthropic.CredentialsError) or (
            "Could not resolve authentication method" in text
        ):
            return ConfigurationError(
                "no Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or "
                f"pass client=anthropic.AsyncAnthropic(...) ({type(exc).__name__})"
            )
        if "Streaming is required" in text:
            return ConfigurationError(
                f"{text} (a large max_tokens on a non-streamed request: stream it with "
                "Agent.run_stream, or set a `timeout` in the model settings)"
            )
        return exc

    @staticmethod
    def map_finish_reason(raw: str | None) -> FinishReason | None:
        """Claude's `stop_reason`, normalised (None for `pause_turn` and values it does not
        know)."""
        return finish_reason(raw)


def _messages(prepared: Prepared) -> list[dict[str, Any]]:
    messages = [
        {"role": role, "content": [_block(part) for part in parts]}
        for role, parts in prepared.turns
    ]
    cache = prepared.cache
    if cache is not None:
        marker = _marker(cache)
        for turn, part in cache.marks:
            cast("list[dict[str, Any]]", messages[turn]["content"])[part]["cache_control"] = marker
    return messages


def _marker(cache: PromptCache) -> dict[str, Any]:
    """A breakpoint: `cache_control`, with the lifetime when one was asked for."""
    if cache.ttl is None:
        return {"type": "ephemeral"}
    return {"type": "ephemeral", "ttl": cache.ttl}


def _tool_choice(choice: str | None, parallel: bool | None) -> dict[str, Any] | None:
    if choice is None and parallel is None:
        return None
    if choice is None or choice == "auto":
        param: dict[str, Any] = {"type": "auto"}
    elif choice == "none":
        return {"type": "none"}
    elif choice == "required":
        param = {"type": "any"}
    else:
        param = {"type": "tool", "name": choice}
    if parallel is False:
        param["disable_parallel_tool_use"] = True
    return param


def _with_uses(usage: Usage, reported: Any, parts: Sequence[Part]) -> Usage:
    """`usage` with the server tool uses of the response."""
    uses = _server_tools.uses(reported, parts)
    return usage.model_copy(update={"server_tool_uses": uses}) if uses else usage


def _block(part: Part) -> dict[str, Any]:
    if isinstance(part, ThinkingBlock):
        if part.redacted is not None:
            return {"type": "redacted_thinking", "data": part.redacted}
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    if isinstance(part, TextPart):
        return _server_tools.text_block(part)
    if isinstance(part, ToolCall):
        return {
            "type": "tool_use",
            "id": part.id,
            "name": part.name,
            "input": arguments_object(part),
        }
    if isinstance(part, (Image, Document)):
        return _media(part)
    if isinstance(part, OpaqueBlock | ServerToolCall):
        return dict(part.data)
    if isinstance(part, ServerToolResult):
        return dict(part.data or {})
    assert isinstance(part, ToolResult)
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.call_id}
    if part.media:
        text = part.content_text()
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text.strip() else []
        result["content"] = content + [_media(m) for m in part.media]
    else:
        result["content"] = part.content_text()
    result["is_error"] = part.is_error
    return result


def _media(part: Image | Document) -> dict[str, Any]:
    """An image or document block: its bytes as base64 (plain text as text), or its URL."""
    if part.url is not None:
        source: dict[str, Any] = {"type": "url", "url": part.url}
    elif part.media_type == "text/plain":
        assert part.data is not None
        source = {"type": "text", "media_type": "text/plain", "data": part.data.decode()}
    else:
        assert part.data is not None
        if isinstance(part, Image) and len(part.data) > _MAX_IMAGE_BYTES:
            raise ConfigurationError(
                f"an image of {len(part.data)} bytes is over the Messages API's limit of "
                f"{_MAX_IMAGE_BYTES} bytes per image: resize it"
            )
        data = base64.b64encode(part.data).decode("ascii")
        source = {"type": "base64", "media_type": part.media_type, "data": data}
    block: dict[str, Any] = {"type": part.kind, "source": source}
    if isinstance(part, Document) and part.name:
        block["title"] = part.name
    return block


def _transformations(message: wire.Message) -> list[dict[str, Any]]:
    """The response's `input_transformations` (top level, not in this SDK's types: kept among
    the model's extra fields), as dictionaries."""
    raw = (message.model_extra or {}).get("input_transformations")
    if not isinstance(raw, list):
        return []
    items: list[dict[str, Any]] = []
    for item in cast("list[Any]", raw):
        if isinstance(item, dict):
            items.append(cast("dict[str, Any]", item))
        elif hasattr(item, "model_dump"):
            items.append(item.model_dump(mode="json"))
    return items


class _Stream:
    """One response's stream: the events folded into a `StreamBuilder`, the blocks kept whole
    (`OpaqueBlock`), and what `message_start` (the id, the input counts, the dropped thinking)
    and `message_delta` (the stop reason, the final counts) said."""

    def __init__(self, scope: str) -> None:
        self.builder = StreamBuilder(json_arguments=True)
        self.scope = scope
        self.start: wire.Message | None = None
        self.end: wire.RawMessageDeltaEvent | None = None
        self.finished = False
        self.transformations: list[dict[str, Any]] = []
        self._opaque: dict[int, dict[str, Any]] = {}
        self._json: dict[int, str] = {}  # a block kept whole: its input's JSON so far
        self._kinds: dict[int, type[Part]] = {}  # a block kept whole: the part it becomes
        self._calls: dict[str, ServerToolCall] = {}  # the server tool calls so far, by id
        self._citations: dict[int, list[Citation]] = {}

    def fold(self, event: wire.RawMessageStreamEvent) -> ModelDelta | PartEnd | WarningEvent | None:
        """Fold one event: the delta, part end or warning to yield, or None."""
        if event.type == "content_block_delta":  # the hot path: one call per delta
            delta, index = event.delta, event.index
            if index in self._opaque:
                self._fold_opaque(index, delta.model_dump(mode="json", exclude_unset=True))
            elif delta.type == "thinking_delta":
                return self.builder.thinking(index, delta.thinking)
            elif delta.type == "text_delta":
                return self.builder.text(index, delta.text)
            elif delta.type == "signature_delta":
                return self.builder.thinking(index, signature=delta.signature)
            elif delta.type == "input_json_delta":
                return self.builder.tool_call(index, arguments=delta.partial_json)
            elif delta.type == "citations_delta":
                cited = self._citations.setdefault(index, [])
                data = delta.citation.model_dump(mode="json", exclude_unset=True)
                cited.append(_server_tools.citation(data))
                return self.builder.text(index, citations=tuple(cited))
            return None
        if event.type == "content_block_start":
            return self._start(event)
        if event.type == "content_block_stop":
            end = self.builder.end(event.index)
            if end is not None and isinstance(end.part, ServerToolCall):
                self._calls[end.part.id] = end.part
            return end
        if event.type == "message_start":
            self.start = event.message
            self.transformations = _transformations(event.message)
            return transformations_warning(self.transformations, self.scope)
        if event.type == "message_delta":
            self.end = event
        elif event.type == "message_stop":
            self.finished = True
        # else `ping` (the SDK drops it) and types added later: no part
        return None

    def _start(self, event: wire.RawContentBlockStartEvent) -> ModelDelta | None:
        """A block's start opens it, and carries a tool call's id and name, a redacted payload
        whole, and the first state of a block kept whole."""
        block = event.content_block
        index = event.index
        if block.type == "thinking":
            # The start's signature is a placeholder (""): the real one comes in a signature_delta.
            signature = None if block.signature == "" else block.signature
            return self.builder.thinking(index, block.thinking, signature=signature)
        if block.type == "text":
            return self.builder.text(index, block.text)
        if block.type == "tool_use":
            arguments = json.dumps(block.input) if block.input else ""
            return self.builder.tool_call(index, id=block.id, name=block.name, arguments=arguments)
        if block.type == "redacted_thinking":
            return self.builder.thinking(index, redacted=block.data)
        data = block.model_dump(mode="json", exclude_unset=True)
        self._opaque[index] = data
        self._keep(index, data)
        return None

    def _keep(self, index: int, data: dict[str, Any]) -> None:
        """Fold a block kept whole, as the part it becomes: a server tool's call or result
        (`_server_tools.part_of`), else an `OpaqueBlock`."""
        kind = self._kinds.get(index)
        if kind is None:
            block_type = data.get("type")
            kind = (
                ServerToolCall
                if block_type in _server_tools.CALL_TYPES
                else ServerToolResult
                if block_type in _server_tools.RESULT_TYPES
                else OpaqueBlock
            )
            self._kinds[index] = kind
        if kind is OpaqueBlock:
            self.builder.opaque(index, data)
        else:
            self.builder.block(index, data, kind, self._server_part)

    def _server_part(self, data: dict[str, JsonValue]) -> Part:
        part = _server_tools.part_of(data, self._calls)
        return part if part is not None else OpaqueBlock.of(data)

    def _fold_opaque(self, index: int, delta: dict[str, Any]) -> None:
        """Fold a delta into a block kept whole: `input_json_delta` fragments make its `input`,
        the text fields of any other delta are appended to the block's fields of that name (a
        `compaction_delta` brings the summary in `content`)."""
        data = self._opaque[index]
        if delta.get("type") == "input_json_delta":
            self._json[index] = self._json.get(index, "") + str(delta.get("partial_json", ""))
            with contextlib.suppress(ValueError):  # not whole yet
                data["input"] = json.loads(self._json[index])
        else:
            for key, value in delta.items():
                if key != "type" and isinstance(value, str):
                    data[key] = str(data.get(key) or "") + value
        self._keep(index, dict(data))

    def warnings(self, prepared: Prepared) -> tuple[WarningEvent, ...]:
        dropped = transformations_warning(self.transformations, self.scope)
        return (*prepared.warnings, *((dropped,) if dropped is not None else ()))

    def message(self, model: AnthropicModel, prepared: Prepared, name: str) -> Message:
        """The message a finished stream describes."""
        end = self.end
        stop_reason = end.delta.stop_reason if end is not None else None
        usage = _usage(self.start.usage if self.start is not None else None, end)
        reported = getattr(end.usage, "server_tool_use", None) if end is not None else None
        if reported is None and self.start is not None:
            reported = getattr(self.start.usage, "server_tool_use", None)
        message = self.builder.message(
            scope=self.scope,
            model=name,
            usage=usage,
            finish_reason=AnthropicModel.map_finish_reason(stop_reason),
            id=self.start.id if self.start is not None else None,
        )
        details = model._details(  # pyright: ignore[reportPrivateUsage]
            prepared,
            message.parts,
            stop_reason,
            end.delta.stop_sequence if end is not None else None,
            self.transformations,
        )
        usage = _with_uses(usage, reported, message.parts)
        return message.model_copy(update={"provider_details": details, "usage": usage})


def _usage(start: wire.Usage | None, end: wire.RawMessageDeltaEvent | None) -> Usage:
    """A response's counts: a whole message's `usage`, or a stream's (`message_start` has the
    input counts, `message_delta` the final, cumulative, ones)."""
    if end is None:  # a whole message
        details = getattr(start, "output_tokens_details", None)
        return token_usage(
            getattr(start, "input_tokens", None),
            getattr(start, "cache_read_input_tokens", None),
            getattr(start, "cache_creation_input_tokens", None),
            getattr(start, "output_tokens", None),
            details.thinking_tokens if details is not None else None,
        )
    final = end.usage

    def pick(name: str) -> int | None:
        value = getattr(final, name, None)
        if value is None and start is not None:
            value = getattr(start, name, None)
        return cast("int | None", value)

    details = final.output_tokens_details
    if details is None and start is not None:
        details = start.output_tokens_details
    return token_usage(
        pick("input_tokens"),
        pick("cache_read_input_tokens"),
        pick("cache_creation_input_tokens"),
        pick("output_tokens"),
        details.thinking_tokens if details is not None else None,
    )
