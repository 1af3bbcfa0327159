"""System notes on the wires that have no Claude mid-conversation system message.

A `SystemNote` ends a user turn. Claude takes it as a system message in place, with its tool
changes and its `clear_at` (`claude/_rules.py`). Every other wire sends the request's
instructions and tools whole on each request, so there a note says its text, in the wire's own
way: as a system (or developer) message where the API has one after the first turn, else as
the user's text, tagged (`note_text`), with a `system_note_as_text` warning. What only Claude
understands is honoured here, once for every adapter:

- `clear_at="next_user_message"`: the note is shown for the turn it ends (until the next user
  prompt) and left out of later requests; the history keeps it.
- `instructions=True` (the agent's record of its instructions, on Claude): left out, since the
  request sends its own instructions whole.
- `add_tools` / `remove_tools`: the request's tools are the conversation's tools from here on.
  A note of the current turn whose changes they do not match is a `HistoryError` before
  sending (the model would be offered a tool the note withdrew, or lack one it added); a note
  of an earlier turn is history (the run's tools may have changed since, on a wire that has
  no notes).

Pure Python: no vendor SDK is imported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

from .._memo import PerPrefix
from ..errors import HistoryError
from ..messages import Message, SystemNote, TextPart, ToolResult
from ..stream import WarningEvent
from .base import ToolDefinition

__all__ = [
    "NOTES_AS_TEXT",
    "check_note_tools",
    "current_prompt",
    "is_prompt",
    "note_text",
    "noted_warning",
    "notes_as_text",
    "notes_as_text_warning",
    "same_turn",
    "shown_notes",
]

NOTES_AS_TEXT = "system_note_as_text"
"""The warning code of a request whose system notes went as the user's text."""


def note_text(note: SystemNote) -> TextPart:
    """A note's text as the user's, tagged so the model reads it as an instruction."""
    return TextPart(text=f"<system_note>\n{note.text}\n</system_note>")


def current_prompt(messages: Sequence[Message]) -> int:
    """The index of the last user prompt (a user message holding more than tool results and
    notes): the current turn runs from there. -1 when there is none."""
    for index in range(len(messages) - 1, -1, -1):
        if is_prompt(messages[index]):
            return index
    return -1


def is_prompt(message: Message) -> bool:
    """Whether `message` is a user prompt: a user message holding more than tool results and
    notes (a turn starts there)."""
    return message.role == "user" and any(
        not isinstance(p, ToolResult | SystemNote) for p in message.parts
    )


def shown_notes(message: Message, index: int, prompt: int) -> list[SystemNote]:
    """The notes of `message` (at `index`, the current turn starting at `prompt`) the model
    is shown: those with text, except the agent's record of its instructions and, once their
    turn is over, the turn-scoped ones."""
    over = index < prompt
    return [
        note
        for note in message.notes
        if note.text
        and not note.instructions
        and not (over and note.clear_at == "next_user_message")
    ]


def notes_as_text(message: Message, index: int, prompt: int) -> Message:
    """A user message with its shown notes as the user's text (`note_text`), in their place
    at its end, and its other notes left out."""
    if not message.notes:
        return message
    kept = [p for p in message.parts if not isinstance(p, SystemNote)]
    texts = [note_text(note) for note in shown_notes(message, index, prompt)]
    return message.model_copy(update={"parts": (*kept, *texts)})


def notes_as_text_warning(
    messages: Sequence[Message], *, why: str, scope: str
) -> WarningEvent | None:
    """The `system_note_as_text` warning for a request whose wire sends notes as the user's
    text (`why` says why), naming the messages whose notes went so; None when none did. A
    conversation's later requests look at their new messages only (`PerPrefix`)."""
    prompt = current_prompt(messages)
    start, kept = _SHOWN.resume(messages, NOTES_AS_TEXT, same_turn(prompt))
    shown = cast("_Shown", kept).indexes if kept else ()
    shown += tuple(
        i
        for i in range(start, len(messages))
        if messages[i].role == "user" and shown_notes(messages[i], i, prompt)
    )
    _SHOWN.keep_ends(
        messages,
        start,
        NOTES_AS_TEXT,
        lambda n: _Shown(tuple(i for i in shown if i < n), prompt),
        prompt,
    )
    return noted_warning(shown, why=why, scope=scope)


def noted_warning(noted: Sequence[int], *, why: str, scope: str) -> WarningEvent | None:
    """`notes_as_text_warning` for the messages (by index) whose notes went as text, found by
    the pass that sent them."""
    if not noted:
        return None
    named = ", ".join(f"messages[{i}]" for i in noted)
    return WarningEvent(
        code=NOTES_AS_TEXT,
        message=(
            f"{why}: the system notes of {named} went as the user's text; the history keeps them"
        ),
        scope=scope,
    )


class _Shown(NamedTuple):
    """The messages of a conversation's first ones whose notes went as text, and where the
    current turn started then (`notes_as_text_warning`)."""

    indexes: tuple[int, ...]
    prompt: int


_SHOWN = PerPrefix()


def same_turn(prompt: int) -> Callable[[int, Any], bool]:
    """Whether a state a pass kept for `n` messages, found with the current turn starting at
    its `prompt`, holds for a request whose turn starts at `prompt`: each of the messages is on
    the same side of both (a turn-scoped note is shown in its turn only; `PerPrefix`)."""

    def usable(n: int, state: Any) -> bool:
        then = cast("int", state.prompt)
        return then == prompt or n <= min(then, prompt)

    return usable


def check_note_tools(
    messages: Sequence[Message], tools: Sequence[ToolDefinition], *, scope: str
) -> None:
    """Raise `HistoryError` for a note of the current turn whose tool changes the request's
    `tools` do not match: `scope` sends its tools whole, and has no tool change to say."""
    offered = {tool.name for tool in tools}
    for i in range(max(current_prompt(messages), 0), len(messages)):
        message = messages[i]
        if message.role != "user":
            continue
        for j, part in enumerate(message.parts):
            if not isinstance(part, SystemNote):
                continue
            removed = next((name for name in part.remove_tools if name in offered), None)
            if removed is not None:
                raise HistoryError(
                    f"this system note removes the tool {removed!r}, which the request still "
                    f"offers: {scope} has no mid-conversation tool changes (Claude's), so the "
                    "model could still call it; take the tool out of the run's tools instead",
                    message_index=i,
                    part_index=j,
                )
            added = next((name for name in part.add_tools if name not in offered), None)
            if added is not None:
                raise HistoryError(
                    f"this system note adds the tool {added!r}, which the request does not "
                    f"offer: {scope} has no mid-conversation tool changes (Claude's); give the "
                    "run the tool instead",
                    message_index=i,
                    part_index=j,
                )
