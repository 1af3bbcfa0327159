"""The shared rules of a system note on a wire without Claude's system messages
(`thinkagent.providers._system_notes`): which notes a request shows, their text, the warning,
and the check of their tool changes against the request's tools."""

from __future__ import annotations

import pytest

from thinkagent import HistoryError, Message, SystemNote, TextPart, ToolCall, ToolResult
from thinkagent.providers._system_notes import (
    check_note_tools,
    current_prompt,
    notes_as_text,
    notes_as_text_warning,
    shown_notes,
)
from thinkagent.providers.base import ToolDefinition

SCOPED = SystemNote(text="Only this turn.", clear_at="next_user_message")
KEPT = SystemNote(text="From now on, be brief.")
RECORD = SystemNote(text="Today is Monday.", instructions=True)
TOOLS_ONLY = SystemNote(add_tools=("get_time",))
WEATHER = ToolDefinition("get_weather", "Weather.", {"type": "object"})
TIME = ToolDefinition("get_time", "Time.", {"type": "object"})


def user(*parts: object) -> Message:
    return Message(role="user", parts=tuple(parts))  # type: ignore[arg-type]


def answer(text: str = "Ok.") -> Message:
    return Message(role="assistant", parts=(TextPart(text=text),))


def calling() -> Message:
    return Message(role="assistant", parts=(ToolCall(id="c1", name="get_weather", arguments="{}"),))


RESULT = ToolResult(call_id="c1", name="get_weather", content="sunny")


def test_the_current_turn_starts_at_the_last_prompt_not_at_results_or_notes() -> None:
    history = [user(TextPart(text="Hi"), SCOPED), calling(), user(RESULT, KEPT), answer()]
    assert current_prompt(history) == 0
    assert current_prompt([*history, user(TextPart(text="Next"))]) == 4
    assert current_prompt([answer()]) == -1


def test_a_request_shows_the_notes_with_text_but_records_and_ended_turn_scoped_ones() -> None:
    message = user(TextPart(text="Hi"), SCOPED, KEPT, RECORD, TOOLS_ONLY)
    assert shown_notes(message, 0, prompt=0) == [SCOPED, KEPT]
    assert shown_notes(message, 0, prompt=2) == [KEPT]  # a later prompt ended its turn


def test_notes_as_text_end_the_message_and_the_warning_names_where() -> None:
    history = [user(TextPart(text="Hi"), KEPT, RECORD), answer(), user(TextPart(text="Bye"))]
    sent = notes_as_text(history[0], 0, current_prompt(history))
    assert sent.parts == (
        TextPart(text="Hi"),
        TextPart(text=f"<system_note>\n{KEPT.text}\n</system_note>"),
    )
    assert history[0].parts[-1] == RECORD  # the history keeps the notes
    warning = notes_as_text_warning(history, why="no system role here", scope="somewhere")
    assert warning is not None and warning.code == "system_note_as_text"
    assert warning.message.startswith("no system role here: the system notes of messages[0] ")
    assert warning.scope == "somewhere"
    quiet = [user(TextPart(text="Hi"), RECORD), answer()]
    assert notes_as_text_warning(quiet, why="x", scope="y") is None


def test_tool_changes_of_the_current_turn_must_match_the_requests_tools() -> None:
    removes = user(TextPart(text="Hi"), SystemNote(remove_tools=("get_time",)))
    check_note_tools([removes], [WEATHER], scope="s")
    with pytest.raises(HistoryError, match="removes the tool 'get_time'") as caught:
        check_note_tools([removes], [WEATHER, TIME], scope="openai")
    assert (caught.value.message_index, caught.value.part_index) == (0, 1)
    adds = user(TextPart(text="Hi"), TOOLS_ONLY)
    check_note_tools([adds], [WEATHER, TIME], scope="s")
    with pytest.raises(HistoryError, match="adds the tool 'get_time'"):
        check_note_tools([adds], [WEATHER], scope="s")
    # an earlier turn's note is history; one on the current turn's tool results is checked
    check_note_tools([removes, answer(), user(TextPart(text="Next"))], [WEATHER, TIME], scope="s")
    loop = [
        user(TextPart(text="Hi")),
        calling(),
        user(RESULT, SystemNote(remove_tools=("get_weather",))),
    ]
    with pytest.raises(HistoryError) as caught:
        check_note_tools(loop, [WEATHER], scope="s")
    assert (caught.value.message_index, caught.value.part_index) == (2, 1)
