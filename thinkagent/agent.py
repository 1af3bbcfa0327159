"""The agent loop: ask the model, run the tools it asks for, repeat until it answers.

The loop knows nothing about providers. Every message the model returns is kept verbatim in
the run's evidence (`RunResult.messages`), so its thinking and proofs can be persisted and
replayed. `run`, `run_stream` and `run_sync` all drive the same loop.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import TypeVar

from .errors import (
    ConfigurationError,
    HistoryError,
    MaxTurnsExceeded,
    RunCancelled,
    StreamInterrupted,
    ThinkAgentError,
    ToolRetriesExceeded,
    UsageLimitExceeded,
)
from .history import HistoryProcessor, validate_history
from .messages import Message, ToolCall, ToolResult, Usage, valid_unicode
from .providers.base import Model, ModelRequest, ModelResponse, ModelSettings
from .stream import ModelDelta, ToolResultEvent
from .tools import DEFAULT_MAX_RETRIES, Tool, ToolFunction, describe_failure

__all__ = ["Agent", "AgentEvent", "AgentStream", "RunResult", "UsageLimits"]

_T = TypeVar("_T")

AgentEvent = ModelDelta | ModelResponse | ToolResultEvent
"""What `Agent.run_stream` yields: the model's deltas, each complete `ModelResponse`, and each
tool result (in call order once the step's tools have all finished)."""


@dataclass(frozen=True, slots=True)
class UsageLimits:
    """Upper bounds for one run; going past one raises `UsageLimitExceeded` with the evidence."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    thinking_tokens: int | None = None
    total_tokens: int | None = None

    def check(self, usage: Usage) -> None:
        for name in ("input_tokens", "output_tokens", "thinking_tokens", "total_tokens"):
            limit: int | None = getattr(self, name)
            used: int = getattr(usage, name)
            if limit is not None and used > limit:
                raise UsageLimitExceeded(f"the run used {used} {name}, over its limit of {limit}")


@dataclass(frozen=True, slots=True)
class RunResult:
    """The outcome of a run.

    `messages` is the history given to the run followed by every message of this run, verbatim:
    the evidence to persist (`dump_messages`) and to continue from. `new_messages` is this run's
    part of it. `usage` sums the run's requests, thinking tokens included.
    """

    output: str
    messages: list[Message]
    new_messages: list[Message]
    usage: Usage


@dataclass(slots=True)
class _RunState:
    history: list[Message]
    new_messages: list[Message] = field(default_factory=list[Message])
    usage: Usage = field(default_factory=Usage)
    failures: dict[str, int] = field(default_factory=dict[str, int])
    result: RunResult | None = None

    @property
    def messages(self) -> list[Message]:
        return self.history + self.new_messages


class Agent:
    """Runs a model in a loop with tools, keeping every thinking block and proof it returns.

    `model` is any `Model` (an adapter such as `AnthropicModel`, or `ScriptedModel` in tests).
    `tools` are plain sync or async functions (or `Tool`s). `history_processors` shape the
    history sent on each request (never the evidence kept). `max_turns` bounds the model
    requests of one run.
    """

    def __init__(
        self,
        model: Model,
        *,
        tools: Iterable[ToolFunction | Tool] = (),
        instructions: str | None = None,
        max_turns: int = 25,
        history_processors: Sequence[HistoryProcessor] = (),
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
    ) -> None:
        if max_turns < 1:
            raise ConfigurationError("max_turns must be at least 1")
        if instructions is not None and not valid_unicode(instructions):
            raise ConfigurationError(
                "the instructions are not valid Unicode (a lone surrogate): they cannot be sent"
            )
        self.model = model
        self.instructions = instructions
        self.max_turns = max_turns
        self.history_processors = tuple(history_processors)
        self.usage_limits = usage_limits
        self.model_settings: ModelSettings = model_settings or {}
        self.tools: dict[str, Tool] = {}
        for item in tools:
            tool = item if isinstance(item, Tool) else Tool(item)
            if tool.name in self.tools:
                raise ConfigurationError(f"two tools are named {tool.name!r}")
            self.tools[tool.name] = tool

    async def run(self, prompt: str | None, *, history: Sequence[Message] = ()) -> RunResult:
        """Run to the model's final answer.

        With `prompt=None` the run continues `history` where it stopped: after tool results or
        an unanswered user turn (it asks the model), or after tool calls with no results yet
        (it runs them first).
        """
        state = _RunState(list(history))
        async with _closing(self._drive(prompt, state, streaming=False)) as events:
            async for _ in events:
                pass
        assert state.result is not None
        return state.result

    def run_stream(self, prompt: str | None, *, history: Sequence[Message] = ()) -> AgentStream:
        """Run while streaming: an async context manager and iterator of `AgentEvent`s.

        ```python
        async with agent.run_stream("question") as stream:
            async for event in stream:
                ...
        result = stream.result  # equal to what `run` returns for the same responses
        ```
        """
        state = _RunState(list(history))
        return AgentStream(self._drive(prompt, state, streaming=True), state)

    def run_sync(self, prompt: str | None, *, history: Sequence[Message] = ()) -> RunResult:
        """`run` for scripts: runs its own event loop (not callable from inside one)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(prompt, history=history))
        raise RuntimeError("run_sync cannot run inside an event loop; use `await agent.run(...)`")

    async def _drive(
        self, prompt: str | None, state: _RunState, *, streaming: bool
    ) -> AsyncIterator[AgentEvent]:
        try:
            pending = self._start(prompt, state)
            turns = 0
            while True:
                if pending:
                    for result in await self._run_tools(pending, state):
                        yield ToolResultEvent(result)
                    pending = []
                request = await self._request(state)
                if streaming:
                    response = None
                    async with _closing(self.model.stream(request)) as stream:
                        async for event in stream:
                            if isinstance(event, ModelResponse):
                                response = event
                            else:
                                yield event
                    if response is None:
                        raise StreamInterrupted(
                            "the stream ended without a final response",
                            scope=self.model.scope,
                        )
                else:
                    response = await self.model.request(request)
                turns += 1
                state.new_messages.append(response.message)
                state.usage = state.usage + response.usage + Usage(requests=1)
                if streaming:
                    yield response
                if self.usage_limits is not None:
                    self.usage_limits.check(state.usage)
                pending = response.message.tool_calls
                if not pending:
                    break
                if turns >= self.max_turns:
                    raise MaxTurnsExceeded(
                        f"the model still wanted tools after max_turns={self.max_turns} requests"
                    )
            state.result = RunResult(
                output=response.message.text,
                messages=state.messages,
                new_messages=list(state.new_messages),
                usage=state.usage,
            )
        except ThinkAgentError as exc:
            exc.with_evidence(state.messages, state.usage)
            raise
        except asyncio.CancelledError as exc:
            # Re-raise asyncio's own error, unchanged (asyncio.timeout on 3.11/3.12 checks its
            # exact type); the evidence rides along as its cause (ADR 3).
            evidence = RunCancelled(state.messages, state.usage)
            evidence.__cause__ = exc.__cause__
            exc.__cause__ = evidence
            raise

    def _start(self, prompt: str | None, state: _RunState) -> list[ToolCall]:
        """Validate the history and work out where the run begins; returns calls to run first."""
        history = state.history
        validate_history(history)
        last = history[-1] if history else None
        unanswered = last.tool_calls if last is not None and last.role == "assistant" else []
        if prompt is not None:
            if not prompt.strip():
                raise HistoryError("the prompt is empty", message_index=len(history))
            if not valid_unicode(prompt):
                raise HistoryError(
                    "the prompt is not valid Unicode (a lone surrogate): it cannot be sent",
                    message_index=len(history),
                )
            if unanswered:
                raise HistoryError(
                    "the history ends with tool calls that have no results; continue it with "
                    "run(None, history=...) to run them, or repair() it first",
                    message_index=len(history) - 1,
                )
            state.new_messages.append(Message.user(prompt))
            return []
        if last is None:
            raise HistoryError("nothing to run: no prompt and an empty history", message_index=0)
        if last.role == "assistant" and not unanswered:
            raise HistoryError(
                "the history ends with the model's answer; give a prompt to continue",
                message_index=len(history) - 1,
            )
        return unanswered

    async def _request(self, state: _RunState) -> ModelRequest:
        messages: list[Message] = state.messages
        for processor in self.history_processors:
            processed = processor(list(messages))
            if inspect.isawaitable(processed):
                processed = await processed
            messages = list(processed)
        if self.history_processors:
            validate_history(messages)
        return ModelRequest(
            messages=messages,
            tools=[tool.definition for tool in self.tools.values()],
            instructions=self.instructions,
            settings=self.model_settings,
        )

    async def _run_tools(self, calls: list[ToolCall], state: _RunState) -> list[ToolResult]:
        """Run a step's calls concurrently; results are kept in call order."""
        if len(calls) == 1:  # nothing to run concurrently: spare a task (a hot path)
            results = [await self._call_tool(calls[0])]
        else:
            tasks = [asyncio.ensure_future(self._call_tool(call)) for call in calls]
            try:
                results = await asyncio.gather(*tasks)
            except BaseException:  # cancelled, or worse: stop the other calls, leave no task
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
        state.new_messages.append(Message(role="user", parts=tuple(results)))
        # Retries count model turns, not calls: three bad parallel calls to one tool are one
        # failed turn, and the model gets its turn to correct them.
        last_error: dict[str, ToolResult] = {}
        for result in results:
            if result.is_error:
                last_error[result.name] = result
        for name in {result.name for result in results} - last_error.keys():
            state.failures.pop(name, None)
        for name, result in last_error.items():
            failures = state.failures[name] = state.failures.get(name, 0) + 1
            tool = self.tools.get(name)
            max_retries = tool.max_retries if tool is not None else DEFAULT_MAX_RETRIES
            if failures > max_retries:
                raise ToolRetriesExceeded(name, max_retries, result.content_text())
        return results

    async def _call_tool(self, call: ToolCall) -> ToolResult:
        def error(text: str) -> ToolResult:
            return ToolResult(call_id=call.id, name=call.name, content=text, is_error=True)

        tool = self.tools.get(call.name)
        if tool is None:
            available = ", ".join(sorted(self.tools)) or "none"
            return error(f"Unknown tool {call.name!r}. Available tools: {available}.")
        try:
            arguments = call.arguments_dict()
        except ValueError as exc:
            return error(f"Arguments for tool {call.name!r} are not a JSON object: {exc}")
        try:
            content = await tool.call(arguments)
        except Exception as exc:  # any failure goes back to the model as an error result
            return error(describe_failure(tool, exc))
        return ToolResult(call_id=call.id, name=call.name, content=content)


