"""What makes a history sendable: validation, repair, processors, and the replay policy.

`validate_history` runs before every model request, so an invalid history never reaches a
provider. `repair` mends the two things an interrupted run leaves behind. History processors
shape what is sent (never what is kept), and `trim_history` is one that never splits a turn.
`for_scope` is the replay policy every translator applies: a signature only goes back to the
scope that issued it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from ._memo import PerPrefix
from .errors import HistoryError
from .messages import (
    Document,
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
    valid_unicode,
)

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


def validate_history(messages: Sequence[Message], *, model_first: bool = False) -> None:
    """Raise `HistoryError` naming the first message (and part) that makes `messages` unsendable.

    Checks: the conversation starts with a user message (or, with `model_first`, may open with
    the model's: a run started from instructions alone) and no two assistant messages follow
    each other (but the continuation of a paused turn, `finish_reason="pause_turn"`, follows
    it); thinking, tool calls, opaque provider blocks and built-in tool calls and results
    appear only on assistant messages, tool results, images, documents and system notes only
    on user messages; a system note ends the user turn it follows (after something of the
    user's, before the next assistant message, with only notes after it); every thinking block
    is valid; every tool result answers a call of the assistant message before it, once; every
    tool call (and every built-in tool call awaiting approval) is answered in the user message
    right after it, which Chat Completions-style APIs require (only the last message, an
    assistant message, may still have calls pending).
    """
    pending: dict[str, tuple[int, int]] = {}
    answered: set[str] = set()
    previous: tuple[str, str | None] | None = None  # the role and finish reason before
    turn = _UserTurn()
    # A conversation's later checks start after the prefix checked before (`PerPrefix`).
    start, kept = _CHECKED_PREFIX.resume(messages, (_CHECKED, model_first))
    if kept is not None:
        checked = cast("_Checked", kept)
        pending, answered = dict(checked.pending), set(checked.answered)
        previous, turn.content, turn.note = checked.previous, checked.content, checked.note
    for i in range(start, len(messages)):
        message = messages[i]
        if not isinstance(message, Message):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise HistoryError(f"expected a Message, got {type(message).__name__}", message_index=i)
        if i == 0 and message.role != "user" and not model_first:
            raise HistoryError(
                "roles out of order: a conversation starts with a user message", message_index=0
            )
        if message.role == "assistant":
            if previous is not None and previous[0] == "assistant" and previous[1] != "pause_turn":
                raise HistoryError(
                    "roles out of order: two assistant messages in a row", message_index=i
                )
            answered = set()
            turn = _UserTurn()
        elif not message.parts:
            raise HistoryError("a user message needs at least one part", message_index=i)
        else:
            for j, part in enumerate(message.parts):
                if isinstance(part, TextPart) and not valid_unicode(part.text):
                    raise HistoryError(
                        "text is not valid Unicode (a lone surrogate): it cannot be sent",
                        message_index=i,
                        part_index=j,
                    )
        for j, part in enumerate(message.parts):
            _check_part(message, part, i, j, pending, answered)
            if message.role == "user":
                turn.check(part, i, j)
        if pending and message.role == "user":
            call_id, (mi, pi) = next(iter(pending.items()))
            raise HistoryError(
                f"tool call {call_id!r} has no result in the user turn after it",
                message_index=mi,
                part_index=pi,
            )
        previous = (message.role, message.finish_reason)
    if start < len(messages):
        state = _Checked(dict(pending), frozenset(answered), previous, turn.content, turn.note)
        _CHECKED_PREFIX.keep(messages, len(messages), (_CHECKED, model_first), state)


_CHECKED_PREFIX = PerPrefix()
_CHECKED = "validate_history"


@dataclass(frozen=True, slots=True)
class _Checked:
    """`validate_history`'s state after the messages it found sendable: the calls still
    pending, the ones answered in the current turn, the last message's role and finish reason,
    and where its user turn is (`_UserTurn`)."""

    pending: dict[str, tuple[int, int]]
    answered: frozenset[str]
    previous: tuple[str, str | None] | None
    content: bool
    note: tuple[int, int] | None


class _UserTurn:
    """Where a user turn's system notes may go: after something of the user's, with nothing
    but other notes after them until the next assistant message."""

    __slots__ = ("content", "note")

    def __init__(self) -> None:
        self.content = False
        self.note: tuple[int, int] | None = None

    def check(self, part: Part, i: int, j: int) -> None:
        if isinstance(part, SystemNote):
            if not self.content:
                raise HistoryError(
                    "a system note follows the user's turn, and nothing of the user's comes "
                    "before this one (Claude refuses a system message that does not follow a "
                    "user turn)",
                    message_index=i,
                    part_index=j,
                )
            self.note = self.note or (i, j)
            return
        if self.note is not None:
            at = f"messages[{self.note[0]}].parts[{self.note[1]}]"
            raise HistoryError(
                f"a system note ends its user turn, and this part comes after the one at {at}: "
                "put the note last (Claude places a system message after the user turn, before "
                "the assistant turn)",
                message_index=i,
                part_index=j,
            )
        if not isinstance(part, TextPart) or part.text.strip():
            self.content = True


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
    elif isinstance(part, OpaqueBlock | ServerToolCall | ServerToolResult):
        if message.role != "assistant":
            raise HistoryError(
                f"a provider block ({part.type!r}) on a user message: only assistant messages "
                "carry them",
                message_index=i,
                part_index=j,
            )
        if isinstance(part, ServerToolCall) and part.approval:
            if part.id in pending:
                raise HistoryError(
                    f"duplicate tool call id {part.id!r}", message_index=i, part_index=j
                )
            pending[part.id] = (i, j)
    elif isinstance(part, SystemNote) and message.role != "user":
        raise HistoryError(
            "a system note on an assistant message: a note ends a user turn",
            message_index=i,
            part_index=j,
        )
    elif isinstance(part, Image | Document) and message.role != "user":
        raise HistoryError(
            f"{'an image' if part.kind == 'image' else 'a document'} on an assistant message: "
            "only user messages carry media",
            message_index=i,
            part_index=j,
        )


def repair(messages: Sequence[Message]) -> list[Message]:
    """Mend what an interrupted run leaves: answer unanswered tool calls, drop orphaned results.

    The results of an assistant message's tool calls are gathered into the user message right
    after it (first, in call order), every call with no result gets an error result saying it
    was interrupted (a built-in tool call awaiting approval: denied so), and every result that answers no call of the assistant message before it is
    dropped, along with a user message left empty. Messages that need no change are returned as
    they are. Idempotent.
    """
    repaired: list[Message] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        i += 1
        if message.role == "user":  # before any assistant message: results here are orphans
            repaired.extend(_without_results(message))
            continue
        repaired.append(message)
        followers: list[Message] = []
        while i < len(messages) and messages[i].role == "user":
            followers.append(messages[i])
            i += 1
        calls = open_calls(message)
        if not calls:
            for follower in followers:
                repaired.extend(_without_results(follower))
            continue
        found: dict[str, ToolResult] = {}
        for follower in followers:
            for result in follower.tool_results:
                found.setdefault(result.call_id, result)
        results = tuple(found.get(c.id) or _interrupted(c) for c in calls)
        first = followers[0] if followers else Message(role="user", parts=())
        parts = results + tuple(p for p in first.parts if not isinstance(p, ToolResult))
        repaired.append(
            first if parts == first.parts else first.model_copy(update={"parts": parts})
        )
        for follower in followers[1:]:
            repaired.extend(_without_results(follower))
    return repaired


def open_calls(message: Message) -> list[ToolCall | ServerToolCall]:
    """The calls of an assistant message that wait for an answer from this side, in order: its
    tool calls, and the built-in tool calls the provider asks you to approve."""
    return [
        p
        for p in message.parts
        if isinstance(p, ToolCall) or (isinstance(p, ServerToolCall) and p.approval)
    ]


def _interrupted(call: ToolCall | ServerToolCall) -> ToolResult:
    return ToolResult(call_id=call.id, name=call.name, content=INTERRUPTED_RESULT, is_error=True)


def _without_results(message: Message) -> list[Message]:
    """The message without tool results (none at all if nothing else is left)."""
    kept = tuple(p for p in message.parts if not isinstance(p, ToolResult))
    if len(kept) == len(message.parts):
        return [message]
    return [message.model_copy(update={"parts": kept})] if kept else []


def trim_history(max_messages: int) -> Callable[[list[Message]], list[Message]]:
    """A history processor that keeps at most `max_messages` of the newest messages.

    It only cuts just before a user prompt (a user message without tool results, holding more
    than system notes), so every tool call stays with its result, every thinking block with its
    turn and every note with the turn it follows. When even the
    current turn is longer than `max_messages`, the current turn is kept whole.
    """
    if max_messages < 1:
        raise ValueError("max_messages must be at least 1")

    def trim(messages: list[Message]) -> list[Message]:
        if len(messages) <= max_messages:
            return messages
        boundaries = [
            i
            for i, m in enumerate(messages)
            if i > 0 and m.role == "user" and not m.tool_results and len(m.notes) < len(m.parts)
        ]
        if not boundaries:
            return messages
        fitting = [i for i in boundaries if len(messages) - i <= max_messages]
        return messages[fitting[0] if fitting else boundaries[-1] :]

    return trim


def for_scope(
    messages: Sequence[Message],
    scope: str,
    *,
    foreign_reasoning: ForeignReasoning = "drop",
    readable: Callable[[Message], bool] | None = None,
    compatible: Collection[str] = (),
) -> list[Message]:
    """The messages a translator for `scope` may replay natively.

    Assistant messages produced by `scope` are returned untouched. From any other scope (or of
    unknown provenance) thinking is dropped, or sent as plain text with `foreign_reasoning="text"`,
    signatures on text parts and tool calls are removed (a signature is meaningless, and
    rejected, anywhere but where it was issued) and the provider's own blocks are left out:
    opaque blocks, built-in tool calls and results, and the citations of text parts (with the
    tool results that answer an approval request left out with it). `compatible` names other
    scopes whose proofs the provider documents as valid here too (Claude's platforms): their
    messages keep their proofs, but not those blocks, which only ever go back to their own
    scope. `readable`, when given, is the scope's further rule for the messages it would keep:
    one it rejects is treated as foreign (Gemini: a signature is only valid for models of the
    generation that issued it).
    """
    kept: list[Message] = []
    dropped: set[str] = set()  # approval requests left out: their answers go too
    for m in messages:
        if m.role != "assistant":
            if dropped:
                m = _without_answers(m, dropped)
                if not m.parts:
                    continue
            kept.append(m)
        elif (m.scope == scope or m.scope in compatible) and (readable is None or readable(m)):
            kept.append(m if m.scope == scope else _without_blocks(m, dropped))
        else:
            kept.append(_strip_proofs(_without_blocks(m, dropped), foreign_reasoning))
    return kept


_BLOCKS = (OpaqueBlock, ServerToolCall, ServerToolResult)
"""The parts that keep a provider's block whole: only ever replayed to their own scope."""


def _without_blocks(message: Message, dropped: set[str]) -> Message:
    """The message without its provider blocks and citations (the ids of the approval requests
    left out are added to `dropped`)."""
    if not any(
        isinstance(p, _BLOCKS) or (isinstance(p, TextPart) and p.citations) for p in message.parts
    ):
        return message
    parts: list[Part] = []
    for part in message.parts:
        if isinstance(part, _BLOCKS):
            if isinstance(part, ServerToolCall) and part.approval:
                dropped.add(part.id)
        elif isinstance(part, TextPart) and part.citations:
            parts.append(part.model_copy(update={"citations": ()}))
        else:
            parts.append(part)
    return message.model_copy(update={"parts": tuple(parts)})


def _without_answers(message: Message, dropped: set[str]) -> Message:
    parts = tuple(
        p for p in message.parts if not (isinstance(p, ToolResult) and p.call_id in dropped)
    )
    return (
        message if len(parts) == len(message.parts) else message.model_copy(update={"parts": parts})
    )


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
