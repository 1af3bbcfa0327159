"""The agent loop: ask the model, run the tools it asks for, repeat until it answers.

The loop knows nothing about providers. Every message the model returns is kept verbatim in
the run's evidence (`RunResult.messages`), so its thinking and proofs can be persisted and
replayed. `run`, `run_stream` and `run_sync` all drive the same loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import logging
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Literal, cast, overload

from pydantic import ValidationError
from typing_extensions import TypeVar

from . import _endpoint, _telemetry
from ._memo import PerPrefix
from ._telemetry import Replay, RunTrace, describe_request, describe_response, log, log_warning
from .builtin_tools import BuiltinTool, ToolSearch
from .context import DepsT, RunContext
from .errors import (
    ApprovalError,
    ConfigurationError,
    HistoryError,
    MaxTurnsExceeded,
    OutputValidationFailed,
    RunCancelled,
    StreamInterrupted,
    ThinkAgentError,
    ToolRetriesExceeded,
    UsageLimitExceeded,
)
from .history import HistoryProcessor, open_calls, validate_history
from .messages import (
    Document,
    Image,
    Message,
    ServerToolCall,
    SystemNote,
    TextPart,
    ToolCall,
    ToolResult,
    Usage,
    UserPrompt,
    usage_sum,
    valid_unicode,
)
from .output import OutputSchema, describe_errors, errors_of
from .providers._system_notes import current_prompt
from .providers.base import (
    MediaSupport,
    Model,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OutputMode,
    OutputSpec,
    ToolDefinition,
    check_builtin_tools,
    check_thinking,
    model_profile,
)
from .stream import (
    ModelDelta,
    PartEnd,
    PartialOutput,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolResultEvent,
    WarningEvent,
)
from .tools import (
    DEFAULT_MAX_RETRIES,
    ApprovalRequired,
    Tool,
    ToolFunction,
    describe_failure,
    split_media,
)

if TYPE_CHECKING:
    from .otel import Instrumentation

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentStream",
    "Instructions",
    "RunResult",
    "ToolApproved",
    "ToolDenied",
    "UsageLimits",
]

_T = TypeVar("_T")
OutputT = TypeVar("OutputT", default=str)
RunOutputT = TypeVar("RunOutputT")

AgentEvent = (
    ModelDelta | PartEnd | WarningEvent | ModelResponse | ToolResultEvent | PartialOutput[Any]
)
"""What `Agent.run_stream` yields: the model's deltas and part ends (and the warnings its
adapter gives),
each complete `ModelResponse`, each tool result (in call order once the step's tools have all
finished) and, with an `output_type`, the `PartialOutput` while the output's JSON streams."""

Instructions = str | Callable[[RunContext[DepsT]], str | Awaitable[str]]
"""The agent's instructions: text, or a plain (sync or async) function of the run's context
that returns the text, evaluated once at the start of each run."""

OutputModeSetting = Literal["auto", "native", "tool"]

_NO_DEPS: Any = None  # `deps` left out: None, whatever the agent's DepsT (users type it)


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()  # a run argument left out (None may be a value: deps, output_type)

_DELTAS = frozenset({ThinkingDelta, TextDelta, ToolCallDelta})

_APPROVED = "The user approved this call."
_FINAL_RESULT_ACCEPTED = "Final result processed."
_FINAL_RESULT_IGNORED = "A final result was already given in this turn; this call was ignored."


@dataclass(frozen=True, slots=True)
class UsageLimits:
    """Upper bounds for one run; going past one raises `UsageLimitExceeded` with the evidence.

    Checked before spending where that can be known: `requests` before each request,
    `tool_calls` before a step's calls run (the calls stay pending in the evidence), and
    `input_tokens` and `total_tokens` before a request that would certainly pass them: the
    conversation a run resends only grows, so the next request costs at least the input of the
    smallest request of the run so far (when no history processor reshapes what is sent).
    Every token limit is checked again after each response.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    thinking_tokens: int | None = None
    total_tokens: int | None = None
    requests: int | None = None
    tool_calls: int | None = None

    def check(self, usage: Usage) -> None:
        """Raise when `usage` is over a limit (after a response)."""
        for name in ("input_tokens", "output_tokens", "thinking_tokens", "total_tokens"):
            limit: int | None = getattr(self, name)
            used: int = getattr(usage, name)
            if limit is not None and used > limit:
                raise UsageLimitExceeded(f"the run used {used} {name}, over its limit of {limit}")

    def check_before_request(self, usage: Usage, *, next_input: int = 0) -> None:
        """Raise when the next request would pass a limit: it is one more request and costs at
        least `next_input` input tokens."""
        if self.requests is not None and usage.requests >= self.requests:
            raise UsageLimitExceeded(
                f"the run made {usage.requests} requests, its limit: no request was sent"
            )
        for name in ("input_tokens", "total_tokens"):
            limit: int | None = getattr(self, name)
            at_least: int = getattr(usage, name) + next_input
            if limit is not None and next_input and at_least > limit:
                raise UsageLimitExceeded(
                    f"the next request would bring {name} to at least {at_least}, over its "
                    f"limit of {limit}: it was not sent"
                )

    def check_tool_calls(self, made: int, asked: int) -> None:
        """Raise when running `asked` more calls after `made` would pass `tool_calls`."""
        if self.tool_calls is not None and made + asked > self.tool_calls:
            raise UsageLimitExceeded(
                f"the model asked for {asked} tool calls, which would bring the run to "
                f"{made + asked}, over its tool_calls limit of {self.tool_calls}: none was run"
            )


@dataclass(frozen=True, slots=True)
class ToolDenied:
    """A denied approval (`approvals={call_id: ToolDenied("why")}`); `False` denies with the
    default reason. The model gets the reason as the call's error result."""

    reason: str = "The user denied this tool call."


@dataclass(frozen=True, slots=True)
class ToolApproved:
    """An approval that edits the call (`approvals={call_id: ToolApproved(arguments={...})}`):
    the tool runs with `arguments` instead of the model's, validated as the model's would be.
    The model's call stays in the evidence as it made it (its proofs bind it); the result
    answers it. `arguments=None` approves the call as it is, like `True`."""

    arguments: Mapping[str, Any] | None = None


Approval = bool | ToolDenied | ToolApproved
"""A decision on a call awaiting approval: True (or `ToolApproved`, which may edit the
arguments) runs it, False or `ToolDenied` denies it."""


class _Pending:
    def __repr__(self) -> str:
        return "<awaiting approval>"


_PENDING: Any = _Pending()


