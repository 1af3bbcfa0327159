"""OpenTelemetry traces of agent runs, following the GenAI semantic conventions.

Install the extra (`pip install "thinkagent[otel]"`, which brings `opentelemetry-api` only: the
SDK and exporters are the application's choice) and turn it on once, for every agent:

```python
from thinkagent.otel import instrument

instrument()                    # the global tracer provider; or instrument(tracer_provider=...)
```

or for one agent: `Agent(model, instrument=True)` (or `instrument=Instrumentation(...)`).
Nothing is traced, and nothing of OpenTelemetry is imported, until one of them is used.

Each run is an `invoke_agent` span; under it, each model request is a `chat` span
(`generate_content` on Gemini and Vertex) and each tool call an `execute_tool` span, with the
conventions' attributes: `gen_ai.provider.name`, `gen_ai.request.model`,
`gen_ai.response.model`, `gen_ai.response.id`, `gen_ai.response.finish_reasons`, the token
usage (`gen_ai.usage.input_tokens`, `.output_tokens`, `.reasoning.output_tokens`,
`.cache_read.input_tokens`, `.cache_creation.input_tokens`), `gen_ai.tool.name`,
`gen_ai.tool.call.id`, and `error.type` with an error status when something failed. The
run span carries the run's totals. A request span also has `server.address` and
`server.port` (where its SDK client sends), `gen_ai.request.max_tokens` as the request goes
out (the run's setting, else the model's own default), `gen_ai.conversation.id` (a run's
`conversation_id=`, on the run span too), and, opted in with `tool_definitions=True`,
`gen_ai.tool.definitions`.

Metrics, per model request, as the conventions define them: `gen_ai.client.operation.duration`
(seconds, with `error.type` when the request failed) and `gen_ai.client.token.usage` (tokens,
one measurement per `gen_ai.token.type`, `input` and `output`), on the meter provider given
(None: OpenTelemetry's global one).

Each request span has a `thinkagent.replay` event saying what the request did with the
history's thinking: blocks sent back to the scope that issued them, blocks of other scopes
dropped or sent as text, blocks the provider drops (reported by the adapter as a
`thinking_dropped` warning); and a `thinkagent.warning` event for every `WarningEvent`.

Message content (instructions, messages, thinking text, tool arguments and results) is
recorded only when asked for: `capture_content=True`, or the conventions' switch
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` in the environment. Proofs
(signatures, redacted payloads, encrypted reasoning) are never recorded.

The vendor SDKs' own spans (the Anthropic SDK traces itself) and those of the tools nest under
thinkagent's request and tool spans.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator, Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ._extras import needs

with needs("otel", "thinkagent.otel"):
    from opentelemetry import context as otel_context
    from opentelemetry import metrics, trace
    from opentelemetry.metrics import Histogram, MeterProvider
    from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider

from . import _endpoint, _telemetry
from ._telemetry import PROVIDER_DROPPED, Replay, call_arguments
from ._version import __version__
from .errors import ProviderError
from .messages import (
    Document,
    Image,
    Message,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)

if TYPE_CHECKING:
    from .providers.base import (
        Model,
        ModelRequest,
        ModelResponse,
        ModelStreamEvent,
        ToolDefinition,
    )
    from .stream import WarningEvent
    from .tools import Tool

__all__ = ["CAPTURE_CONTENT_ENV", "Instrumentation", "instrument", "uninstrument"]

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The conventions' content-capture switch, read when `capture_content` is not given."""

_PROVIDERS = {
    "anthropic": "anthropic",
    "bedrock": "aws.bedrock",
    "gemini": "gcp.gemini",
    "vertex": "gcp.vertex_ai",
    "gemini-interactions": "gcp.gemini",
    "vertex-interactions": "gcp.vertex_ai",
    "openai": "openai",
    "openai-responses": "openai",
    "azure": "azure.ai.openai",
    "azure-responses": "azure.ai.openai",
    "bedrock-mantle": "aws.bedrock",
    "gemini-openai": "gcp.gemini",
}
_GENERATE_CONTENT = frozenset({"gemini", "vertex"})


