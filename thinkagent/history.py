"""What makes a history sendable: validation, repair, processors, and the replay policy.

`validate_history` runs before every model request, so an invalid history never reaches a
provider. `repair` mends the two things an interrupted run leaves behind. History processors
shape what is sent (never what is kept), and `trim_history` is one that never splits a turn.
`for_scope` is the replay policy every translator applies: a signature only goes back to the
scope that issued it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from .errors import HistoryError
from .messages import Message, Part, TextPart, ThinkingBlock, ToolCall, ToolResult

__all__ = [
    "INTERRUPTED_RESULT",
    "ForeignReasoning",
    "HistoryProcessor",
    "for_scope",
    "repair",
    "trim_history",
    "validate_history",
]

HistoryProcessor = Callable[[list[Message]], Sequence[Message] | Awaitable[Sequence[Message]]]
"""A plain (sync or async) callable that takes the history about to be sent and returns the
history to send instead. It shapes the request only: the run's evidence is never changed."""

ForeignReasoning = Literal["drop", "text"]
"""What a translator does with reasoning it cannot replay natively: drop it (the default), or
send its visible text as plain text (redacted payloads are always dropped)."""

INTERRUPTED_RESULT = "The tool call was interrupted before it returned a result."


def validate_history(messages: Sequence[Message]) -> None:
    """Raise `HistoryError` naming the first message (and part) that makes `messages` unsendable.

    Checks: the conversation starts with a user message and no two assistant messages follow
    each other; thinking and tool calls appear only on assistant messages and tool results only
    on user messages; every thinking block is valid; every tool result answers a call of the
    assistant message before it, once; every tool call is answered by the user turn after it
    (only the last message, an assistant message, may still have calls pending).
    """
    pending: dict[str, tuple[int, int]] = {}
    answered: set[str] = set()
    previous_role: str | None = None
    for i, message in enumerate(messages):
        if not isinstance(message, Message):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise HistoryError(f"expected a Message, got {type(message).__name__}", message_index=i)
        if i == 0 and message.role != "user":
            raise HistoryError(
                "roles out of order: a conversation starts with a user message", message_index=0
            )
        if message.role == "assistant":
            if previous_role == "assistant":
                raise HistoryError(
                    "roles out of order: two assistant messages in a row", message_index=i
                )
            if pending:
                call_id, (mi, pi) = next(iter(pending.items()))
                raise HistoryError(
                    f"tool call {call_id!r} has no result before the next assistant message",
                    message_index=mi,
                    part_index=pi,
                )
            answered = set()
        elif not message.parts:
            raise HistoryError("a user message needs at least one part", message_index=i)
        for j, part in enumerate(message.parts):
            _check_part(message, part, i, j, pending, answered)
        previous_role = message.role
    if pending and previous_role == "user":
        call_id, (mi, pi) = next(iter(pending.items()))
        raise HistoryError(f"tool call {call_id!r} has no result", message_index=mi, part_index=pi)


def _check_part(
    message: Message,
    part: Part,
    i: int,
    j: int,
    pending: dict[str, tuple[int, int]],
    answered: set[str],
) -> None:
    if isinstance(part, ThinkingBlock):
        if message.role != "assistant":
            raise HistoryError(
                "thinking on a user message: only assistant messages carry thinking",
                message_index=i,
                part_index=j,
            )
        problem = part.problem()
        if problem is not None:
            raise HistoryError(problem, message_index=i, part_index=j)
    elif isinstance(part, ToolCall):
        if message.role != "assistant":
            raise HistoryError("a tool call on a user message", message_index=i, part_index=j)
        if part.id in pending:
            raise HistoryError(f"duplicate tool call id {part.id!r}", message_index=i, part_index=j)
        pending[part.id] = (i, j)
    elif isinstance(part, ToolResult):
        if message.role != "user":
            raise HistoryError(
                "a tool result on an assistant message", message_index=i, part_index=j
            )
        if part.call_id in answered:
            raise HistoryError(
                f"tool call {part.call_id!r} is answered twice", message_index=i, part_index=j
            )
        if pending.pop(part.call_id, None) is None:
            raise HistoryError(
                f"tool result for {part.call_id!r} matches no tool call of the assistant "
                "message before it",
                message_index=i,
                part_index=j,
            )
        answered.add(part.call_id)


