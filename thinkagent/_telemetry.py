"""What a run tells the outside: the `thinkagent` logger and the replay decisions of a request.

Logging goes through the standard `logging` module, to the `thinkagent` logger, which has a
`NullHandler` and nothing else: importing thinkagent configures nothing, and an application
sees the lines once it configures logging itself. At DEBUG, one line per model request and
one per response (scope, model, part counts, proof sizes: never a proof's bytes, never a key);
at WARNING, every `WarningEvent` an adapter reports (a clamp, a drop, a repair) and the
reasoning a request leaves out because another scope issued it.

The OpenTelemetry side lives in `thinkagent.otel`; this module only keeps the switch it sets,
so the agent reads one global and imports nothing from OpenTelemetry when tracing is off.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .messages import Message, TextPart, ThinkingBlock, ToolCall

if TYPE_CHECKING:
    from .messages import ServerToolCall, ToolResult, Usage
    from .providers.base import Model, ModelRequest, ModelResponse, ModelStreamEvent
    from .stream import WarningEvent
    from .tools import Tool

__all__ = [
    "PROVIDER_DROPPED",
    "CapturedRequest",
    "Replay",
    "RunTrace",
    "RunTracer",
    "ToolTrace",
    "call_arguments",
    "captured_requests",
    "describe_request",
    "describe_response",
    "global_instrumentation",
    "log",
    "log_warning",
    "proof_chars",
    "replay_of",
    "set_global_instrumentation",
]

log = logging.getLogger("thinkagent")
log.addHandler(logging.NullHandler())  # a library's logger: silent until the app configures logging


@dataclass(frozen=True, slots=True)
class CapturedRequest:
    """One request an agent sent (`thinkagent.testing.capture_model_requests`): the model it
    went to and the `ModelRequest` as the agent built it."""

    model: Model
    request: ModelRequest


captured_requests: contextvars.ContextVar[list[CapturedRequest] | None] = contextvars.ContextVar(
    "thinkagent.captured_requests", default=None
)
"""Where the agent appends each request it sends, while a capture is on."""

PROVIDER_DROPPED = "thinking_dropped"
"""The `WarningEvent` code an adapter gives for thinking its provider drops from what it was
sent (Claude ignores the thinking of earlier turns on some models)."""


class ToolTrace(Protocol):
    def done(self, result: ToolResult, failure: BaseException | None) -> None:
        """The call's result, and the exception the tool raised (None when it returned)."""
        ...


class RunTrace(Protocol):
    """What the agent reports to an instrumentation during one run (only when one is on)."""

    async def request(self, model: Model, request: ModelRequest, replay: Replay) -> ModelResponse:
        """`model.request(request)`, observed."""
        ...

    def stream(
        self, model: Model, request: ModelRequest, replay: Replay
    ) -> AsyncIterator[ModelStreamEvent]:
        """`model.stream(request)`, observed."""
        ...

    def tool(self, call: ToolCall, tool: Tool | None) -> AbstractContextManager[ToolTrace]:
        """The execution of one call (`tool` is None for a tool the agent does not have)."""
        ...

    def end(self, usage: Usage, error: BaseException | None) -> None:
        """The run finished (`error` None), failed or was cancelled."""
        ...


class RunTracer(Protocol):
    """What traces runs (`thinkagent.otel.Instrumentation`): a `RunTrace` per run."""

    def start_run(
        self, agent: Any, model: Model, *, conversation_id: str | None = None
    ) -> RunTrace: ...


_global: RunTracer | None = None  # what `thinkagent.otel.instrument()` turned on


def global_instrumentation() -> RunTracer | None:
    """The instrumentation `thinkagent.otel.instrument()` turned on for every agent, or None."""
    return _global


def set_global_instrumentation(instrumentation: RunTracer | None) -> None:
    global _global
    _global = instrumentation


@dataclass(frozen=True, slots=True)
class Replay:
    """What a request does with the thinking of its history: blocks sent back natively to the
    scope that issued them, blocks of other scopes dropped or sent as plain text, and which
    scopes those came from."""

    sent: int = 0
    dropped_foreign: int = 0
    sent_as_text: int = 0
    foreign_scopes: tuple[str, ...] = ()


def replay_of(messages: Sequence[Message], scope: str, policy: str | None) -> Replay:
    """The replay decisions for `messages` sent to `scope` under its `foreign_reasoning`
    policy (None: a model that declares none, whose foreign reasoning is not counted).

    Computed from the request, by the rule every adapter follows (`history.for_scope`): an
    adapter's further rules (a Gemini signature from another model generation) are reported
    by the adapter itself, as `WarningEvent`s."""
    sent = dropped = as_text = 0
    scopes: list[str] = []
    for message in messages:
        if message.role != "assistant":
            continue
        own = message.scope == scope
        for part in message.parts:
            if type(part) is not ThinkingBlock:
                continue
            if own:
                sent += 1
            elif policy is not None:
                if policy == "text" and part.text:
                    as_text += 1
                else:
                    dropped += 1
                name = message.scope or "unknown"
                if name not in scopes:
                    scopes.append(name)
    return Replay(sent, dropped, as_text, tuple(scopes))


def proof_chars(messages: Sequence[Message]) -> int:
    """The characters of every proof in `messages` (signatures, redacted payloads): a size to
    log, never the proofs."""
    total = 0
    for message in messages:
        for part in message.parts:
            if isinstance(part, ThinkingBlock):
                total += len(part.signature or "") + len(part.redacted or "")
            elif isinstance(part, TextPart | ToolCall) and part.signature:
                total += len(part.signature)
    return total


def _parts(messages: Sequence[Message]) -> str:
    counts = Counter(part.kind for message in messages for part in message.parts)
    return ",".join(f"{kind}:{n}" for kind, n in sorted(counts.items())) or "none"


def describe_request(scope: str, model: str, request: ModelRequest, replay: Replay) -> str:
    """The DEBUG line for a request about to be sent."""
    return (
        f"request scope={scope} model={model} messages={len(request.messages)} "
        f"parts={_parts(request.messages)} tools={len(request.tools)} "
        f"thinking_sent={replay.sent} thinking_dropped_foreign={replay.dropped_foreign} "
        f"thinking_as_text={replay.sent_as_text} proof_chars={proof_chars(request.messages)}"
    )


def describe_response(response: ModelResponse) -> str:
    """The DEBUG line for a response that arrived."""
    message = response.message
    usage = response.usage
    return (
        f"response scope={message.scope} model={message.model} parts={_parts((message,))} "
        f"proof_chars={proof_chars((message,))} finish={message.finish_reason} "
        f"input_tokens={usage.input_tokens} output_tokens={usage.output_tokens} "
        f"thinking_tokens={usage.thinking_tokens} cache_read_tokens={usage.cache_read_tokens} "
        f"cache_write_tokens={usage.cache_write_tokens}"
    )


def call_arguments(call: ToolCall | ServerToolCall) -> Any:
    """A call's arguments as JSON data for an observer (a trace, a client): the object, or
    the model's text as it came when it is not JSON."""
    arguments: Any = call.arguments
    if isinstance(arguments, str):
        try:
            return json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            return arguments
    return arguments


def log_warning(warning: WarningEvent) -> None:
    """A `WarningEvent` as a WARNING line."""
    log.warning("%s (%s, scope=%s)", warning.message, warning.code, warning.scope)
