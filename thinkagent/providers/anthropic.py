"""`AnthropicModel`: Claude's thinking through the official `anthropic` SDK (Messages API).

```python
from thinkagent import Agent
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking

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
from typing import Any, NoReturn, cast

import anthropic
import httpx2
from anthropic import types as wire
from pydantic import JsonValue

from ..errors import ConfigurationError, ProviderError
from ..history import ForeignReasoning
from ..messages import Message, Part, TextPart, ThinkingBlock, ToolCall, ToolResult, Usage
from ..stream import MessageAssembler, TextDelta, ThinkingDelta, ToolCallDelta
from ._claude import (
    ClaudeModel,
    ClaudeThinking,
    Effort,
    finish_reason,
    stop_details,
    token_usage,
)
from ._common import (
    arguments_object,
    connection_error,
    copy_settings,
    interrupted,
    request_options,
    retryable_status,
)
from .base import ModelRequest, ModelResponse, ModelSettings, ModelStreamEvent

__all__ = ["DEFAULT_MAX_TOKENS", "SCOPE", "AnthropicModel", "ClaudeThinking"]

SCOPE = "anthropic"
"""The provider scope of messages this model produces (their signatures are valid only here)."""

DEFAULT_MAX_TOKENS = 8192
"""`max_tokens` when neither the model nor the request settings give one."""

_RETRYABLE_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})


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
            thinking=thinking,
            effort=effort,
            max_tokens=max_tokens,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
        )
        self._scope = SCOPE
        self._client = client if client is not None else anthropic.AsyncAnthropic()
        self.extra_body: dict[str, Any] = dict(extra_body or {})
        self.extra_headers: dict[str, str] = dict(extra_headers or {})

    # --- requests ---------------------------------------------------------------------------

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for `client.messages.create` (without `stream`).

        Raises `ConfigurationError` for settings Claude would refuse (a forced tool choice
        while thinking, a thinking budget not below `max_tokens`), before anything is sent.
        """
        settings, max_tokens = self._request_settings(request)
        params: dict[str, Any] = {
            "model": self._model_name,
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
            self.extra_body,
            self.extra_headers,
            body_settings=("temperature", "top_p"),
        )
        return params

    def build_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The `messages` parameter for a history: this scope's thinking replayed exactly."""
        return [
            {"role": role, "content": [_block(part) for part in parts]}
            for role, parts in self._replay(messages, SCOPE)
        ]

    async def request(self, request: ModelRequest) -> ModelResponse:
        params = self.build_request(request)
        try:
            message = cast("wire.Message", await self._client.messages.create(**params))
        except anthropic.APIError as exc:
            raise provider_error(exc) from exc
        except (anthropic.CredentialsError, TypeError, ValueError) as exc:
            _raise_client_error(exc)
        return self.parse_response(message)

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
        usage = message.usage
        details = usage.output_tokens_details
        return ModelResponse(
            Message(
                role="assistant",
                parts=tuple(parts),
                scope=SCOPE,
                model=message.model or self._model_name,
                id=message.id,
                usage=token_usage(
                    usage.input_tokens,
                    usage.cache_read_input_tokens,
                    usage.cache_creation_input_tokens,
                    usage.output_tokens,
                    details.thinking_tokens if details is not None else None,
                ),
                finish_reason=finish_reason(message.stop_reason),
                provider_details=stop_details(message.stop_reason, message.stop_sequence),
            )
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Deltas as Claude streams them, then the complete `ModelResponse`.

        Raises `StreamInterrupted` (with the unsigned partial message) when the stream ends
        before `message_stop`, and `ProviderError` for an error event.
        """
        params = self.build_request(request)
        try:
            events = await self._client.messages.create(**params, stream=True)
        except anthropic.APIError as exc:
            raise provider_error(exc) from exc
        except (anthropic.CredentialsError, TypeError, ValueError) as exc:
            _raise_client_error(exc)
        assembler = MessageAssembler(json_arguments=True)
        add = assembler.add
        message_id: str | None = None
        model = self._model_name
        start_usage: wire.Usage | None = None
        end_usage: wire.MessageDeltaUsage | None = None
        stop_reason: str | None = None
        stop_sequence: str | None = None
        finished = False
        try:
            async with events:
                async for event in events:
                    if event.type == "content_block_delta":
                        index = event.index
                        delta = event.delta
                        if delta.type == "text_delta":
                            out: TextDelta | ThinkingDelta | ToolCallDelta = TextDelta(
                                index, delta.text
                            )
                        elif delta.type == "thinking_delta":
                            out = ThinkingDelta(index, delta.thinking)
                        elif delta.type == "input_json_delta":
                            if not delta.partial_json:
                                continue
                            out = ToolCallDelta(index, args_fragment=delta.partial_json)
                        elif delta.type == "signature_delta":
                            out = ThinkingDelta(index, signature=delta.signature)
                        else:
                            continue
                        add(out)
                        yield out
                    elif event.type == "content_block_start":
                        # A block opens: the assembler learns its position and kind; only a
                        # start that carries something (a tool call's id and name, a redacted
                        # payload, text) is passed on.
                        block = event.content_block
                        if block.type == "thinking":
                            out = ThinkingDelta(
                                event.index, block.thinking, signature=block.signature or None
                            )
                            if not block.thinking and not block.signature:
                                add(out)
                                continue
                        elif block.type == "text":
                            out = TextDelta(event.index, block.text)
                            if not block.text:
                                add(out)
                                continue
                        elif block.type == "tool_use":
                            out = ToolCallDelta(
                                event.index,
                                id=block.id,
                                name=block.name,
                                args_fragment=json.dumps(block.input) if block.input else "",
                            )
                        elif block.type == "redacted_thinking":
                            out = ThinkingDelta(event.index, redacted=block.data)
                        else:
                            continue
                        add(out)
                        yield out
                    elif event.type == "message_start":
                        message_id = event.message.id
                        model = event.message.model or model
                        start_usage = event.message.usage
                    elif event.type == "message_delta":
                        stop_reason = event.delta.stop_reason
                        stop_sequence = event.delta.stop_sequence
                        end_usage = event.usage
                    elif event.type == "message_stop":
                        finished = True
        except anthropic.APIStatusError as exc:  # an error event in the stream
            raise provider_error(exc) from exc
        except (httpx2.HTTPError, anthropic.APIConnectionError, json.JSONDecodeError) as exc:
            # a dropped connection, a truncated body, an event that is not JSON
            raise interrupted(
                f"the stream broke before message_stop: {exc}",
                assembler,
                scope=SCOPE,
                model=model,
            ) from exc
        if not finished:
            raise interrupted(
                "the stream ended before message_stop", assembler, scope=SCOPE, model=model
            )
        yield ModelResponse(
            assembler.message(
                scope=SCOPE,
                model=model,
                usage=_stream_usage(start_usage, end_usage),
                finish_reason=finish_reason(stop_reason),
                id=message_id,
                provider_details=stop_details(stop_reason, stop_sequence),
            )
        )


# --- translation helpers ---------------------------------------------------------------------


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


def _stream_usage(start: wire.Usage | None, end: wire.MessageDeltaUsage | None) -> Usage:
    """`message_start` has the input counts, `message_delta` the final (cumulative) ones."""

    def pick(name: str) -> int | None:
        value = getattr(end, name, None) if end is not None else None
        if value is None and start is not None:
            value = getattr(start, name, None)
        return cast("int | None", value)

    details = end.output_tokens_details if end is not None else None
    if details is None and start is not None:
        details = start.output_tokens_details
    return token_usage(
        pick("input_tokens"),
        pick("cache_read_input_tokens"),
        pick("cache_creation_input_tokens"),
        pick("output_tokens"),
        details.thinking_tokens if details is not None else None,
    )


def provider_error(exc: anthropic.APIError) -> ProviderError:
    """The `ProviderError` for an SDK exception: the API's own message, status and type."""
    if isinstance(exc, anthropic.APIStatusError):
        status: int | None = exc.status_code
        error_type = cast("str | None", exc.type)
        # `api_message` is the body's `error.message`
        message = exc.api_message or exc.message
        if status == 200:  # an error event after the stream started
            status = None
        retryable = error_type in _RETRYABLE_TYPES or retryable_status(status)
        return ProviderError(
            message, scope=SCOPE, status=status, retryable=retryable, error_type=error_type
        )
    if isinstance(exc, anthropic.APIConnectionError):
        timeout = isinstance(exc, anthropic.APITimeoutError)
        return connection_error(exc.message, scope=SCOPE, timeout=timeout)
    return ProviderError(exc.message, scope=SCOPE, error_type=type(exc).__name__)


def _raise_client_error(exc: Exception) -> NoReturn:
    """Raise the thinkagent error for what the SDK refused before sending, chained to `exc`;
    anything it does not recognise is re-raised as it is (never chained to itself)."""
    error = _client_error(exc)
    if error is None:
        raise exc
    raise error from exc


def _client_error(exc: Exception) -> ConfigurationError | None:
    """What the SDK refuses before sending: missing credentials, or a non-streamed request the
    SDK expects to outlast its default timeout (None for anything else)."""
    text = str(exc)
    if isinstance(exc, anthropic.CredentialsError) or (
        "Could not resolve authentication method" in text
    ):
        return ConfigurationError(
            "no Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or pass "
            f"client=anthropic.AsyncAnthropic(...) ({type(exc).__name__})"
        )
    if "Streaming is required" in text:
        return ConfigurationError(
            f"{text} (a large max_tokens on a non-streamed request: stream it with "
            "Agent.run_stream, or set a `timeout` in the model settings)"
        )
    return None
