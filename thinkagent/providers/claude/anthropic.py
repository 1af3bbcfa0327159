"""`AnthropicModel`: Claude's thinking through the official `anthropic` SDK (Messages API).

```python
from thinkagent import Agent
from thinkagent.providers.claude import AnthropicModel, ClaudeThinking

model = AnthropicModel("claude-opus-4-7", thinking=ClaudeThinking.adaptive(), effort="high")
result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
```

Responses become one assistant `Message` with the blocks in the order Claude returned them:
`thinking` -> `ThinkingBlock.signed(text, signature)`, `redacted_thinking` ->
`ThinkingBlock.redacted_payload(data)`, `text` -> `TextPart`, `tool_use` -> `ToolCall`. On
later turns the blocks of this scope (`"anthropic"`) go back byte for byte, each in its place;
reasoning without a valid proof is never sent as thinking. See `docs/providers/anthropic.md`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, cast

import anthropic
import httpx2
from anthropic import types as wire
from pydantic import JsonValue

from ...errors import ConfigurationError, ProviderError
from ...history import ForeignReasoning
from ...messages import (
    FinishReason,
    Message,
    Part,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)
from ...stream import ModelDelta, StreamBuilder
from .._common import (
    UNREADABLE,
    arguments_object,
    connection_error,
    copy_settings,
    interrupted,
    request_options,
    retryable_status,
    unreadable,
)
from ..base import ModelRequest, ModelResponse, ModelSettings, ModelStreamEvent
from ._rules import (
    ClaudeModel,
    ClaudeThinking,
    Effort,
    finish_reason,
    raise_mapped,
    stop_details,
    token_usage,
)

__all__ = ["DEFAULT_MAX_TOKENS", "SCOPE", "AnthropicModel"]

SCOPE = "anthropic"
"""The provider scope of messages this model produces (their signatures are valid only here)."""

DEFAULT_MAX_TOKENS = 8192
"""`max_tokens` when neither the model nor the request settings give one."""

_RETRYABLE_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})

_SDK_ERRORS = (anthropic.APIError, anthropic.CredentialsError, TypeError, ValueError)
"""What `messages.create` raises: the API's errors, and what the SDK refuses before sending."""