class RunResult(Generic[OutputT]):
    """The outcome of a run.

    `output` is the final answer: the model's text, or the validated `output_type`.
    `messages` is the history given to the run followed by every message of this run, verbatim:
    the evidence to persist (`dump_messages`) and to continue from. `new_messages` is this run's
    part of it. `usage` sums the run's requests, thinking tokens included. `warnings` collects
    what the adapters adjusted to send the requests.

    A run that stopped at calls needing approval has them in `pending_approvals` (the last
    assistant message of `messages` holds them: tool calls, and built-in tool calls the
    provider asks you to approve, such as a remote MCP server's) and no output: continue it with
    `agent.run(None, history=result.messages, approvals={call.id: True, ...})`.
    `approval_reasons` holds the reason a call gave (`ApprovalRequired(reason)` from its
    tool). When a tool asked from inside its call, the step's other calls had already run:
    their results end `messages`, as a user message the continuation completes.
    """

    __slots__ = (
        "_output",
        "approval_reasons",
        "messages",
        "new_messages",
        "pending_approvals",
        "usage",
        "warnings",
    )

    def __init__(
        self,
        output: OutputT,
        messages: list[Message],
        new_messages: list[Message],
        usage: Usage,
        *,
        pending_approvals: Sequence[ToolCall | ServerToolCall] = (),
        warnings: Sequence[WarningEvent] = (),
        approval_reasons: Mapping[str, str] | None = None,
    ) -> None:
        self._output = output
        self.messages = messages
        self.new_messages = new_messages
        self.usage = usage
        self.pending_approvals: list[ToolCall | ServerToolCall] = list(pending_approvals)
        self.warnings: list[WarningEvent] = list(warnings)
        self.approval_reasons: dict[str, str] = dict(approval_reasons or {})

    @property
    def output(self) -> OutputT:
        """The final answer; `ApprovalError` while calls await approval (there is none yet)."""
        if self.pending_approvals:
            ids = ", ".join(repr(call.id) for call in self.pending_approvals)
            raise ApprovalError(f"the run has no output yet: calls {ids} await approval")
        return self._output

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunResult):
            return NotImplemented
        theirs = cast("RunResult[Any]", other)
        return all(getattr(self, name) == getattr(theirs, name) for name in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable lists inside: not hashable

    def __repr__(self) -> str:
        output = "<awaiting approval>" if self.pending_approvals else repr(self._output)
        return (
            f"RunResult(output={output}, messages=<{len(self.messages)} messages>, "
            f"usage={self.usage!r})"
        )


_NO_USAGE = Usage()  # frozen: every run starts from the same one


@dataclass(slots=True)
class _RunState:
    history: list[Message]
    model: Model
    output: OutputSchema[Any]
    output_mode: OutputMode | None
    settings: ModelSettings
    limits: UsageLimits | None
    instructions: Instructions[Any] | None
    deps: Any = None
    approvals: Mapping[str, Approval] = field(default_factory=dict[str, Approval])
    conversation_id: str | None = None
    new_messages: list[Message] = field(default_factory=list[Message])
    usage: Usage = _NO_USAGE
    failures: dict[str, int] = field(default_factory=dict[str, int])
    output_failures: int = 0
    tool_calls: int = 0
    input_floor: int = 0  # the smallest input of this run's requests: the next costs as much
    media_checked: int = 0  # messages already checked against the model's media support
    media_unchecked: bool = True  # some message after `media_checked` may hold media
    media_moves: bool = False  # some tool result holds media the model takes only in user parts
    moved: dict[int, Message] = field(default_factory=dict[int, Message])  # id(kept) -> sent
    warnings: list[WarningEvent] = field(default_factory=list[WarningEvent])
    unannounced: list[WarningEvent] = field(default_factory=list[WarningEvent])  # the agent's own
    done: list[ToolResult] = field(default_factory=list[ToolResult])  # a paused step's results
    asked: dict[str, str] = field(default_factory=dict[str, str])  # calls that asked approval
    approved: frozenset[str] = frozenset()  # the calls approved for this run
    result: RunResult[Any] | None = None
    trace: RunTrace | None = None  # the run's instrumentation, when one is on
    foreign_warned: int = 0  # foreign thinking blocks this run already logged as dropped

    @property
    def messages(self) -> list[Message]:
        return self.history + self.new_messages


@dataclass(frozen=True, slots=True)
class _Plan:
    """What every request of one run shares (the same bytes on every request)."""

    tools: tuple[ToolDefinition, ...]
    instructions: str | None
    output: OutputSpec | None
    profile: ModelProfile
    builtin_tools: tuple[BuiltinTool, ...] = ()


@dataclass(frozen=True, slots=True)
class _Overrides:
    """What `Agent.override` replaces (None or `_UNSET`: not replaced)."""

    model: Model | None
    deps: Any
    model_settings: ModelSettings | None
    usage_limits: UsageLimits | None
    instructions: Instructions[Any] | None

    def under(self, inner: _Overrides) -> _Overrides:
        """`inner` (a nested block) over these."""
        return _Overrides(
            model=inner.model or self.model,
            deps=self.deps if inner.deps is _UNSET else inner.deps,
            model_settings=inner.model_settings or self.model_settings,
            usage_limits=inner.usage_limits or self.usage_limits,
            instructions=inner.instructions or self.instructions,
        )


def _checked_instructions(instructions: Instructions[Any] | None) -> Instructions[Any] | None:
    if isinstance(instructions, str) and not valid_unicode(instructions):
        raise ConfigurationError(
            "the instructions are not valid Unicode (a lone surrogate): they cannot be sent"
        )
    if not (instructions is None or isinstance(instructions, str) or callable(instructions)):
        raise ConfigurationError("instructions must be text or a function of the context")
    return instructions


def _output_mode(
    schema: OutputSchema[Any], setting: OutputModeSetting, model: Model
) -> OutputMode | None:
    """How a run on `model` asks for `schema`'s output: from the model's profile, per run (a
    model swapped in later has its own)."""
    if schema.text:
        return None
    native = model_profile(model).native_output
    if setting == "native" and not native:
        raise ConfigurationError(
            f"{type(model).__name__} does not declare native structured output "
            "(ModelProfile.native_output): use output_mode='tool' or 'auto'"
        )
    if setting == "auto":
        return "native" if native else "tool"
    return setting


class Agent(Generic[DepsT, OutputT]):
    """Runs a model in a loop with tools, keeping every thinking block and proof it returns.

    `model` is any `Model` (an adapter such as `AnthropicModel`, or `ScriptedModel` in tests).
    `tools` are plain sync or async functions (or `Tool`s); a tool whose first parameter is
    `RunContext[D]` receives the run's context, with the `deps` given to `run`. The provider's
    own tools go in the same list as their configs (`WebSearch()`, `CodeExecution()`,
    `MCPServer(...)`: see `thinkagent.builtin_tools`); one the model cannot declare is a
    `ConfigurationError` here.
    `instructions` are text or a function of the run's context. `history_processors` shape the
    history sent on each request (never the evidence kept). `max_turns` bounds the model
    requests of one run.

    `output_type` makes the run's output a validated value of that type (a pydantic model, a
    dataclass, a TypedDict, a primitive or a union; `str`, the default, is the model's text).
    With `output_mode="auto"` it is asked for natively (the provider's JSON-schema response
    format) when the model's profile says it can, else through an output tool the model is told
    to call; `"native"` or `"tool"` choose. Invalid output goes back to the model with the
    validation errors, at most `output_retries` times.

    `name` names the agent in traces. `early_tool_start=True` lets a streamed run start each
    of its tools as soon as the model has finished that call's arguments (a tool's own
    `early_start` overrides it; see `Tool`). `instrument` traces the runs with OpenTelemetry
    (`thinkagent[otel]`): True, or a `thinkagent.otel.Instrumentation` with its options; None,
    the default, follows `thinkagent.otel.instrument()`, False never traces.

    ```python
    agent = Agent(model, output_type=Weather, deps_type=Client, tools=[lookup])
    result = await agent.run("Weather in Paris?", deps=client)
    result.output  # a Weather
    ```
    """

    @overload
    def __init__(
        self,
        model: Model,
        *,
        output_type: type[OutputT] = ...,
        deps_type: type[DepsT] = ...,
        tools: Iterable[ToolFunction | Tool | BuiltinTool] = (),
        instructions: Instructions[DepsT] | None = None,
        max_turns: int = 25,
        history_processors: Sequence[HistoryProcessor] = (),
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        output_mode: OutputModeSetting = "auto",
        output_retries: int = DEFAULT_MAX_RETRIES,
        name: str | None = None,
        early_tool_start: bool = False,
        instrument: bool | Instrumentation | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self: Agent[Any, Any],
        model: Model,
        *,
        output_type: object,
        deps_type: object = ...,
        tools: Iterable[ToolFunction | Tool | BuiltinTool] = (),
        instructions: Instructions[Any] | None = None,
        max_turns: int = 25,
        history_processors: Sequence[HistoryProcessor] = (),
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        output_mode: OutputModeSetting = "auto",
        output_retries: int = DEFAULT_MAX_RETRIES,
        name: str | None = None,
        early_tool_start: bool = False,
        instrument: bool | Instrumentation | None = None,
    ) -> None: ...

    def __init__(
        self,
        model: Model,
        *,
        output_type: object = str,
        deps_type: object = type(None),
        tools: Iterable[ToolFunction | Tool | BuiltinTool] = (),
        instructions: Instructions[Any] | None = None,
        max_turns: int = 25,
        history_processors: Sequence[HistoryProcessor] = (),
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        output_mode: OutputModeSetting = "auto",
        output_retries: int = DEFAULT_MAX_RETRIES,
        name: str | None = None,
        early_tool_start: bool = False,
        instrument: bool | Instrumentation | None = None,
    ) -> None:
        if max_turns < 1:
            raise ConfigurationError("max_turns must be at least 1")
        if output_retries < 0:
            raise ConfigurationError("output_retries cannot be negative")
        self.model = model
        self.instructions = _checked_instructions(instructions)
        self.max_turns = max_turns
        self.history_processors = tuple(history_processors)
        self.usage_limits = usage_limits
        self.model_settings: ModelSettings = model_settings or {}
        if "thinking" in self.model_settings:
            check_thinking(self.model_settings["thinking"])
        self.deps_type = deps_type
        self.output_type = output_type
        self.output_retries = output_retries
        self.name = name
        self.early_tool_start = early_tool_start
        self._follows_global = instrument is None
        self._instrumentation: _telemetry.RunTracer | None = None
        if instrument is True:
            from .otel import Instrumentation  # the otel extra, imported only when asked for

            self._instrumentation = Instrumentation()
        elif instrument:
            self._instrumentation = instrument
        if output_mode not in ("auto", "native", "tool"):
            raise ConfigurationError(
                f"output_mode must be 'auto', 'native' or 'tool', not {output_mode!r}"
            )
        self._output_mode: OutputModeSetting = output_mode
        self._output: OutputSchema[OutputT] = OutputSchema(output_type)
        self._schemas: dict[object, OutputSchema[Any]] = {}
        self._overrides: contextvars.ContextVar[_Overrides | None] = contextvars.ContextVar(
            f"thinkagent.agent.overrides.{id(self)}", default=None
        )
        self.tools: dict[str, Tool] = {}
        builtin: list[BuiltinTool] = []
        for item in tools:
            if isinstance(item, BuiltinTool):
                builtin.append(item)
                continue
            builtin_class = _builtin_class(item)
            if builtin_class is not None:
                raise ConfigurationError(
                    f"give an instance of {builtin_class} ({builtin_class}()), not the class"
                )
            tool = item if isinstance(item, Tool) else Tool(item)
            if tool.name in self.tools:
                raise ConfigurationError(f"two tools are named {tool.name!r}")
            self.tools[tool.name] = tool
        self.builtin_tools: tuple[BuiltinTool, ...] = tuple(builtin)
        """The provider's own tools the model may use (`WebSearch()`...)."""
        self._check_builtin_tools()
        self._check_output_tool(self._output, self.output_mode)  # the mode for `model`
        self._early_tools = frozenset(
            name
            for name, tool in self.tools.items()
            if tool.requires_approval is False
            and (tool.early_start if tool.early_start is not None else early_tool_start)
        )

    def _check_builtin_tools(self) -> None:
        """Refuse, before any request, a built-in tool the model cannot declare, and a
        `ToolSearch` that defers a tool the agent does not have."""
        check_builtin_tools(self.model, self.builtin_tools)
        for tool in self.builtin_tools:
            if isinstance(tool, ToolSearch):
                for name in tool.deferred:
                    if name not in self.tools:
                        raise ConfigurationError(
                            f"ToolSearch(deferred=...) names {name!r}, which is not one of the "
                            "agent's tools"
                        )

    @property
    def output_mode(self) -> OutputMode | None:
        """How a run on the agent's `model` asks for its structured output (None: text). A run
        on another model (`run(..., model=...)`, `agent.model = ...`) resolves its own."""
        return _output_mode(self._output, self._output_mode, self.model)

    def _check_output_tool(self, schema: OutputSchema[Any], mode: OutputMode | None) -> None:
        if mode == "tool" and schema.tool_name in self.tools:
            raise ConfigurationError(
                f"a tool is named {schema.tool_name!r}, the name of the output tool: rename it"
            )

    @contextlib.contextmanager
    def override(
        self,
        *,
        model: Model | None = None,
        deps: Any = _UNSET,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        instructions: Instructions[Any] | None = None,
    ) -> Generator[None]:
        """Within the block, every run of this agent uses what is given here instead of its own
        and instead of what the run is given (for tests: the code under test keeps calling
        `agent.run(...)`, the test decides the model).

        Scoped to the current context (a `contextvars` variable): concurrent tasks that did not
        enter the block, other threads and other tests are not affected; tasks started inside
        it inherit it. Blocks nest; the innermost wins for what it gives.

        ```python
        with agent.override(model=TestModel()):
            result = await handler("What's the weather?")  # calls agent.run inside
        ```
        """
        outer = self._overrides.get()
        given = _Overrides(
            model=model,
            deps=deps,
            model_settings=model_settings,
            usage_limits=usage_limits,
            instructions=_checked_instructions(instructions),
        )
        token = self._overrides.set(given if outer is None else outer.under(given))
        try:
            yield
        finally:
            self._overrides.reset(token)

    def _state(
        self,
        history: Sequence[Message],
        deps: Any,
        approvals: Mapping[str, Approval] | None,
        model: Model | None,
        model_settings: ModelSettings | None,
        usage_limits: UsageLimits | None,
        instructions: Instructions[Any] | None,
        output_type: Any,
        conversation_id: str | None,
    ) -> _RunState:
        """The run's state, with what it uses resolved: an override, else the run's argument,
        else the agent's own."""
        overrides = self._overrides.get()
        if overrides is not None:
            model = overrides.model or model
            deps = deps if overrides.deps is _UNSET else overrides.deps
            model_settings = overrides.model_settings or model_settings
            usage_limits = overrides.usage_limits or usage_limits
            instructions = overrides.instructions or instructions
        settings = self.model_settings
        if model_settings:
            if "thinking" in model_settings:
                check_thinking(model_settings["thinking"])
            settings = cast("ModelSettings", {**settings, **model_settings})
        model = model or self.model
        if output_type is _UNSET:
            schema: OutputSchema[Any] = self._output
            mode = (
                self.output_mode
                if model is self.model
                else _output_mode(schema, self._output_mode, model)
            )
        else:
            schema = self._schema_for(output_type)
            mode = _output_mode(schema, self._output_mode, model)
            self._check_output_tool(schema, mode)
        return _RunState(
            list(history),
            model,
            schema,
            mode,
            settings,
            usage_limits or self.usage_limits,
            self.instructions if instructions is None else _checked_instructions(instructions),
            deps,
            approvals or {},
            conversation_id,
        )

    def _schema_for(self, output_type: object) -> OutputSchema[Any]:
        """The schema of a run's `output_type` (built once per type)."""
        if output_type is self.output_type:
            return self._output
        try:
            found = self._schemas.get(output_type)
        except TypeError:  # an unhashable type form: built for this run
            return OutputSchema(output_type)
        if found is None:
            found = self._schemas[output_type] = OutputSchema(output_type)
        return found

    @overload
    async def run(
        self,
        prompt: UserPrompt | None = None,
        *,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        model: Model | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        instructions: Instructions[DepsT] | None = None,
        output_type: None = None,
        conversation_id: str | None = None,
    ) -> RunResult[OutputT]: ...

    @overload
    async def run(
        self,
        prompt: UserPrompt | None = None,
        *,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        model: Model | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        instructions: Instructions[DepsT] | None = None,
        output_type: type[RunOutputT],
        conversation_id: str | None = None,
    ) -> RunResult[RunOutputT]: ...

    @overload
    async def run(
        self,
        prompt: UserPrompt | None = None,
        *,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        model: Model | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        instructions: Instructions[DepsT] | None = None,
        output_type: object,
        conversation_id: str | None = None,
    ) -> RunResult[Any]: ...

    async def run(
        self,
        prompt: UserPrompt | None = None,
        *,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        model: Model | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        instructions: Instructions[DepsT] | None = None,
        output_type: object = None,
        conversation_id: str | None = None,
    ) -> RunResult[Any]:
        """Run to the model's final answer.

        `prompt` is text or a sequence of text, `Image`s and `Document`s. With `prompt=None`
        the run continues `history` where it stopped: after tool results or an unanswered user
        turn (it asks the model), or after tool calls with no results yet (it runs them first;
        `approvals` decide the ones awaiting approval). With no prompt and no history, a run
        with instructions starts from the instructions alone.

        For this run only: `model` answers instead of the agent's (its own output mode is
        resolved from its profile), `model_settings` go over the agent's, `usage_limits` and
        `instructions` replace the agent's, `output_type` replaces the agent's (the result is
        typed by it), and `conversation_id` names the conversation in traces
        (`gen_ai.conversation.id`). `Agent.override` takes precedence over all of them.
        """
        state = self._state(
            history,
            deps,
            approvals,
            model,
            model_settings,
            usage_limits,
            instructions,
            _UNSET if output_type is None else output_type,
            conversation_id,
        )
        async with _closing(self._drive(prompt, state, streaming=False)) as events:
            async for _ in events:
                pass
        assert state.result is not None
        return state.result

    @overload
    def run_stream(
        self,
        prompt: UserPrompt | None = None,
        *,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        model: Model | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        instructions: Instructions[DepsT] | None = None,
        output_type: None = None,
        conversation_id: str | None = None,
    ) -> AgentStream[OutputT]: ...

    @overload
    def run_stream(
        self,
        prompt: UserPrompt | None = None,
        *,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        model: Model | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        instructions: Instructions[DepsT] | None = None,
        output_type: type[RunOutputT],
        conversation_id: str | None = None,
    ) -> AgentStream[RunOutputT]: ...

    @overload
    def run_stream(
        self,
        prompt: UserPrompt | None = None,
        *,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        model: Model | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        instructions: Instructions[DepsT] | None = None,
        output_type: object,
        conversation_id: str | None = None,
    ) -> AgentStream[Any]: ...

    def run_stream(
        self,
        prompt: UserPrompt | None = None,
        *,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        model: Model | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        instructions: Instructions[DepsT] | None = None,
        output_type: object = None,
        conversation_id: str | None = None,
    ) -> AgentStream[Any]:
        """Run while streaming: an async context manager and iterator of `AgentEvent`s (the
        arguments of `run`).

        ```python
        async with agent.run_stream("question") as stream:
            async for event in stream:
                ...
        result = stream.result  # equal to what `run` returns for the same responses
        ```
        """
        state = self._state(
            history,
            deps,
            approvals,
            model,
            model_settings,
            usage_limits,
            instructions,
            _UNSET if output_type is None else output_type,
            conversation_id,
        )
        return AgentStream(self._drive(prompt, state, streaming=True), state)

    @overload
    def run_sync(
        self,
        prompt: UserPrompt | None = None,
        *,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        model: Model | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        instructions: Instructions[DepsT] | None = None,
        output_type: None = None,
        conversation_id: str | None = None,
    ) -> RunResult[OutputT]: ...

    @overload
    def run_sync(
        self,
        prompt: UserPrompt | None = None,
        *,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        model: Model | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        instructions: Instructions[DepsT] | None = None,
        output_type: type[RunOutputT],
        conversation_id: str | None = None,
    ) -> RunResult[RunOutputT]: ...

    @overload
    def run_sync(
        self,
        prompt: UserPrompt | None = None,
        *,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        model: Model | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        instructions: Instructions[DepsT] | None = None,
        output_type: object,
        conversation_id: str | None = None,
    ) -> RunResult[Any]: ...

    def run_sync(
        self,
        prompt: UserPrompt | None = None,
        *,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        model: Model | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        instructions: Instructions[DepsT] | None = None,
        output_type: object = None,
        conversation_id: str | None = None,
    ) -> RunResult[Any]:
        """`run` for scripts: runs its own event loop (not callable from inside one)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(
                self.run(
                    prompt,
                    history=history,
                    deps=deps,
                    approvals=approvals,
                    model=model,
                    model_settings=model_settings,
                    usage_limits=usage_limits,
                    instructions=instructions,
                    output_type=output_type,
                    conversation_id=conversation_id,
                )
            )
        raise RuntimeError("run_sync cannot run inside an event loop; use `await agent.run(...)`")

    async def _drive(
        self, prompt: UserPrompt | None, state: _RunState, *, streaming: bool
    ) -> AsyncIterator[AgentEvent]:
        instrumentation = (
            _telemetry.global_instrumentation() if self._follows_global else self._instrumentation
        )
        model = state.model
        trace = state.trace = (
            instrumentation.start_run(self, model, conversation_id=state.conversation_id)
            if instrumentation is not None
            else None
        )
        early: dict[str, asyncio.Future[ToolResult]] = {}  # calls started while streaming
        failure: BaseException | None = None
        debug = log.isEnabledFor(logging.DEBUG)  # read once a run: it is on every turn's path
        limits = state.limits
        try:
            if _endpoint.blocked:
                _endpoint.check(model)
            pending = self._start(prompt, state)
            plan = await self._plan(state)
            note = self._system_note(state, plan)
            output_tool = plan.output.name if plan.output and plan.output.mode == "tool" else None
            turns = 0
            while True:
                if pending:
                    for result in await self._run_calls(pending, state, output_tool, early):
                        yield ToolResultEvent(result)
                    if state.result is not None:  # a final output, or calls await approval
                        return
                    pending = []
                    if turns >= self.max_turns:
                        raise MaxTurnsExceeded(
                            f"the model gave no final answer in max_turns={self.max_turns} requests"
                        )
                if note is not None:
                    _append_note(state, note)
                    note = None
                request = await self._request(state, plan)
                capture = _telemetry.captured_requests.get()
                if capture is not None:
                    capture.append(_telemetry.CapturedRequest(model, request))
                if state.unannounced:  # what the agent itself adjusted in the request
                    for warning in state.unannounced:
                        state.warnings.append(warning)
                        log_warning(warning)
                        if streaming:
                            yield warning
                    state.unannounced.clear()
                replay = (
                    self._replay(state, request, debug=debug)
                    if trace is not None or debug or self._drops_foreign(state, request)
                    else None
                )
                if streaming:
                    response = None
                    partial = _PartialOutputs(state.output, plan.output) if plan.output else None
                    start_early = self._early_tools and not state.approvals
                    source = (
                        model.stream(request)
                        if trace is None or replay is None
                        else trace.stream(model, request, replay)
                    )
                    async with _closing(source) as stream:
                        async for event in stream:
                            if type(event) in _DELTAS:  # the common case, checked first
                                yield event
                                if partial is not None:
                                    value = partial.feed(cast("ModelDelta", event))
                                    if value is not None:
                                        yield PartialOutput(value[0])
                            elif isinstance(event, ModelResponse):
                                response = event
                            elif isinstance(event, PartEnd):
                                yield event
                                if start_early:
                                    self._start_early(event.part, state, early)
                            else:
                                yield event
                                if isinstance(event, WarningEvent):
                                    state.warnings.append(event)
                                    log_warning(event)
                    if response is None:
                        raise StreamInterrupted(
                            "the stream ended without a final response",
                            scope=model.scope,
                        )
                    for warning in response.warnings:
                        if warning not in state.warnings:
                            state.warnings.append(warning)
                            log_warning(warning)
                else:
                    if trace is None or replay is None:
                        response = await model.request(request)
                    else:
                        response = await trace.request(model, request, replay)
                    for warning in response.warnings:
                        state.warnings.append(warning)
                        log_warning(warning)
                if debug:
                    log.debug(describe_response(response))
                turns += 1
                state.new_messages.append(response.message)
                used = response.usage
                state.input_floor = (
                    used.input_tokens
                    if state.usage.requests == 0
                    else min(state.input_floor, used.input_tokens)
                )
                state.usage = usage_sum(state.usage, used, requests=1)
                if streaming:
                    yield response
                if limits is not None:
                    limits.check(state.usage)
                pending = open_calls(response.message)
                if not pending and response.finish_reason == "pause_turn":
                    # A paused turn (a server tool loop): the next request sends it back as it
                    # is, and the model continues it.
                    if turns >= self.max_turns:
                        raise MaxTurnsExceeded(
                            f"the model's turn was still paused after max_turns={self.max_turns} "
                            "requests"
                        )
                    continue
                if not pending:
                    if self._answer(response.message, state, plan):
                        break
                elif turns >= self.max_turns and not (
                    output_tool and any(call.name == output_tool for call in pending)
                ):
                    raise MaxTurnsExceeded(
                        f"the model still wanted tools after max_turns={self.max_turns} requests"
                    )
                if not pending and turns >= self.max_turns:
                    raise MaxTurnsExceeded(
                        f"the model gave no valid output in max_turns={self.max_turns} requests"
                    )
        except ThinkAgentError as exc:
            failure = exc
            exc.with_evidence(state.messages, state.usage)
            if isinstance(exc, ConfigurationError) and _foreign_cause(exc):
                # A setup problem the adapter recognised in a vendor exception (no API key):
                # its message says what to do, the SDK's traceback would only bury it.
                exc.__cause__ = None
                exc.__suppress_context__ = True
                raise exc.with_traceback(None)  # noqa: B904  # the chain is what is dropped
            raise
        except asyncio.CancelledError as exc:
            failure = exc
            # Re-raise asyncio's own error, unchanged (asyncio.timeout on 3.11/3.12 checks its
            # exact type); the evidence rides along as its cause (ADR 3).
            evidence = RunCancelled(state.messages, state.usage)
            evidence.__cause__ = exc.__cause__
            exc.__cause__ = evidence
            raise
        except BaseException as exc:
            failure = exc
            raise
        finally:
            if early:  # calls started early that no step took: a failed or cancelled stream
                await _cancel(early.values())
            if trace is not None:
                trace.end(state.usage, failure)

    def _system_note(self, state: _RunState, plan: _Plan) -> SystemNote | None:
        """The note the model asks to append for this run's instructions and tools (a model
        whose thinking is bound to the instructions and tools a conversation began with, and
        that takes mid-conversation system messages, has `system_note_for`), or None."""
        ask = cast(
            "Callable[[Sequence[Message], str | None, Sequence[ToolDefinition]], object] | None",
            getattr(state.model, "system_note_for", None),
        )
        if ask is None or not state.messages:
            return None
        note = ask(state.messages, plan.instructions, plan.tools)
        return note if isinstance(note, SystemNote) else None

    def _drops_foreign(self, state: _RunState, request: ModelRequest) -> bool:
        """Whether `_replay` may log a warning for `request`: another scope's message is in it
        (whose thinking may be left out), and WARNING is on. Without either, no replay summary
        is built for a run that traces and logs nothing about it."""
        return _foreign_thinking(request.messages, state.model.scope) and log.isEnabledFor(
            logging.WARNING
        )

    def _replay(self, state: _RunState, request: ModelRequest, *, debug: bool) -> Replay:
        """What `request` does with the history's thinking; logs it once per run when it
        leaves out reasoning another scope issued, and logs the request when `debug`."""
        model = state.model
        policy = getattr(model, "foreign_reasoning", None)
        replay = _telemetry.replay_of(
            request.messages, model.scope, policy if isinstance(policy, str) else None
        )
        if replay.dropped_foreign > state.foreign_warned:
            state.foreign_warned = replay.dropped_foreign
            log.warning(
                "%d thinking block(s) from %s not sent to %s: another scope issued them "
                "(foreign_reasoning=%r)",
                replay.dropped_foreign,
                ", ".join(replay.foreign_scopes),
                model.scope,
                policy,
            )
        if debug:
            log.debug(describe_request(model.scope, model.model_name, request, replay))
        return replay

    def _start_early(
        self, part: object, state: _RunState, early: dict[str, asyncio.Future[ToolResult]]
    ) -> None:
        """Start the call `part` completes, if its tool may start while the model streams."""
        if type(part) is not ToolCall or part.name not in self._early_tools or part.id in early:
            return
        limits = state.limits
        if (
            limits is not None
            and limits.tool_calls is not None
            and state.tool_calls + len(early) + 1 > limits.tool_calls
        ):
            return  # left to the step, which stops the run before running any more
        early[part.id] = asyncio.ensure_future(self._call_tool(part, state))

    def _finish(self, state: _RunState, output: Any) -> None:
        state.result = RunResult(
            output,
            state.messages,
            list(state.new_messages),
            state.usage,
            warnings=state.warnings,
        )

    def _answer(self, message: Message, state: _RunState, plan: _Plan) -> bool:
        """Take an answer without tool calls as the output (True), or ask again (False)."""
        schema = state.output
        if schema.text or (schema.allows_text and plan.output and plan.output.mode == "tool"):
            self._finish(state, message.text)
            return True
        assert plan.output is not None
        text = message.text
        if plan.output.mode == "native":
            try:
                output = schema.validate_json(text)
            except ValidationError as exc:
                feedback = (
                    f"Your answer is not valid: {describe_errors(exc, wrapped=schema.wrapped)}. "
                    "Answer again with JSON that matches the response schema."
                )
                self._output_failed(state, feedback, errors_of(exc), text)
                return False
            self._finish(state, output)
            return True
        feedback = (
            f"Give your final answer by calling the `{plan.output.name}` tool: a plain text "
            "answer is not accepted."
        )
        errors: list[dict[str, object]] = [
            {"type": "output_tool_not_called", "loc": [], "msg": feedback}
        ]
        self._output_failed(state, feedback, errors, text)
        return False

    def _output_failed(
        self, state: _RunState, feedback: str | None, errors: list[dict[str, Any]], output: object
    ) -> None:
        """Count a failed attempt at the output; raise when it was the last one allowed, else
        send `feedback` (when the failure was not already answered as a tool result)."""
        state.output_failures += 1
        if state.output_failures > self.output_retries:
            last = "; ".join(str(e.get("msg", "")) for e in errors)
            raise OutputValidationFailed(
                f"the model gave no valid output in {state.output_failures} attempts; "
                f"last errors: {last}",
                errors=errors,
                output=output,
            )
        if feedback is not None:
            state.new_messages.append(Message.user(feedback))

    def _start(
        self, prompt: UserPrompt | None, state: _RunState
    ) -> list[ToolCall | ServerToolCall]:
        """Validate the history and work out where the run begins; returns calls to run first."""
        history = state.history
        model_first = _has_instructions(state.instructions)
        if _paused_step(history):  # a step a tool paused from inside: its results so far
            state.done = history[-1].tool_results
            del history[-1]
        validate_history(history, model_first=model_first)
        last = history[-1] if history else None
        unanswered = open_calls(last) if last is not None and last.role == "assistant" else []
        if state.done:
            answered = {result.call_id for result in state.done}
            unanswered = [call for call in unanswered if call.id not in answered]
        if state.approvals:
            self._check_approvals(prompt, unanswered, state, len(history))
        if prompt is not None:
            message = _prompt_message(prompt, len(history))
            if unanswered:
                raise HistoryError(
                    "the history ends with tool calls that have no results; continue it with "
                    "run(None, history=...) to run them, or repair() it first",
                    message_index=len(history) - 1,
                )
            state.new_messages.append(message)
            return []
        if last is None:
            if model_first:
                return []  # a run from instructions alone
            raise HistoryError(
                "nothing to run: no prompt, no instructions and an empty history", message_index=0
            )
        if last.role == "assistant" and not unanswered:
            raise HistoryError(
                "the history ends with the model's answer; give a prompt to continue",
                message_index=len(history) - 1,
            )
        return unanswered

    def _check_approvals(
        self,
        prompt: UserPrompt | None,
        unanswered: list[ToolCall | ServerToolCall],
        state: _RunState,
        at: int,
    ) -> None:
        """Decisions may answer any call still without a result at the end of the history
        (the output tool's excepted): a tool may ask from inside its call, so any may await."""
        if prompt is not None:
            raise ApprovalError("approvals continue a stopped run: call run(None, history=...)")
        output_tool = state.output.tool_name if state.output_mode == "tool" else None
        awaiting = {
            call.id: call
            for call in unanswered
            if (isinstance(call, ServerToolCall) and call.approval)
            or (call.name != output_tool and call.name in self.tools)
        }
        approved: set[str] = set()
        for call_id, decision in state.approvals.items():
            if call_id not in awaiting:
                waiting = ", ".join(repr(i) for i in awaiting) or "none"
                raise ApprovalError(
                    f"no call {call_id!r} awaits approval at the end of the history "
                    f"(messages[{at - 1}]; awaiting: {waiting})"
                )
            if isinstance(decision, ToolApproved):
                if decision.arguments is not None and isinstance(awaiting[call_id], ServerToolCall):
                    raise ApprovalError(
                        f"{call_id!r} is a built-in tool's call: the provider makes it as it "
                        "asked, so its arguments cannot be changed (approve or deny it)"
                    )
                if decision.arguments is not None and not isinstance(decision.arguments, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
                    raise ApprovalError(
                        f"ToolApproved(arguments=...) for {call_id!r} must be an object of "
                        "arguments"
                    )
                approved.add(call_id)
            elif decision is True:
                approved.add(call_id)
            elif not isinstance(decision, bool | ToolDenied):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise ApprovalError(
                    f"the decision for {call_id!r} must be True, False, ToolApproved(...) or "
                    "ToolDenied(...)"
                )
        state.approved = frozenset(approved)

    async def _plan(self, state: _RunState) -> _Plan:
        """What every request of this run shares: tools, instructions, output (ADR 31)."""
        instructions = state.instructions
        model = state.model
        if model is not self.model:  # a run on another model: it must take the built-in tools
            check_builtin_tools(model, self.builtin_tools)
        if instructions is not None and not isinstance(instructions, str):
            ctx = RunContext(state.deps, state.usage, state.messages, model)
            value = instructions(ctx)
            if inspect.isawaitable(value):
                value = await value
            if not isinstance(value, str):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise ConfigurationError(
                    f"the instructions function returned {type(value).__name__}, not text"
                )
            if not valid_unicode(value):
                raise ConfigurationError(
                    "the instructions are not valid Unicode (a lone surrogate): they cannot be sent"
                )
            instructions = value
        profile = model_profile(model)
        if not profile.reasoning and "thinking" in state.settings:  # nothing to switch
            asked = state.settings["thinking"]
            state.settings = cast(
                "ModelSettings", {k: v for k, v in state.settings.items() if k != "thinking"}
            )
            if asked is not False:
                state.unannounced.append(
                    WarningEvent(
                        code="thinking_unsupported",
                        message=(
                            f"{model.model_name} does not reason: thinking={asked!r} was not sent"
                        ),
                        scope=model.scope,
                    )
                )
        if not profile.media.types:  # no shape for media at all: refused before a tool runs
            returning = sorted(name for name, tool in self.tools.items() if tool.returns_media)
            if returning:
                raise ConfigurationError(
                    f"tool {returning[0]!r} returns images or documents (its return "
                    f"annotation), and {model.model_name} takes no media in any shape: give the "
                    "run a model that does, or have the tool return text"
                )
        tools = tuple(tool.definition for tool in self.tools.values())
        output = None
        mode = state.output_mode
        if mode is not None:
            schema = state.output
            output = schema.spec(mode)
            extra = schema.instructions(mode)
            instructions = f"{instructions}\n\n{extra}" if instructions else extra
            if mode == "tool":
                tools += (schema.tool_definition(),)
        if not instructions and not state.messages:
            raise HistoryError(
                "nothing to run: no prompt, no instructions and an empty history", message_index=0
            )
        return _Plan(tools, instructions or None, output, profile, self.builtin_tools)

    async def _request(self, state: _RunState, plan: _Plan) -> ModelRequest:
        messages: list[Message] = state.messages
        if state.media_unchecked:  # before the first request, and after a tool returned media
            moves = _check_media(plan.profile.media, messages, state.media_checked)
            if moves and not state.media_moves:  # said once a run
                state.media_moves = True
                state.unannounced.append(
                    WarningEvent(
                        code="media_moved",
                        message=(
                            f"{state.model.model_name} takes no media in tool results: the "
                            "images and documents tools returned are sent in the user turn "
                            "right after the results (the evidence keeps them in the results)"
                        ),
                        scope=state.model.scope,
                    )
                )
            state.media_unchecked = False
        state.media_checked = len(messages)
        if state.media_moves:
            messages = [_media_moved(m, state.moved) for m in messages]
        for processor in self.history_processors:
            processed = processor(list(messages))
            if inspect.isawaitable(processed):
                processed = await processed
            messages = list(processed)
        if self.history_processors:
            validate_history(messages, model_first=_has_instructions(state.instructions))
        limits = state.limits
        if limits is not None:
            floor = 0 if self.history_processors else state.input_floor
            limits.check_before_request(state.usage, next_input=floor)
        return ModelRequest(
            messages=messages,
            tools=plan.tools,
            instructions=plan.instructions,
            settings=state.settings,
            output=plan.output,
            builtin_tools=plan.builtin_tools,
        )

    async def _run_calls(
        self,
        calls: list[ToolCall | ServerToolCall],
        state: _RunState,
        output_tool: str | None,
        early: dict[str, asyncio.Future[ToolResult]],
    ) -> list[ToolResult]:
        """Run a step's calls: stop for approvals, validate the output tool's, run the others
        concurrently (taking over those `early` started while the model streamed). Results
        are kept in call order, in one user message; a built-in tool call the provider asked
        to have approved is answered with the decision (the provider runs it)."""
        approvals, state.approvals = state.approvals, {}
        awaiting: list[ToolCall | ServerToolCall] = []
        for call in calls:
            if call.id in approvals:
                continue
            if isinstance(call, ServerToolCall):  # the provider waits on it (or ran it)
                if call.approval:
                    awaiting.append(call)
                continue
            if call.name == output_tool:
                continue
            tool = self.tools.get(call.name)
            if tool is None or tool.requires_approval is False:
                continue
            if tool.requires_approval is True or await tool.asks_approval(
                self._context(state, call), _arguments_or_empty(call)
            ):
                awaiting.append(call)
        if awaiting:  # nothing runs until every call of the step can: their results go together
            self._pause(state, awaiting, [])
            return []
        results: list[ToolResult | None] = [None] * len(calls)
        to_run: list[tuple[int, ToolCall]] = []
        edits: dict[str, Mapping[str, Any]] = {}
        for i, call in enumerate(calls):
            decision = approvals.get(call.id, True)
            if call.name == output_tool and isinstance(call, ToolCall):
                continue
            if isinstance(call, ServerToolCall):  # the decision goes back; the provider runs it
                approve = decision is True or isinstance(decision, ToolApproved)
                results[i] = (
                    ToolResult(call_id=call.id, name=call.name, content=_APPROVED)
                    if approve
                    else ToolResult(
                        call_id=call.id, name=call.name, content=_denial(decision), is_error=True
                    )
                )
            elif decision is True or isinstance(decision, ToolApproved):
                to_run.append((i, call))
                if isinstance(decision, ToolApproved) and decision.arguments is not None:
                    edits[call.id] = decision.arguments
            else:
                results[i] = ToolResult(
                    call_id=call.id, name=call.name, content=_denial(decision), is_error=True
                )
        if state.limits is not None:
            state.limits.check_tool_calls(state.tool_calls, len(to_run))
        state.tool_calls += len(to_run)
        output_found, output, output_error = (
            self._output_calls(calls, results, output_tool, state)
            if output_tool
            else (False, None, None)
        )
        if len(to_run) == 1 and not early:  # nothing to run concurrently: no task (a hot path)
            i, call = to_run[0]
            results[i] = await self._call_tool(call, state, edits.get(call.id))
        elif to_run:
            tasks = [
                early.pop(call.id, None)
                or asyncio.ensure_future(self._call_tool(call, state, edits.get(call.id)))
                for _, call in to_run
            ]
            try:
                done = await asyncio.gather(*tasks)
            except BaseException:  # cancelled, or worse: stop the other calls, leave no task
                await _cancel(tasks)
                raise
            for (i, _), result in zip(to_run, done, strict=True):
                results[i] = result
        if state.asked:  # a tool asked for approval from inside its call: the step pauses
            asked = [call for call in calls if call.id in state.asked]
            ran = [r for r in results if r is not None and r.call_id not in state.asked]
            self._pause(state, asked, ran)
            return ran
        final = [result for result in results if result is not None]
        if state.done:  # the results a paused step already had, in the order of its calls
            final = _in_call_order(state.messages[-1], [*state.done, *final])
            state.done = []
        state.new_messages.append(Message(role="user", parts=tuple(final)))
        last_error: dict[str, ToolResult] = {}
        for result in final:
            if result.media:
                state.media_unchecked = True
            if result.is_error and result.name != output_tool:
                last_error[result.name] = result
        if output_found:
            self._finish(state, output)
            return final
        if output_error is not None:
            errors, attempt = output_error
            self._output_failed(state, None, errors, attempt)
        # Retries count model turns, not calls: three bad parallel calls to one tool are one
        # failed turn, and the model gets its turn to correct them.
        if state.failures:
            for name in {result.name for result in final} - last_error.keys():
                state.failures.pop(name, None)
        for name, result in last_error.items():
            failures = state.failures[name] = state.failures.get(name, 0) + 1
            tool = self.tools.get(name)
            max_retries = tool.max_retries if tool is not None else DEFAULT_MAX_RETRIES
            if failures > max_retries:
                raise ToolRetriesExceeded(name, max_retries, result.content_text())
        return final

    def _pause(
        self, state: _RunState, awaiting: list[ToolCall | ServerToolCall], ran: list[ToolResult]
    ) -> None:
        """End the run with `awaiting` calls pending approval; the results of the step's calls
        that already ran (with those of an earlier pause) end the evidence, in call order."""
        asked, state.asked = state.asked, {}
        done = [*state.done, *ran]
        if done:
            step = state.messages[-1]
            state.new_messages.append(Message(role="user", parts=tuple(_in_call_order(step, done))))
            state.done = []
        state.result = RunResult(
            _PENDING,
            state.messages,
            list(state.new_messages),
            state.usage,
            pending_approvals=awaiting,
            warnings=state.warnings,
            approval_reasons=asked,
        )

    def _output_calls(
        self,
        calls: list[ToolCall | ServerToolCall],
        results: list[ToolResult | None],
        output_tool: str,
        state: _RunState,
    ) -> tuple[bool, Any, tuple[list[dict[str, Any]], object] | None]:
        """Answer the output tool's calls of a step: `(found, output, last error)`."""
        found, output = False, None
        error: tuple[list[dict[str, Any]], object] | None = None
        schema = state.output
        for i, call in enumerate(calls):
            if call.name != output_tool or not isinstance(call, ToolCall):
                continue
            if found:
                results[i] = ToolResult(
                    call_id=call.id, name=call.name, content=_FINAL_RESULT_IGNORED
                )
                continue
            try:
                output = schema.validate_object(call.arguments_dict())
            except ValidationError as exc:
                text = describe_errors(exc, wrapped=schema.wrapped)
                error = (errors_of(exc), call.arguments)
            except ValueError as exc:  # the arguments are not a JSON object
                text = str(exc)
                error = ([{"type": "json_invalid", "loc": [], "msg": text}], call.arguments)
            else:
                found = True
                results[i] = ToolResult(
                    call_id=call.id, name=call.name, content=_FINAL_RESULT_ACCEPTED
                )
                continue
            results[i] = ToolResult(
                call_id=call.id,
                name=call.name,
                content=f"Invalid final result: {text}. Fix it and call `{output_tool}` again.",
                is_error=True,
            )
        return found, output, None if found else error

    async def _call_tool(
        self, call: ToolCall, state: _RunState, edited: Mapping[str, Any] | None = None
    ) -> ToolResult:
        trace = state.trace
        if trace is None:
            return (await self._execute(call, state, edited))[0]
        with trace.tool(call, self.tools.get(call.name)) as observed:
            result, failure = await self._execute(call, state, edited)
            observed.done(result, failure)
            return result

    def _context(self, state: _RunState, call: ToolCall) -> RunContext[Any]:
        return RunContext(
            state.deps,
            state.usage,
            state.messages,
            state.model,
            tool_name=call.name,
            tool_call_id=call.id,
            retry=state.failures.get(call.name, 0),
            tool_call_approved=call.id in state.approved,
        )

    async def _execute(
        self, call: ToolCall, state: _RunState, edited: Mapping[str, Any] | None = None
    ) -> tuple[ToolResult, Exception | None]:
        """The call's result, and the exception its tool raised (None when it returned)."""

        def error(
            text: str, failure: Exception | None = None
        ) -> tuple[ToolResult, Exception | None]:
            result = ToolResult(call_id=call.id, name=call.name, content=text, is_error=True)
            return result, failure

        tool = self.tools.get(call.name)
        if tool is None:
            available = ", ".join(sorted(self.tools)) or "none"
            return error(f"Unknown tool {call.name!r}. Available tools: {available}.")
        if edited is not None:
            arguments = dict(edited)
        else:
            try:
                arguments = call.arguments_dict()
            except ValueError as exc:
                return error(f"Arguments for tool {call.name!r} are not a JSON object: {exc}", exc)
        ctx = self._context(state, call) if tool.takes_context else None
        try:
            value = await tool.invoke(arguments, ctx)
        except ApprovalRequired as exc:
            if call.id in state.approved:
                raise ApprovalError(
                    f"tool {call.name!r} asked for approval again for call {call.id!r}, which "
                    "was approved: read ctx.tool_call_approved before raising ApprovalRequired"
                ) from exc
            state.asked[call.id] = exc.reason
            return ToolResult(call_id=call.id, name=call.name), None  # never kept: the step pauses
        except Exception as exc:  # any failure goes back to the model as an error result
            return error(describe_failure(tool, exc), exc)
        content, media = split_media(value)
        return ToolResult(call_id=call.id, name=call.name, content=content, media=media), None


def _append_note(state: _RunState, note: SystemNote) -> None:
    """Put `note` at the end of the run's user turn, where it is kept and persisted (so a
    resumed conversation sends it again): on the run's last message when it is the user's (the
    prompt, or tool results), else in a user message of its own after the history."""
    last = state.new_messages[-1] if state.new_messages else None
    if last is not None and last.role == "user":
        state.new_messages[-1] = last.model_copy(update={"parts": (*last.parts, note)})
    else:
        state.new_messages.append(Message(role="user", parts=(note,)))


def _has_instructions(instructions: Instructions[Any] | None) -> bool:
    return bool(instructions) or callable(instructions)


def _arguments_or_empty(call: ToolCall) -> dict[str, Any]:
    """The call's arguments for an approval predicate: `{}` when they are not a JSON object
    (the call then fails its validation anyway)."""
    try:
        return call.arguments_dict()
    except ValueError:
        return {}


def _paused_step(history: Sequence[Message]) -> bool:
    """Whether `history` ends with a step a tool paused from inside: the results of some of
    the last assistant message's calls, in a user message of results only."""
    if len(history) < 2:
        return False
    last, step = history[-1], history[-2]
    if last.role != "user" or step.role != "assistant" or not last.parts:
        return False
    if not all(isinstance(part, ToolResult) for part in last.parts):
        return False
    calls = {call.id for call in step.tool_calls}
    answered = {result.call_id for result in last.tool_results}
    return answered < calls and len(answered) == len(last.parts)


def _in_call_order(step: Message, results: Sequence[ToolResult]) -> list[ToolResult]:
    order = {call.id: n for n, call in enumerate(step.tool_calls)}
    return sorted(results, key=lambda result: order.get(result.call_id, len(order)))


def _check_media(media: MediaSupport, messages: Sequence[Message], start: int) -> bool:
    """Raise `ConfigurationError` naming the first image or document of `messages[start:]`
    the model cannot take; returns whether a tool result there holds media the model takes
    only in a user part (`in_tool_results` false): sent there instead (`_media_moved`). A
    conversation's later requests check their new messages only (`PerPrefix`)."""
    kind = (_MEDIA, media)
    checked, kept = _PREFIXES.resume(messages, kind)
    moved = cast("int | None", kept)  # the first message whose tool result's media moves
    for i in range(checked, len(messages)):  # what was kept says nothing of the rest
        message = messages[i]
        if message.role != "user":
            continue
        for j, part in enumerate(message.parts):
            if isinstance(part, Image | Document):
                problem = media.problem(part)
            elif isinstance(part, ToolResult) and part.media:
                problem = next(filter(None, map(media.problem, part.media)), None)
                if not media.in_tool_results:
                    moved = i if moved is None else moved
                    if problem is not None:
                        problem += (
                            " (a tool's media, which this model takes in no tool result, "
                            "nor in a user turn)"
                        )
            else:
                continue
            if problem is not None:
                raise ConfigurationError(f"messages[{i}].parts[{j}]: {problem}")
    _PREFIXES.keep_ends(
        messages,
        checked,
        kind,
        lambda n: moved if moved is None or moved < n else None,
        current_prompt(messages),
    )
    return moved is not None and moved >= start


def _foreign_thinking(messages: Sequence[Message], scope: str) -> bool:
    """Whether another scope's assistant message is in `messages` (its thinking may be left
    out of the request); a conversation's later requests look at their new messages only."""
    prompt = current_prompt(messages)
    return _PREFIXES.any(messages, (_FOREIGN, scope), lambda m: _foreign(m, scope), prompt)


def _foreign(message: Message, scope: str) -> bool:
    return message.role == "assistant" and message.scope != scope


_PREFIXES = PerPrefix()
_MEDIA = "media checked"
_FOREIGN = "foreign thinking"


def _media_moved(message: Message, cache: dict[int, Message]) -> Message:
    """`message` as sent to a model that takes no media in tool results: each result's media
    follows the results, in the same user turn (the way the providers' guides pass a tool's
    image: a user part after the tool output), and the result's text says so."""
    if message.role != "user":
        return message
    found = cache.get(id(message))
    if found is not None:
        return found
    results: list[Any] = []
    moved: list[Any] = []
    rest: list[Any] = []
    for part in message.parts:
        if isinstance(part, ToolResult):
            if part.media:
                note = f"[{len(part.media)} image(s) or document(s) follow the tool results]"
                content = part.content
                if content is None:
                    content = note
                elif isinstance(content, str):
                    content = f"{content}\n{note}"
                results.append(part.model_copy(update={"media": (), "content": content}))
                moved.extend(part.media)
            else:
                results.append(part)
        else:
            rest.append(part)
    sent = message if not moved else Message(role="user", parts=(*results, *moved, *rest))
    cache[id(message)] = sent
    return sent


async def _cancel(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel `tasks` and wait until each has stopped (no task is left behind)."""
    pending = list(tasks)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


def _builtin_class(item: object) -> str | None:
    """The name of a built-in tool config class given where an instance belongs, else None."""
    if isinstance(item, type) and issubclass(item, BuiltinTool):
        return item.__name__
    return None


def _denial(decision: Approval) -> str:
    """The reason a denied call's result gives."""
    return decision.reason if isinstance(decision, ToolDenied) else ToolDenied().reason


def _foreign_cause(error: BaseException) -> bool:
    """Whether `error` was raised from an exception thinkagent did not raise (a vendor SDK's)."""
    cause = error.__cause__
    return cause is not None and not isinstance(cause, ThinkAgentError)


def _prompt_message(prompt: UserPrompt, at: int) -> Message:
    """The user message for `prompt`; `HistoryError` when it is empty or cannot be sent."""
    if isinstance(prompt, str):  # the common case, kept short: it is on every run's path
        if not prompt.strip():
            raise HistoryError("the prompt is empty", message_index=at)
        if not valid_unicode(prompt):
            raise HistoryError(
                "the prompt is not valid Unicode (a lone surrogate): it cannot be sent",
                message_index=at,
            )
        return Message(role="user", parts=(TextPart(text=prompt),))
    try:
        message = Message.user(prompt)
    except (TypeError, ValueError) as exc:
        raise HistoryError(f"the prompt cannot be sent: {exc}", message_index=at) from exc
    texts = [p.text for p in message.parts if isinstance(p, TextPart)]
    notes = message.notes
    if len(texts) + len(notes) < len(message.parts):  # media: not empty, whatever the text
        texts.append("media")
    if not any(text.strip() for text in texts):
        raise HistoryError(
            "the prompt is empty" + (": a system note follows a prompt" if notes else ""),
            message_index=at,
        )
    if notes:
        first = message.parts.index(notes[0])
        after = next(
            (j for j in range(first, len(message.parts)) if message.parts[j].kind != "system_note"),
            None,
        )
        if after is not None:
            raise HistoryError(
                "a system note goes last in the prompt, after the text and media",
                message_index=at,
                part_index=after,
            )
    if not all(valid_unicode(text) for text in texts):
        raise HistoryError(
            "the prompt is not valid Unicode (a lone surrogate): it cannot be sent",
            message_index=at,
        )
    return message


class _PartialOutputs:
    """Follows the output's JSON through a response's deltas and validates it as it grows."""

    __slots__ = ("_chunks", "_index", "_last", "_schema", "_tool")

    def __init__(self, schema: OutputSchema[Any], spec: OutputSpec) -> None:
        self._schema = schema
        self._tool = spec.name if spec.mode == "tool" else None
        self._index: int | None = None  # the output tool call's part, once its name arrived
        self._chunks: list[str] = []
        self._last: tuple[bool, Any] = (False, None)

    def feed(self, delta: ModelDelta) -> tuple[Any] | None:
        """The new partial output this delta gives, as a 1-tuple, or None."""
        if self._tool is None:
            if not isinstance(delta, TextDelta) or not delta.text:
                return None
            self._chunks.append(delta.text)
        else:
            if not isinstance(delta, ToolCallDelta):
                return None
            if delta.name is not None:
                if delta.name != self._tool or self._index is not None:
                    return None
                self._index = delta.index
            if delta.index != self._index or not delta.args_fragment:
                return None
            self._chunks.append(delta.args_fragment)
        valid, value = self._schema.partial("".join(self._chunks))
        if not valid or (self._last[0] and self._last[1] == value):
            return None
        self._last = (True, value)
        return (value,)


class _closing(Generic[_T]):  # lower case: used like contextlib.aclosing
    """Close an async generator when the block exits, however it exits (a class, not an
    `asynccontextmanager`: it is on every run's and every stream's path)."""

    __slots__ = ("_iterator",)

    def __init__(self, iterator: AsyncIterator[_T]) -> None:
        self._iterator = iterator

    async def __aenter__(self) -> AsyncIterator[_T]:
        return self._iterator

    async def __aexit__(self, *_: object) -> None:
        aclose: Callable[[], Awaitable[object]] | None = getattr(self._iterator, "aclose", None)
        if aclose is not None:
            await aclose()


class AgentStream(Generic[OutputT]):
    """A streamed run: iterate it for `AgentEvent`s, then read `result`.

    Use it as an async context manager so leaving early closes the model's stream.
    """

    def __init__(self, events: AsyncIterator[AgentEvent], state: _RunState) -> None:
        self._events = events
        self._state = state

    async def __aenter__(self) -> AgentStream[OutputT]:
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
    def new_messages(self) -> list[Message]:
        """This run's complete messages so far (the prompt's first)."""
        return self._state.new_messages

    @property
    def usage(self) -> Usage:
        return self._state.usage

    @property
    def result(self) -> RunResult[OutputT]:
        """The run's result; available once the stream has been iterated to its end."""
        if self._state.result is None:
            raise RuntimeError("the run has not finished: iterate the stream to its end first")
        return self._state.result