@asynccontextmanager
async def _closing(iterator: AsyncIterator[_T]) -> AsyncGenerator[AsyncIterator[_T], None]:
    """Close an async generator when the block exits, however it exits."""
    try:
        yield iterator
    finally:
        aclose: Callable[[], Awaitable[object]] | None = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()


class AgentStream:
    """A streamed run: iterate it for `AgentEvent`s, then read `result`.

    Use it as an async context manager so leaving early closes the model's stream.
    """

    def __init__(self, events: AsyncIterator[AgentEvent], state: _RunState) -> None:
        self._events = events
        self._state = state

    async def __aenter__(self) -> AgentStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __aiter__(self) -> AsyncIterator[AgentEvent]:
        return self._events  # iterate the run itself: no extra hop per event

    async def __anext__(self) -> AgentEvent:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """Stop the run (if still going) and release the model's stream."""
        async with _closing(self._events):
            pass

    @property
    def messages(self) -> list[Message]:
        """The evidence so far: the history plus this run's complete messages."""
        return self._state.messages

    @property
    def usage(self) -> Usage:
        return self._state.usage

    @property
    def result(self) -> RunResult:
        """The run's result; available once the stream has been iterated to its end."""
        if self._state.result is None:
            raise RuntimeError("the run has not finished: iterate the stream to its end first")
        return self._state.result