class AnthropicModel(ClaudeModel[anthropic.AsyncAnthropic]):
    """A Claude model behind the Anthropic Messages API, through `anthropic.AsyncAnthropic`.

    - `client`: your `AsyncAnthropic` (its retries, timeouts and base URL apply); built from
      the environment (`ANTHROPIC_API_KEY`...) when omitted.
    - `thinking`: a `ClaudeThinking`; `None` sends no `thinking` field (the model's default:
      the newest models think adaptively, older ones do not think).
    - `effort`: `output_config.effort` (`low`, `medium`, `high`, `xhigh`, `max`).
    - `max_tokens`: the default output limit (a request's `max_tokens` setting overrides it);
      it must be above a thinking budget.
    - `foreign_reasoning`: what happens to reasoning that cannot go back as Claude thinking
      (another provider's, or a block without a signature): `"drop"` (default) or `"text"`.
    - `settings`: default `ModelSettings`, under each request's own.
    - `extra_body`, `extra_headers`: passed through on every request (beta headers, fields the
      SDK does not name yet).

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
    ) -> None:
        super().__init__(
            model_name,
            client=client,
            default_client=anthropic.AsyncAnthropic,
            scope=SCOPE,
            thinking=thinking,
            effort=effort,
            max_tokens=max_tokens,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
        )
        self._extra_body = MappingProxyType(dict(extra_body or {}))
        self._extra_headers = MappingProxyType(dict(extra_headers or {}))

    @property
    def extra_body(self) -> Mapping[str, Any]:
        """Fields added to every request body."""
        return self._extra_body

    @property
    def extra_headers(self) -> Mapping[str, str]:
        """Headers added to every request."""
        return self._extra_headers

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for `client.messages.create` (without `stream`).

        Raises `ConfigurationError` for settings Claude would refuse (a forced tool choice
        while thinking, a thinking budget not below `max_tokens`), before anything is sent.
        """
        settings, max_tokens = self._request_settings(request)
        params: dict[str, Any] = {
            "model": self.model_name,
            "max_tokens": max_tokens,
            "messages": self.build_messages(request.messages),
        }
        if request.instructions:
            params["system"] = request.instructions
        if self.thinking is not None:
            params["thinking"] = self.thinking.to_param()
        if self.effort is not None:
            params["output_config"] = {"effort": self.effort}
        if request.tools:
            tools: list[dict[str, Any]] = []
            for tool in request.tools:
                spec: dict[str, Any] = {"name": tool.name, "input_schema": tool.parameters}
                if tool.description:
                    spec["description"] = tool.description
                tools.append(spec)
            params["tools"] = tools
            tool_choice = _tool_choice(
                settings.get("tool_choice"), settings.get("parallel_tool_calls")
            )
            if tool_choice is not None:
                params["tool_choice"] = tool_choice
        copy_settings(settings, params, stop_sequences="stop_sequences")
        # This SDK has no sampling parameters; the API still reads them from the body.
        request_options(
            params,
            settings,
            self._extra_body,
            self._extra_headers,
            body_settings=("temperature", "top_p"),
        )
        return params

    def build_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The `messages` parameter for a history: this scope's thinking replayed exactly."""
        return [
            {"role": role, "content": [_block(part) for part in parts]}
            for role, parts in self._replay(messages)
        ]

    async def request(self, request: ModelRequest) -> ModelResponse:
        params = self.build_request(request)
        try:
            message = cast("wire.Message", await self.client.messages.create(**params))
        except _SDK_ERRORS as exc:
            raise_mapped(self.map_error(exc), exc)
        try:
            return self.parse_response(message)
        except UNREADABLE as exc:
            raise unreadable(exc, scope=self.scope) from exc

    def parse_response(self, message: wire.Message) -> ModelResponse:
        """The shared form of an SDK `Message`: blocks in order, usage, finish reason."""
        parts: list[Part] = []
        for block in message.content:
            if block.type == "thinking":
                parts.append(ThinkingBlock.signed(block.thinking, block.signature))
            elif block.type == "redacted_thinking":
                parts.append(ThinkingBlock.redacted_payload(block.data))
            elif block.type == "text":
                parts.append(TextPart(text=block.text))
            elif block.type == "tool_use":
                parts.append(
                    ToolCall(
                        id=block.id,
                        name=block.name,
                        arguments=cast("dict[str, JsonValue]", dict(block.input)),
                    )
                )
        return ModelResponse(
            Message(
                role="assistant",
                parts=tuple(parts),
                scope=self.scope,
                model=message.model or self.model_name,
                id=message.id,
                usage=_usage(message.usage, None),
                finish_reason=self.map_finish_reason(message.stop_reason),
                provider_details=stop_details(message.stop_reason, message.stop_sequence),
            )
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Deltas as Claude streams them, then the complete `ModelResponse`. Raises
        `StreamInterrupted` (with the unsigned partial message) when the stream ends before
        `message_stop`, and `ProviderError` for an error event."""
        params = self.build_request(request)
        try:
            events = await self.client.messages.create(**params, stream=True)
        except _SDK_ERRORS as exc:
            raise_mapped(self.map_error(exc), exc)
        parts = StreamBuilder(json_arguments=True)
        start: wire.Message | None = None  # the id, the model and the input counts
        end: wire.RawMessageDeltaEvent | None = None  # the stop reason and the final counts
        finished = False
        broken: Exception | None = None
        try:
            async with events:
                async for event in events:
                    if event.type == "content_block_delta":
                        if (out := _fold_delta(parts, event)) is not None:
                            yield out
                    elif event.type == "content_block_start":
                        if (out := _fold_start(parts, event)) is not None:
                            yield out
                    elif event.type == "content_block_stop":
                        pass  # the block is complete as folded
                    elif event.type == "message_start":
                        start = event.message
                    elif event.type == "message_delta":
                        end = event
                    elif event.type == "message_stop":
                        finished = True
                    else:  # `ping` (the SDK drops it) and types added later: no part
                        pass
        except anthropic.APIStatusError as exc:  # an error event in the stream
            raise self.map_error(exc) from exc
        except (httpx2.HTTPError, anthropic.APIConnectionError, json.JSONDecodeError) as exc:
            broken = exc  # a dropped connection, a truncated body, an event that is not JSON
        model = start.model if start is not None and start.model else self.model_name
        if broken is not None or not finished:
            reason = (
                "the stream ended before message_stop"
                if broken is None
                else f"the stream broke before message_stop: {broken}"
            )
            raise interrupted(reason, parts, scope=self.scope, model=model) from broken
        yield ModelResponse(_streamed(parts, self.scope, model, start, end))

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


def _block(part: Part) -> dict[str, Any]:
    if isinstance(part, ThinkingBlock):
        if part.redacted is not None:
            return {"type": "redacted_thinking", "data": part.redacted}
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ToolCall):
        return {
            "type": "tool_use",
            "id": part.id,
            "name": part.name,
            "input": arguments_object(part),
        }
    assert isinstance(part, ToolResult)
    return {
        "type": "tool_result",
        "tool_use_id": part.call_id,
        "content": part.content_text(),
        "is_error": part.is_error,
    }


def _fold_delta(parts: StreamBuilder, event: wire.RawContentBlockDeltaEvent) -> ModelDelta | None:
    """Fold a `content_block_delta` into its block: the delta to yield, or None."""
    delta = event.delta
    if delta.type == "text_delta":
        return parts.text(event.index, delta.text)
    if delta.type == "thinking_delta":
        return parts.thinking(event.index, delta.thinking)
    if delta.type == "signature_delta":
        return parts.thinking(event.index, signature=delta.signature)
    if delta.type == "input_json_delta":
        if not parts.opened(event.index):
            return None  # a server tool's input: its block is left out (see `_fold_start`)
        return parts.tool_call(event.index, arguments=delta.partial_json)
    return None  # citations_delta: the shared schema has no citations


def _fold_start(parts: StreamBuilder, event: wire.RawContentBlockStartEvent) -> ModelDelta | None:
    """Fold a `content_block_start`: it opens its block, and carries a tool call's id and name,
    a redacted payload whole. Server-tool blocks are left out, as by `parse_response`."""
    block = event.content_block
    if block.type == "thinking":
        # The start's signature is a placeholder (""): the real one comes in a signature_delta.
        signature = None if block.signature == "" else block.signature
        return parts.thinking(event.index, block.thinking, signature=signature)
    if block.type == "text":
        return parts.text(event.index, block.text)
    if block.type == "tool_use":
        arguments = json.dumps(block.input) if block.input else ""
        return parts.tool_call(event.index, id=block.id, name=block.name, arguments=arguments)
    if block.type == "redacted_thinking":
        return parts.thinking(event.index, redacted=block.data)
    return None


def _streamed(
    parts: StreamBuilder,
    scope: str,
    model: str,
    start: wire.Message | None,
    end: wire.RawMessageDeltaEvent | None,
) -> Message:
    """The message a finished stream describes: its parts, and what `message_start` (the id,
    the input counts) and `message_delta` (the stop reason, the final counts) said of it."""
    stop_reason = end.delta.stop_reason if end is not None else None
    return parts.message(
        scope=scope,
        model=model,
        usage=_usage(start.usage if start is not None else None, end),
        finish_reason=AnthropicModel.map_finish_reason(stop_reason),
        id=start.id if start is not None else None,
        provider_details=stop_details(stop_reason, end.delta.stop_sequence if end else None),
    )


def _usage(start: wire.Usage | None, end: wire.RawMessageDeltaEvent | None) -> Usage:
    """A response's counts: a whole message's `usage`, or a stream's (`message_start` has the
    input counts, `message_delta` the final, cumulative, ones)."""
    final = end.usage if end is not None else None

    def pick(name: str) -> int | None:
        value = getattr(final, name, None) if final is not None else None
        if value is None and start is not None:
            value = getattr(start, name, None)
        return cast("int | None", value)

    details = final.output_tokens_details if final is not None else None
    if details is None and start is not None:
        details = start.output_tokens_details
    return token_usage(
        pick("input_tokens"),
        pick("cache_read_input_tokens"),
        pick("cache_creation_input_tokens"),
        pick("output_tokens"),
        details.thinking_tokens if details is not None else None,
    )