def provider_name(scope: str) -> str:
    """`gen_ai.provider.name` for a scope: the conventions' well-known value where there is
    one (`aws.bedrock`, `gcp.gemini`, `azure.ai.openai`...), else the scope itself (a
    compatible endpoint's dialect, such as `deepseek`)."""
    return _PROVIDERS.get(scope.partition("@")[0], scope)


def operation_name(scope: str) -> str:
    """`gen_ai.operation.name` of a model request to `scope`."""
    return "generate_content" if scope in _GENERATE_CONTENT else "chat"


_TOKEN_BUCKETS = [4.0**n for n in range(14)]
"""The conventions' advised buckets for `gen_ai.client.token.usage`: 1, 4, 16, ... 67108864."""
_DURATION_BUCKETS = [0.01 * 2**n for n in range(14)]
"""The conventions' advised buckets for `gen_ai.client.operation.duration`: 0.01 ... 81.92 s."""


class Instrumentation:
    """How runs are traced and measured: the tracer and meter providers (None: OpenTelemetry's
    global ones, looked up when a span starts or a measurement is taken, so `instrument()` may
    come before the application sets them), whether content is recorded (None: the
    `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` environment variable decides; proofs
    are never recorded) and whether request spans carry `gen_ai.tool.definitions` (the
    tools' schemas: large, so off by default)."""

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        capture_content: bool | None = None,
        tool_definitions: bool = False,
    ) -> None:
        if capture_content is None:
            setting = os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower()
            capture_content = setting in ("true", "1", "span_only", "span_and_event")
        self.capture_content = capture_content
        self.tool_definitions = tool_definitions
        self.tracer: Tracer = trace.get_tracer(
            "thinkagent", __version__, tracer_provider=tracer_provider
        )
        meter = metrics.get_meter("thinkagent", __version__, meter_provider=meter_provider)
        self.token_usage: Histogram = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self.operation_duration: Histogram = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )

    def start_run(
        self, agent: Any, model: Model, *, conversation_id: str | None = None
    ) -> _RunTrace:
        return _RunTrace(self, agent, model, conversation_id)


def instrument(
    tracer_provider: TracerProvider | None = None,
    *,
    meter_provider: MeterProvider | None = None,
    capture_content: bool | None = None,
    tool_definitions: bool = False,
) -> Instrumentation:
    """Trace and measure every agent's runs from now on (an agent built with
    `instrument=False` excepted); returns the `Instrumentation` in use."""
    instrumentation = Instrumentation(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        capture_content=capture_content,
        tool_definitions=tool_definitions,
    )
    _telemetry.set_global_instrumentation(instrumentation)
    return instrumentation


def uninstrument() -> None:
    """Stop tracing the agents that follow the global switch."""
    _telemetry.set_global_instrumentation(None)


