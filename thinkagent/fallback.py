"""`FallbackModel`: one request, tried on each of an ordered list of models until one answers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import cast

from .builtin_tools import BuiltinTool
from .errors import ConfigurationError, FallbackExhausted, HistoryError, ProviderError
from .messages import Message, SystemNote, ToolResult
from .providers.base import (
    MediaSupport,
    Model,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
    ToolDefinition,
    check_builtin_tools,
    model_profile,
)
from .stream import WarningEvent

__all__ = ["FallbackModel", "FallbackPolicy"]

FallbackPolicy = Callable[[Exception], bool]
"""Whether an error one model raised sends the request on to the next."""


def retryable(error: Exception) -> bool:
    """The default policy: a `ProviderError` that says the same request may succeed later
    (overloaded, rate limited, a 5xx, a dropped connection)."""
    return isinstance(error, ProviderError) and error.retryable


class FallbackModel:
    """A `Model` that sends each request to its first model, and on an error that `fallback_on`
    accepts (by default a retryable `ProviderError`) to the next, in order.

    Each model gets the whole conversation, and each adapter replays it under its own scope's
    policy: a proof another scope issued is never sent to it as if it were its own. The message
    a model returns records its own `scope` and `model`, so the evidence says which model
    answered each turn. Streamed, a request moves on only before the first delta has been
    yielded; once the answer has started to arrive, an error is the run's. When every model
    fails, `FallbackExhausted` holds each model's error.

    A fallback sticks: a request that continues a turn one of its models began answering (its
    tool loop) starts with that model, and goes on to the others (after it in order, then the
    ones before it) only when it fails. A turn another model began may be one the first model
    cannot continue (Claude with a thinking budget needs its own thinking at the start of the
    tool loop), so a model tried after the first that refuses the history (`HistoryError`,
    raised before anything is sent) is passed over like a failing one. A new user turn starts
    with the first model again: its replay rules take a history whose earlier turns another
    model answered.

    `fallback_on` is a predicate on the error, or the exception types that move the request on
    (in addition to nothing else: give `ProviderError` to move on after any provider error).

    ```python
    model = FallbackModel(AnthropicModel("claude-sonnet-4-5"), BedrockModel("anthropic.claude-..."))
    ```
    """

    def __init__(
        self,
        *models: Model,
        fallback_on: FallbackPolicy | Sequence[type[Exception]] = retryable,
    ) -> None:
        if not models:
            raise ConfigurationError("FallbackModel needs at least one model")
        self.models: tuple[Model, ...] = models
        if callable(fallback_on):
            self._fallback_on: FallbackPolicy = fallback_on
        else:
            kinds = tuple(fallback_on)
            self._fallback_on = lambda error: isinstance(error, kinds)
        self.profile = _common_profile([model_profile(model) for model in models])

    @property
    def model_name(self) -> str:
        """The first model's name (each message records the model that actually answered)."""
        return self.models[0].model_name

    @property
    def scope(self) -> str:
        """The first model's scope (each message records the scope that actually answered)."""
        return self.models[0].scope

    def check_builtin_tools(self, tools: Sequence[BuiltinTool]) -> None:
        """Every model must take the built-in tools: a request may go to any of them."""
        for model in self.models:
            check_builtin_tools(model, tools)

    def __repr__(self) -> str:
        return f"FallbackModel({', '.join(repr(model) for model in self.models)})"

    def order(self, messages: Sequence[Message]) -> tuple[Model, ...]:
        """The models a request with `messages` tries, in order: from the model that answered
        the current turn so far (the messages since the last user prompt), else the first."""
        start = self._sticky(messages)
        return self.models[start:] + self.models[:start]

    def _sticky(self, messages: Sequence[Message]) -> int:
        for message in reversed(messages):
            if message.role == "user":
                if any(not isinstance(p, ToolResult | SystemNote) for p in message.parts):
                    return 0  # a prompt: the turn begins with the first model
                continue
            by_scope = [i for i, m in enumerate(self.models) if m.scope == message.scope]
            exact = [i for i in by_scope if self.models[i].model_name == message.model]
            return (exact or by_scope or [0])[0]
        return 0

    def system_note_for(
        self,
        messages: Sequence[Message],
        instructions: str | None,
        tools: Sequence[ToolDefinition],
    ) -> SystemNote | None:
        """The note the model this conversation would start with asks for (see `Agent`)."""
        ask = getattr(self.order(messages)[0], "system_note_for", None)
        if ask is None:
            return None
        note = cast("Callable[..., object]", ask)(messages, instructions, tools)
        return note if isinstance(note, SystemNote) else None

    async def request(self, request: ModelRequest) -> ModelResponse:
        errors: list[ProviderError] = []
        for k, model in enumerate(self.order(request.messages)):
            try:
                return await model.request(request)
            except Exception as exc:
                self._move_on(exc, errors, model, first=k == 0)
        raise self._exhausted(errors)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        errors: list[ProviderError] = []
        for k, model in enumerate(self.order(request.messages)):
            events = model.stream(request)
            held: list[ModelStreamEvent] = []  # warnings, until the answer starts to arrive
            try:
                async for event in events:
                    held.append(event)
                    if not isinstance(event, WarningEvent):
                        break
                else:
                    raise ProviderError(
                        "the stream ended without a response", scope=model.scope, retryable=True
                    )
            except Exception as exc:
                await _close(events)
                self._move_on(exc, errors, model, first=k == 0)
                continue
            try:
                for event in held:
                    yield event
                async for event in events:
                    yield event
            finally:
                await _close(events)
            return
        raise self._exhausted(errors)

    def _move_on(
        self, error: Exception, errors: list[ProviderError], model: Model, *, first: bool
    ) -> None:
        """Return when the request goes on to the next model; raise `error` otherwise. A
        history a model after the first cannot take moves the request on too (with errors
        before it, the request is exhausted; alone, it is the user's history error)."""
        if isinstance(error, HistoryError) and not first:
            wrapped = ProviderError(
                f"{model.model_name} cannot continue this history: {error}",
                scope=model.scope,
            )
            wrapped.__cause__ = error
            errors.append(wrapped)
            return
        if not self._fallback_on(error):
            raise error
        if not isinstance(error, ProviderError):
            wrapped = ProviderError(f"{type(error).__name__}: {error}", scope=model.scope)
            wrapped.__cause__ = error
            error = wrapped
        errors.append(error)

    @staticmethod
    def _exhausted(errors: list[ProviderError]) -> ProviderError:
        """The error of a request every model failed: a single model's own, else all of them."""
        if len(errors) == 1:
            return errors[0]
        exhausted = FallbackExhausted(errors)
        exhausted.__cause__ = errors[-1]
        return exhausted


async def _close(events: AsyncIterator[ModelStreamEvent]) -> None:
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()


def _common_profile(profiles: list[ModelProfile]) -> ModelProfile:
    """What every model can do: a request may go to any of them."""
    media = [profile.media for profile in profiles]
    # A pattern one model takes stays when every other model takes it too ("image/png" stays
    # beside "image/*"; "image/*" beside "image/png" does not).
    types = frozenset(
        pattern
        for support in media
        for pattern in support.types
        if all(other.accepts(pattern) for other in media)
    )
    limits = [m.max_bytes for m in media if m.max_bytes is not None]
    return ModelProfile(
        native_output=all(profile.native_output for profile in profiles),
        media=MediaSupport(
            types=types,
            urls=all(m.urls for m in media),
            max_bytes=min(limits) if limits else None,
            in_tool_results=all(m.in_tool_results for m in media),
        ),
    )
