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
from typing import Any, Literal, cast

import anthropic
import httpx2
from anthropic import types as wire
from anthropic.resources.messages import AsyncMessages
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
    SystemNote,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)
from ...stream import ModelDelta, PartEnd, StreamBuilder, WarningEvent
from .._common import (
    COMPACT,
    UNREADABLE,
    JsonPieces,
    arguments_object,
    connection_error,
    copy_settings,
    encoded_post,
    endpoint_host,
    interrupted,
    json_array,
    received,
    request_options,
    retryable_status,
    tool_arguments,
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

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "MEDIA",
    "SCOPE",
    "AnthropicModel",
    "Fallbacks",
    "Speed",
    "anthropic_scope",
]

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

Speed = Literal["standard", "fast"]
"""Claude's inference speed (`speed`): `"fast"` is fast mode, on the models that have it."""

Fallbacks = Sequence[str | Mapping[str, Any]] | Literal["default"]
"""Server-side fallback: up to three models (a name, or a `fallbacks` entry with its own
`max_tokens`, `thinking`, `output_config` or `speed`), or `"default"` for the model's own."""

_FALLBACKS_BETA = "server-side-fallback-2026-06-01"
_DEFAULT_FALLBACKS_BETA = "server-side-fallback-2026-07-01"
_FAST_MODE_BETA = "fast-mode-2026-02-01"
_TASK_BUDGETS_BETA = "task-budgets-2026-03-13"
_MAX_FALLBACKS = 3
_FALLBACK_FIELDS = frozenset({"model", "max_tokens", "thinking", "output_config", "speed"})


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
    - `fallbacks`: server-side fallback (`Fallbacks`): when a classifier refuses, the service
      lets the next model continue the same turn; the response then holds a `fallback` block
      (an `OpaqueBlock`) where one model's output gives way to the next, and goes back with it
      in that place.
    - `speed`: `"fast"` for fast mode (`Speed`); `task_budget`: a token budget for the whole
      task (`output_config.task_budget`), which Claude paces itself by.
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
        fallbacks: Fallbacks | None = None,
        speed: Speed | None = None,
        task_budget: int | None = None,
    ) -> None:
        fallback_param = _fallbacks_param(fallbacks)
        if speed is not None and speed not in ("standard", "fast"):
            raise ConfigurationError(f"speed must be 'standard' or 'fast', got {speed!r}")
        if task_budget is not None and (
            not isinstance(task_budget, int) or isinstance(task_budget, bool) or task_budget < 1  # pyright: ignore[reportUnnecessaryIsInstance]
        ):
            raise ConfigurationError(
                f"task_budget must be a positive number of tokens, got {task_budget!r}"
            )
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
        self._fallbacks = fallbacks
        self._fallback_param = fallback_param
        self._speed: Speed | None = speed
        self._task_budget = task_budget
        betas: list[str] = []
        if fallback_param is not None:
            betas.append(
                _DEFAULT_FALLBACKS_BETA if fallback_param == "default" else _FALLBACKS_BETA
            )
        if speed == "fast":
            betas.append(_FAST_MODE_BETA)
        if task_budget is not None:
            betas.append(_TASK_BUDGETS_BETA)
        self._betas = tuple(betas)
        info = claude_info(model_name)
        self._profile = ModelProfile(
            native_output=info is not None and info.structured_output,
            media=MEDIA,
            reasoning=info is None or info.reasons,
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
    def fallbacks(self) -> Fallbacks | None:
        """The server-side fallback models (None: no fallback)."""
        return self._fallbacks

    @property
    def speed(self) -> Speed | None:
        """The inference speed asked for (None: the model's default)."""
        return self._speed

    @property
    def task_budget(self) -> int | None:
        """The task's token budget (None: none)."""
        return self._task_budget

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
        params, prepared = self._build(request)
        params["messages"] = _messages(prepared)
        return params

    def _build(self, request: ModelRequest) -> tuple[dict[str, Any], Prepared]:
        """The keyword arguments for `client.messages.create` but `messages` (a placeholder:
        `_messages` for the typed call, `_messages_json` for `_send`), and what was prepared."""
        prepared = self._prepare(request, request.tools)
        settings = prepared.settings
        params: dict[str, Any] = {
            "model": self.model_name,
            "max_tokens": prepared.max_tokens,
            "messages": None,
        }
        cache = prepared.cache
        marker = _marker(cache) if cache is not None else None
        if prepared.system:
            params["system"] = (
                [{"type": "text", "text": prepared.system, "cache_control": marker}]
                if marker is not None
                else prepared.system
            )
        if prepared.thinking is not None:
            params["thinking"] = prepared.thinking.to_param()
        output_config: dict[str, Any] = {}
        if prepared.effort is not None:
            output_config["effort"] = prepared.effort
        if request.output is not None and request.output.mode == "native":
            output_config["format"] = {"type": "json_schema", "schema": request.output.schema}
        if self._task_budget is not None:
            output_config["task_budget"] = {"type": "tokens", "total": self._task_budget}
        if output_config:
            params["output_config"] = output_config
        if self._speed is not None:
            params["speed"] = self._speed
        server, servers, server_betas = self._server_tools(request)
        if prepared.tools:
            tools: list[dict[str, Any]] = []
            for tool in prepared.tools:
                spec: dict[str, Any] = {"name": tool.name, "input_schema": tool.parameters}
                if tool.description:
                    spec["description"] = tool.description
                if tool.name in prepared.deferred:
                    spec["defer_loading"] = True
                tools.append(spec)
            _server_tools.defer(tools, request.builtin_tools)
            shown = [t for t in tools if "defer_loading" not in t]
            if marker is not None and not prepared.system and shown:
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
        asked = settings.get("extra_headers", {}).get("anthropic-beta", "")
        wanted = (*prepared.betas, *self._betas, *server_betas)
        if wanted or asked:
            given = [
                b.strip()
                for b in f"{headers.get('anthropic-beta', '')},{asked}".split(",")
                if b.strip()
            ]
            betas = ",".join(dict.fromkeys([*given, *wanted]))
            headers = {**headers, "anthropic-beta": betas}
            if asked:  # merged above: the request's own header would replace the whole list
                settings = ModelSettings(settings)
                settings["extra_headers"] = {
                    **settings.get("extra_headers", {}),
                    "anthropic-beta": betas,
                }
        body = self._extra_body
        if self._fallback_param is not None:  # not a parameter of this SDK's `create`
            body = {"fallbacks": self._fallback_param, **body}
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
            message = cast("wire.Message", await self._send(params, prepared, stream=False))
        except _SDK_ERRORS as exc:
            raise_mapped(self.map_error(exc), exc)
        try:
            return received(self._response(message, prepared))
        except UNREADABLE as exc:
            raise unreadable(exc, scope=self.scope) from exc

    async def _send(self, params: dict[str, Any], prepared: Prepared, *, stream: bool) -> object:
        """Send a request by `messages.create`, its messages sent as JSON text put together from
        each part's JSON encoded once (`_messages_json`, `encoded_post`) where the client sends
        a body as it is given (`_posts_json`); by the plain typed call elsewhere (ADR 180)."""
        client = cast("object", self.client)  # the SDK's client, or one that looks like it
        messages, text = self._messages_json(prepared)
        params["messages"] = messages
        if isinstance(client, anthropic.AsyncAnthropic) and _posts_json(client):
            sdk: Any = AsyncMessages(client)
            sdk._post = encoded_post(sdk._post, "messages", messages, text, _OMITTED)
            create = cast("AsyncMessages", sdk).create
        else:
            create = self.client.messages.create
        if stream:
            return await create(**params, stream=True)
        return cast("wire.Message", await create(**params))

    def _messages_json(self, prepared: Prepared) -> tuple[list[dict[str, Any]], JsonPieces]:
        """`messages` (`_messages`, its blocks shared: a block with a cache breakpoint copied
        with it, each time), and its JSON text, from each part's JSON encoded once; each turn's
        message and JSON kept with the message it ends (`_turns_encoded`)."""
        turns = self._turns_encoded(
            prepared, lambda k, role, parts: self._turn_json(prepared, k, role, parts)
        )
        messages = [message for message, _ in turns]
        texts = [text for _, text in turns]
        return messages, json_array(texts)

    def _turn_json(
        self, prepared: Prepared, k: int, role: str, parts: list[Part]
    ) -> tuple[dict[str, Any], str]:
        """Turn `k` as a message of `messages` and its JSON, from each part's JSON encoded once
        (the part with the turn's cache breakpoint, if any, encoded with it)."""
        if role == "system":
            message = _system_message(parts)
            return message, COMPACT.encode(message)
        get = self._per_message.get
        cache = prepared.cache
        marks = {j for turn, j in cache.marks if turn == k} if cache is not None else ()
        blocks: list[dict[str, Any]] = []
        encoded: list[str] = []
        for j, part in enumerate(parts):
            if j in marks:
                assert cache is not None
                block = {**_block(part), "cache_control": _marker(cache)}
                blocks.append(block)
                encoded.append(COMPACT.encode(block))
            else:
                block, json_text = get(part, _BLOCK_JSON, _block_json, part)
                blocks.append(block)
                encoded.append(json_text)
        return {
            "role": role,
            "content": blocks,
        }, f'{{"role":"{role}","content":[{",".join(encoded)}]}}'

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
                        arguments=tool_arguments(block.input),
                        provider_details=_caller(block),
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
            prepared,
            parts,
            message.stop_reason,
            message.stop_sequence,
            transformations,
            _stop_details(message.stop_details),
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
            events = cast(
                "anthropic.AsyncStream[wire.RawMessageStreamEvent]",
                await self._send(params, prepared, stream=True),
            )
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
        """Claude's `stop_reason`, normalised (`refusal`, `pause_turn` and
        `model_context_window_exceeded` keep their names; None for values it does not know)."""
        return finish_reason(raw)


def _fallbacks_param(fallbacks: Fallbacks | None) -> list[dict[str, Any]] | str | None:
    """The `fallbacks` field for the option (checked: at most three, each with a model and
    only the fields a `fallbacks` entry takes)."""
    if fallbacks is None:
        return None
    if isinstance(fallbacks, str):
        if fallbacks != "default":
            raise ConfigurationError(
                f"fallbacks is a list of models or 'default', got {fallbacks!r}"
            )
        return fallbacks
    entries: list[dict[str, Any]] = []
    for entry in fallbacks:
        item = {"model": entry} if isinstance(entry, str) else dict(entry)
        if not isinstance(item.get("model"), str) or not item["model"]:
            raise ConfigurationError(f"a fallbacks entry needs a model: {entry!r}")
        unknown = sorted(set(item) - _FALLBACK_FIELDS)
        if unknown:
            raise ConfigurationError(
                f"a fallbacks entry takes model, max_tokens, thinking, output_config and speed, "
                f"not {unknown[0]!r}"
            )
        entries.append(item)
    if not entries or len(entries) > _MAX_FALLBACKS:
        raise ConfigurationError(
            f"fallbacks holds 1 to {_MAX_FALLBACKS} models, got {len(entries)}"
        )
    return entries


def _caller(block: Any) -> dict[str, JsonValue] | None:
    """A tool use's `caller` (programmatic tool calling), kept to go back unchanged."""
    caller = getattr(block, "caller", None)
    if caller is None:
        return None
    return {"caller": caller.model_dump(mode="json", exclude_unset=True)}


def _stop_details(details: Any) -> dict[str, Any] | None:
    """A response's `stop_details` (a refusal's category, explanation, credit token...)."""
    if details is None:
        return None
    return cast("dict[str, Any]", details.model_dump(mode="json", exclude_unset=True))


def _system_message(parts: Sequence[Part]) -> dict[str, Any]:
    """A turn's system notes as one mid-conversation system message: their text, then their
    tool changes by reference, with their `clear_at` (the notes of a turn share one)."""
    notes = cast("Sequence[SystemNote]", parts)
    content: list[dict[str, Any]] = []
    for note in notes:
        if note.text:
            content.append({"type": "text", "text": note.text})
        content += [
            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": name}}
            for name in note.add_tools
        ]
        content += [
            {"type": "tool_removal", "tool": {"type": "tool_reference", "name": name}}
            for name in note.remove_tools
        ]
    message: dict[str, Any] = {"role": "system", "content": content}
    if notes[0].clear_at is not None:
        message["clear_at"] = notes[0].clear_at
    return message


def _messages(prepared: Prepared) -> list[dict[str, Any]]:
    messages = [
        _system_message(parts)
        if role == "system"
        else {"role": role, "content": [_block(part) for part in parts]}
        for role, parts in prepared.turns
    ]
    cache = prepared.cache
    if cache is not None:
        marker = _marker(cache)
        for turn, part in cache.marks:
            cast("list[dict[str, Any]]", messages[turn]["content"])[part]["cache_control"] = marker
    return messages


_BLOCK_JSON = "anthropic-block-json"

_OMITTED = (anthropic.Omit, anthropic.NotGiven)


def _block_json(part: Part) -> tuple[dict[str, Any], str]:
    """A part's block and its JSON."""
    block = _block(part)
    return block, COMPACT.encode(block)


def _posts_json(client: anthropic.AsyncAnthropic) -> bool:
    """Whether `client` sends a body it is given as JSON text as it is: a client of the Claude
    API or of any endpoint speaking its format (a platform's client rewrites the parsed body
    for its own routing), without middleware, and whose own OpenTelemetry span would not be
    recorded or propagated (a span reads the parsed body)."""
    if anthropic_scope(client) in _PLATFORM_SCOPES or getattr(client, "_middleware", ()):
        return False
    if getattr(client, "_tracer", None) is None:
        return True
    from opentelemetry import trace  # the SDK's own dependency, for its tracing

    if trace.get_current_span().get_span_context().is_valid:
        return False  # the SDK's span would carry this trace on: let it
    options: Mapping[str, Any] = getattr(client, "_open_telemetry", {})
    provider = options.get("tracer_provider") or trace.get_tracer_provider()
    return isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


_PLATFORM_SCOPES = frozenset(_PLATFORMS.values())


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
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": part.id,
            "name": part.name,
            "input": arguments_object(part),
        }
        caller = (part.provider_details or {}).get("caller")
        if caller is not None:
            block["caller"] = caller
        return block
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
            return self.builder.tool_call(
                index, id=block.id, name=block.name, arguments=arguments, details=_caller(block)
            )
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
        """Fold a delta into a block kept whole: `input_json_delta` fragments make its `input`;
        a `compaction_delta` sets the block's `content` and `encrypted_content` to its own, as
        they are (`content: null` is a failed compaction, which goes back so); the text fields
        of any other delta are appended to the block's fields of that name."""
        data = self._opaque[index]
        kind = delta.get("type")
        if kind == "input_json_delta":
            self._json[index] = self._json.get(index, "") + str(delta.get("partial_json", ""))
            with contextlib.suppress(ValueError):  # not whole yet
                data["input"] = json.loads(self._json[index])
        elif kind == "compaction_delta":
            data.update((k, v) for k, v in delta.items() if k != "type")
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
            _stop_details(end.delta.stop_details) if end is not None else None,
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