def repair(messages: Sequence[Message]) -> list[Message]:
    """Mend what an interrupted run leaves: answer unanswered tool calls, drop orphaned results.

    Every tool call with no result gets an error result saying it was interrupted (placed right
    after its assistant message); every result that answers no call of the assistant message
    before it is dropped, and so is a user message left empty by that. Idempotent.
    """
    repaired: list[Message] = []
    calls: dict[str, ToolCall] = {}
    answered: set[str] = set()

    def answer_missing() -> None:
        missing = [c for c in calls.values() if c.id not in answered]
        if not missing:
            return
        results = tuple(
            ToolResult(call_id=c.id, name=c.name, content=INTERRUPTED_RESULT, is_error=True)
            for c in missing
        )
        last = repaired[-1]
        if last.role == "user":
            parts = _results_first(last.parts, results)
            repaired[-1] = last.model_copy(update={"parts": parts})
        else:
            repaired.append(Message(role="user", parts=results))
        answered.update(c.id for c in missing)

    for message in messages:
        if message.role == "assistant":
            answer_missing()
            repaired.append(message)
            calls = {c.id: c for c in message.tool_calls}
            answered = set()
            continue
        kept: list[Part] = []
        for part in message.parts:
            if isinstance(part, ToolResult):
                if part.call_id not in calls or part.call_id in answered:
                    continue
                answered.add(part.call_id)
            kept.append(part)
        if kept:
            repaired.append(
                message
                if len(kept) == len(message.parts)
                else message.model_copy(update={"parts": tuple(kept)})
            )
    if repaired:
        answer_missing()
    return repaired


def _results_first(parts: tuple[Part, ...], results: tuple[ToolResult, ...]) -> tuple[Part, ...]:
    """Insert results after the results already in a user turn, before its text."""
    split = 0
    while split < len(parts) and isinstance(parts[split], ToolResult):
        split += 1
    return parts[:split] + results + parts[split:]


def trim_history(max_messages: int) -> Callable[[list[Message]], list[Message]]:
    """A history processor that keeps at most `max_messages` of the newest messages.

    It only cuts just before a user prompt (a user message without tool results), so every
    tool call stays with its result and every thinking block with its turn. When even the
    current turn is longer than `max_messages`, the current turn is kept whole.
    """
    if max_messages < 1:
        raise ValueError("max_messages must be at least 1")

    def trim(messages: list[Message]) -> list[Message]:
        if len(messages) <= max_messages:
            return messages
        boundaries = [
            i for i, m in enumerate(messages) if i > 0 and m.role == "user" and not m.tool_results
        ]
        if not boundaries:
            return messages
        fitting = [i for i in boundaries if len(messages) - i <= max_messages]
        return messages[fitting[0] if fitting else boundaries[-1] :]

    return trim


def for_scope(
    messages: Sequence[Message], scope: str, *, foreign_reasoning: ForeignReasoning = "drop"
) -> list[Message]:
    """The messages a translator for `scope` may replay natively.

    Assistant messages produced by `scope` are returned untouched. From any other scope (or of
    unknown provenance) thinking is dropped, or sent as plain text with `foreign_reasoning="text"`,
    and signatures on text parts and tool calls are removed: a signature is meaningless, and
    rejected, anywhere but where it was issued.
    """
    return [
        m if m.role != "assistant" or m.provider == scope else _strip_proofs(m, foreign_reasoning)
        for m in messages
    ]


def _strip_proofs(message: Message, foreign_reasoning: ForeignReasoning) -> Message:
    parts: list[Part] = []
    for part in message.parts:
        if isinstance(part, ThinkingBlock):
            if foreign_reasoning == "text" and part.text:
                parts.append(TextPart(text=f"<thinking>\n{part.text}\n</thinking>"))
        elif isinstance(part, TextPart | ToolCall) and part.signature is not None:
            parts.append(part.model_copy(update={"signature": None}))
        else:
            parts.append(part)
    return message.model_copy(update={"parts": tuple(parts)})