class _RunTrace:
    """The spans of one run."""

    def __init__(
        self,
        instrumentation: Instrumentation,
        agent: Any,
        model: Model,
        conversation_id: str | None = None,
    ) -> None:
        self._tracer = instrumentation.tracer
        self._content = instrumentation.capture_content
        self._instrumentation = instrumentation
        self._conversation = conversation_id
        self._tools: tuple[Sequence[ToolDefinition], str] | None = None
        name: str | None = getattr(agent, "name", None)
        scope = model.scope
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": provider_name(scope),
            "gen_ai.request.model": model.model_name,
        }
        if name:
            attributes["gen_ai.agent.name"] = name
        if conversation_id:
            attributes["gen_ai.conversation.id"] = conversation_id
        self.span = self._tracer.start_span(
            f"invoke_agent {name}" if name else "invoke_agent",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        self._context = trace.set_span_in_context(self.span)

    async def request(self, model: Model, request: ModelRequest, replay: Replay) -> ModelResponse:
        sent = self._request_span(model, request)
        token = otel_context.attach(trace.set_span_in_context(sent.span, self._context))
        try:
            response = await model.request(request)
        except BaseException as exc:
            self._failed_request(sent, exc)
            _replay_event(sent.span, replay, ())
            sent.span.end()
            raise
        finally:
            otel_context.detach(token)
        self._responded(sent, response, replay, response.warnings)
        return response

    def stream(
        self, model: Model, request: ModelRequest, replay: Replay
    ) -> AsyncIterator[ModelStreamEvent]:
        sent = self._request_span(model, request)
        return _TracedStream(self, sent, model.stream(request), replay)

    @contextmanager
    def tool(self, call: ToolCall, tool: Tool | None) -> Generator[_ToolTrace]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
        }
        if tool is not None and tool.description:
            attributes["gen_ai.tool.description"] = tool.description
        if self._content:
            attributes["gen_ai.tool.call.arguments"] = _arguments_json(call)
        span = self._tracer.start_span(
            f"execute_tool {call.name}",
            context=self._context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        token = otel_context.attach(trace.set_span_in_context(span, self._context))
        try:
            yield _ToolTrace(span, self._content)
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            otel_context.detach(token)
            span.end()

    def end(self, usage: Usage, error: BaseException | None) -> None:
        _set_usage(self.span, usage)
        if error is not None:
            _failed(self.span, error)
        self.span.end()

    def _request_span(self, model: Model, request: ModelRequest) -> _Request:
        scope = model.scope
        operation = operation_name(scope)
        measured: dict[str, Any] = {
            "gen_ai.operation.name": operation,
            "gen_ai.provider.name": provider_name(scope),
            "gen_ai.request.model": model.model_name,
        }
        where = next(_endpoint.endpoints(model), None)
        if where is not None:
            measured["server.address"] = where[0]
            if where[1] is not None:
                measured["server.port"] = where[1]
        attributes: dict[str, Any] = {
            **measured,
            "gen_ai.output.type": "json" if request.output is not None else "text",
        }
        if self._conversation:
            attributes["gen_ai.conversation.id"] = self._conversation
        settings = request.settings
        for key, name in _SETTINGS:
            if key in settings:
                attributes[name] = settings[key]  # type: ignore[literal-required]
        max_tokens = _max_tokens(model, request)
        if max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = max_tokens
        if self._instrumentation.tool_definitions and request.tools:
            attributes["gen_ai.tool.definitions"] = self._tool_definitions(request.tools)
        if self._content:
            if request.instructions:
                attributes["gen_ai.system_instructions"] = json.dumps(
                    [{"type": "text", "content": request.instructions}], ensure_ascii=False
                )
            attributes["gen_ai.input.messages"] = json.dumps(
                [_message_json(m) for m in request.messages], ensure_ascii=False
            )
        span = self._tracer.start_span(
            f"{operation} {model.model_name}",
            context=self._context,
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )
        return _Request(span, time.perf_counter(), measured)

    def _tool_definitions(self, tools: Sequence[ToolDefinition]) -> str:
        """The conventions' `gen_ai.tool.definitions` (the same tools on every request of a
        run: written once)."""
        if self._tools is None or self._tools[0] is not tools:
            definitions = [
                {
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                }
                for tool in tools
            ]
            self._tools = (tools, json.dumps(definitions, ensure_ascii=False))
        return self._tools[1]

    def _failed_request(self, sent: _Request, error: BaseException) -> None:
        kind = _failed(sent.span, error)
        self._instrumentation.operation_duration.record(
            time.perf_counter() - sent.start, {**sent.measured, "error.type": kind}
        )

    def _responded(
        self,
        sent: _Request,
        response: ModelResponse,
        replay: Replay,
        warnings: Sequence[WarningEvent],
    ) -> None:
        span = sent.span
        message = response.message
        attributes: dict[str, Any] = {}
        if message.scope:
            attributes["gen_ai.provider.name"] = provider_name(message.scope)
        if message.model:
            attributes["gen_ai.response.model"] = message.model
        if message.id:
            attributes["gen_ai.response.id"] = message.id
        if message.finish_reason:
            attributes["gen_ai.response.finish_reasons"] = [message.finish_reason]
        if self._content:
            output = _message_json(message)
            if message.finish_reason:
                output["finish_reason"] = message.finish_reason
            attributes["gen_ai.output.messages"] = json.dumps([output], ensure_ascii=False)
        span.set_attributes(attributes)
        usage = response.usage
        _set_usage(span, usage)
        _replay_event(span, replay, warnings)
        span.end()
        measured = dict(sent.measured)
        if message.model:
            measured["gen_ai.response.model"] = message.model
        instruments = self._instrumentation
        instruments.operation_duration.record(time.perf_counter() - sent.start, measured)
        instruments.token_usage.record(
            usage.input_tokens, {**measured, "gen_ai.token.type": "input"}
        )
        instruments.token_usage.record(
            usage.output_tokens, {**measured, "gen_ai.token.type": "output"}
        )


@dataclass(frozen=True, slots=True)
class _Request:
    """One model request being observed: its span, when it started (for the duration metric)
    and the attributes its measurements share."""

    span: Span
    start: float
    measured: dict[str, Any]


def _max_tokens(model: Model, request: ModelRequest) -> int | None:
    """The output limit the request goes out with: the run's setting, else the model's default
    settings, else the model's own default (Claude's `max_tokens`); None when the provider
    decides."""
    found = request.settings.get("max_tokens")
    if found is None:
        defaults = getattr(model, "settings", None)
        if isinstance(defaults, dict):
            found = cast("dict[str, Any]", defaults).get("max_tokens")
    if found is None:
        found = getattr(model, "max_tokens", None)
    return found if isinstance(found, int) and not isinstance(found, bool) else None


_SETTINGS = (
    ("temperature", "gen_ai.request.temperature"),
    ("top_p", "gen_ai.request.top_p"),
    ("stop_sequences", "gen_ai.request.stop_sequences"),
)


class _TracedStream:
    """A model's stream with its request span: the span is the current one while the model's
    code runs (so the SDK's spans nest under it), never while the consumer handles an event."""

    def __init__(
        self,
        run: _RunTrace,
        sent: _Request,
        events: AsyncIterator[ModelStreamEvent],
        replay: Replay,
    ) -> None:
        self._run = run
        self._sent = sent
        self._span = sent.span
        self._events = events
        self._replay = replay
        self._context = trace.set_span_in_context(sent.span, run._context)  # pyright: ignore[reportPrivateUsage]
        self._warnings: list[WarningEvent] = []
        self._ended = False

    def __aiter__(self) -> _TracedStream:
        return self

    async def __anext__(self) -> ModelStreamEvent:
        from .providers.base import ModelResponse
        from .stream import WarningEvent

        token = otel_context.attach(self._context)
        try:
            event = await self._events.__anext__()
        except StopAsyncIteration:
            self._end(None)
            raise
        except BaseException as exc:
            self._end(exc)
            raise
        finally:
            otel_context.detach(token)
        if isinstance(event, WarningEvent):
            self._warnings.append(event)
        elif isinstance(event, ModelResponse):
            warnings = self._warnings + [w for w in event.warnings if w not in self._warnings]
            self._ended = True
            self._run._responded(self._sent, event, self._replay, warnings)  # pyright: ignore[reportPrivateUsage]
        return event

    async def aclose(self) -> None:
        aclose = getattr(self._events, "aclose", None)
        try:
            if aclose is not None:
                await aclose()
        finally:
            self._end(None if self._ended else GeneratorExit())

    def _end(self, error: BaseException | None) -> None:
        if self._ended:
            return
        self._ended = True
        if error is not None:
            self._run._failed_request(self._sent, error)  # pyright: ignore[reportPrivateUsage]
        _replay_event(self._span, self._replay, self._warnings)
        self._span.end()


class _ToolTrace:
    def __init__(self, span: Span, content: bool) -> None:
        self._span = span
        self._content = content

    def done(self, result: ToolResult, failure: BaseException | None) -> None:
        if self._content and not result.is_error:
            self._span.set_attribute("gen_ai.tool.call.result", _json(result.content))
        if failure is not None:
            _failed(self._span, failure)
        elif result.is_error:  # an unknown tool: no exception, still a failed call
            self._span.set_attribute("error.type", "tool_error")
            self._span.set_status(Status(StatusCode.ERROR, "the call failed"))


def _failed(span: Span, error: BaseException) -> str:
    """Mark `span` failed with the conventions' `error.type` (returned): the provider's error
    code where it gave one, else the HTTP status, else the exception's name (`cancelled` for a
    run or stream that was cancelled or closed early)."""
    if isinstance(error, ProviderError):
        kind = error.error_type or (str(error.status) if error.status else type(error).__name__)
    elif isinstance(error, GeneratorExit) or type(error).__name__ == "CancelledError":
        kind = "cancelled"
    else:
        kind = type(error).__qualname__
    span.set_attribute("error.type", kind)
    span.set_status(Status(StatusCode.ERROR, kind))
    return kind


def _set_usage(span: Span, usage: Usage) -> None:
    attributes = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
    }
    if usage.thinking_tokens:
        attributes["gen_ai.usage.reasoning.output_tokens"] = usage.thinking_tokens
    if usage.cache_read_tokens:
        attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        attributes["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write_tokens
    span.set_attributes(attributes)


def _replay_event(span: Span, replay: Replay, warnings: Sequence[WarningEvent]) -> None:
    for warning in warnings:
        span.add_event(
            "thinkagent.warning",
            {
                "thinkagent.warning.code": warning.code,
                "thinkagent.warning.message": warning.message,
            },
        )
    dropped = sum(1 for warning in warnings if warning.code == PROVIDER_DROPPED)
    attributes: dict[str, Any] = {
        "thinkagent.thinking.sent": replay.sent,
        "thinkagent.thinking.dropped_foreign": replay.dropped_foreign,
        "thinkagent.thinking.sent_as_text": replay.sent_as_text,
        "thinkagent.thinking.dropped_by_provider": dropped,
    }
    if replay.foreign_scopes:
        attributes["thinkagent.thinking.foreign_scopes"] = list(replay.foreign_scopes)
    span.add_event("thinkagent.replay", attributes)


def _json(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _arguments_json(call: ToolCall) -> str:
    return call.arguments if isinstance(call.arguments, str) else _json(call.arguments)


def _message_json(message: Message) -> dict[str, Any]:
    """A message in the conventions' input/output message shape, without any proof."""
    parts: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "content": part.text})
        elif isinstance(part, ThinkingBlock):
            reasoning: dict[str, Any] = {"type": "reasoning", "content": part.text}
            if part.redacted is not None:
                reasoning["redacted"] = True
            parts.append(reasoning)
        elif isinstance(part, ToolCall):
            parts.append(
                {
                    "type": "tool_call",
                    "id": part.id,
                    "name": part.name,
                    "arguments": call_arguments(part),
                }
            )
        elif isinstance(part, ToolResult):
            parts.append(
                {"type": "tool_call_response", "id": part.call_id, "response": part.content}
            )
        elif isinstance(part, Image | Document):  # pyright: ignore[reportUnnecessaryIsInstance]
            if part.url is not None:
                parts.append({"type": "uri", "modality": part.kind, "uri": part.url})
            else:  # the bytes stay out: a size says enough
                parts.append(
                    {
                        "type": "blob",
                        "modality": part.kind,
                        "mime_type": part.media_type,
                        "size": len(part.data or b""),
                    }
                )
    role = message.role
    if role == "user" and message.parts and all(isinstance(p, ToolResult) for p in message.parts):
        role = "tool"
    return {"role": role, "parts": parts}
