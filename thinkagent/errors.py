"""One error hierarchy for everything thinkagent raises.

Every error a run raises carries the run's evidence so far (`messages`, `usage`): a failed run
can be persisted and resumed with `Agent.run(None, history=error.messages)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .messages import Message, Usage

__all__ = [
    "ApprovalError",
    "ConfigurationError",
    "FallbackExhausted",
    "HistoryError",
    "MaxTurnsExceeded",
    "OutputValidationFailed",
    "ProviderError",
    "RunCancelled",
    "StreamInterrupted",
    "ThinkAgentError",
    "ToolError",
    "ToolRetriesExceeded",
    "UsageLimitExceeded",
]


class ThinkAgentError(Exception):
    """Base class of every error thinkagent raises.

    When raised out of a run, `messages` holds the run's valid history up to the failure (the
    input history plus every complete message of this run) and `usage` what the run consumed.
    """

    messages: list[Message]
    usage: Usage | None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.messages = []
        self.usage = None

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only constructors: rebuild from args and state (pickle, multiprocessing).
        return (_rebuild, (type(self), self.args, self.__dict__))

    def with_evidence(self, messages: Sequence[Message], usage: Usage) -> ThinkAgentError:
        """Attach a run's evidence (used by the agent before re-raising)."""
        self.messages = list(messages)
        self.usage = usage
        return self


class ConfigurationError(ThinkAgentError, ValueError):
    """A model, tool or agent was configured with settings that cannot work together."""


class HistoryError(ThinkAgentError, ValueError):
    """A history is not valid to send; names the message (and part) at fault.

    Raised before any request is sent, so nothing reaches a provider.
    """

    def __init__(self, reason: str, *, message_index: int, part_index: int | None = None) -> None:
        where = f"messages[{message_index}]"
        if part_index is not None:
            where += f".parts[{part_index}]"
        super().__init__(f"{where}: {reason}")
        self.reason = reason
        self.message_index = message_index
        self.part_index = part_index


class ProviderError(ThinkAgentError):
    """A provider refused or failed a request.

    `scope` is the endpoint that answered (the scope of the messages it produces), `message`
    the provider's own message; the vendor SDK's exception is chained as `__cause__`.
    `retryable` says whether sending the same request again may succeed.
    """

    def __init__(
        self,
        message: str,
        *,
        scope: str,
        status: int | None = None,
        retryable: bool = False,
        error_type: str | None = None,
    ) -> None:
        prefix = f"{scope} error" + (f" {status}" if status is not None else "")
        super().__init__(f"{prefix}: {message}")
        self.scope = scope
        self.status = status
        self.message = message
        self.retryable = retryable
        self.error_type = error_type


class StreamInterrupted(ProviderError):
    """A stream ended before its terminal event.

    `partial` is what had arrived, with the block being built left unsigned so it can never be
    replayed as signed; it is not part of `messages`.
    """

    def __init__(self, message: str, *, scope: str, partial: Message | None = None) -> None:
        super().__init__(message, scope=scope, retryable=True)
        self.partial = partial


class FallbackExhausted(ProviderError):
    """Every model of a `FallbackModel` failed the request.

    `errors` holds each model's error in order; the scope, status, message and `retryable` are
    the last one's (the vendor exception of each is chained on its own error).
    """

    def __init__(self, errors: Sequence[ProviderError]) -> None:
        last = errors[-1]
        super().__init__(
            f"all {len(errors)} models failed; last: {last.message}",
            scope=last.scope,
            status=last.status,
            retryable=last.retryable,
            error_type=last.error_type,
        )
        self.errors = list(errors)


class OutputValidationFailed(ThinkAgentError):
    """The model did not give a valid structured output within the run's `output_retries`.

    `errors` are pydantic's errors for the last attempt (JSON data: `loc`, `msg`, `type`...),
    `output` the last attempt itself (the output tool's arguments or the answer's text). The
    evidence (`messages`, `usage`) holds every attempt and the feedback the model got.
    """

    def __init__(self, message: str, *, errors: list[dict[str, object]], output: object) -> None:
        super().__init__(message)
        self.errors = errors
        self.output = output


class ApprovalError(ThinkAgentError, ValueError):
    """`approvals` given to a run do not match the calls awaiting approval in its history.

    Raised before any request is sent or any tool runs.
    """


class ToolError(ThinkAgentError):
    """A tool could not be run (bad definition, or it kept failing)."""


class ToolRetriesExceeded(ToolError):
    """A tool failed in more model turns in a row than its `max_retries` allows (failed parallel
    calls of one turn count once: the model corrects them together)."""

    def __init__(self, tool_name: str, max_retries: int, last_error: str) -> None:
        super().__init__(
            f"tool {tool_name!r} failed in {max_retries + 1} model turns in a row; "
            f"last error: {last_error}"
        )
        self.tool_name = tool_name
        self.last_error = last_error


class UsageLimitExceeded(ThinkAgentError):
    """A run went past one of its `UsageLimits`."""


class MaxTurnsExceeded(UsageLimitExceeded):
    """The model asked for tools again after the run's `max_turns` model requests."""


class RunCancelled(ThinkAgentError):
    """The evidence of a run that was cancelled (`messages`, `usage`).

    It is never raised: cancelling a run propagates asyncio's own `CancelledError`, unchanged,
    so `asyncio.timeout`, `asyncio.wait_for` and task groups behave exactly as they do for any
    coroutine on every Python version. The run attaches this record as that error's
    `__cause__`; `RunCancelled.find(exc)` gets it back from the `CancelledError`, from the
    `TimeoutError` that `asyncio.timeout` or `wait_for` raised from it, or from the error an
    `await` of the cancelled task raised.
    """

    def __init__(self, messages: Sequence[Message], usage: Usage) -> None:
        super().__init__("run cancelled")
        self.messages = list(messages)
        self.usage = usage

    @classmethod
    def find(cls, error: BaseException) -> RunCancelled | None:
        """The evidence of the cancelled run nearest to `error` in its chain of causes, or None
        (with nested runs, the outermost one: its evidence holds the inner run's as its cause)."""
        seen: set[int] = set()
        pending: list[BaseException] = [error]
        while pending:
            node = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, cls):
                return node
            pending += [e for e in (node.__context__, node.__cause__) if e is not None]
        return None


def _rebuild(
    cls: type[BaseException], args: tuple[object, ...], state: dict[str, object]
) -> BaseException:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error
