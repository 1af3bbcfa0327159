"""What is derived once per message (`PerMessage`) behaves as if it were derived every time: the
history check resumes after the longest prefix it checked before, and finds every problem it
would find from the start, naming the same message and part; entries go with their messages."""

from __future__ import annotations

import gc

import pytest

from thinkagent import (
    HistoryError,
    Message,
    SystemNote,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
)
from thinkagent._memo import PerMessage, PerPrefix
from thinkagent.history import validate_history
from thinkagent.providers._system_notes import notes_as_text_warning


def loop(n: int) -> list[Message]:
    """`n` question / tool call / result / answer loops."""
    out: list[Message] = []
    for k in range(n):
        out += [
            Message.user(f"question {k}"),
            Message(
                role="assistant",
                parts=(
                    ThinkingBlock.signed("why", f"sig-{k}"),
                    ToolCall(id=f"call-{k}", name="f", arguments={}),
                ),
                scope="s",
            ),
            Message.user_results([ToolResult(call_id=f"call-{k}", name="f", content="ok")]),
            Message(role="assistant", parts=(TextPart(text=f"answer {k}"),), scope="s"),
        ]
    return out


def error_of(messages: list[Message], **kw: bool) -> tuple[str, int, int | None] | None:
    try:
        validate_history(messages, **kw)
    except HistoryError as exc:
        return (str(exc), exc.message_index, exc.part_index)
    return None


TAILS = {
    "two assistant messages in a row": [
        Message(role="assistant", parts=(TextPart(text="twice"),), scope="s")
    ],
    "a result for no call": [
        Message.user_results([ToolResult(call_id="nobody", name="f", content="x")])
    ],
    "a call left unanswered": [
        Message.user("next"),
        Message(role="assistant", parts=(ToolCall(id="c", name="f", arguments={}),), scope="s"),
        Message.user("no results"),
    ],
}


@pytest.mark.parametrize("tail", TAILS.values(), ids=list(TAILS))
def test_a_history_checked_before_still_refuses_what_follows_it(tail: list[Message]) -> None:
    history = loop(3)
    validate_history(history)  # its state kept with each message
    extended = [*history, *tail]
    fresh = [m.model_copy() for m in extended]  # the same history, never checked
    assert error_of(extended) == error_of(fresh) is not None


def test_the_same_messages_in_another_order_are_checked_again() -> None:
    history = loop(2)
    validate_history(history)
    swapped = [*history[4:], *history[:4]]
    validate_history(swapped)  # both halves are valid conversations
    broken = [history[0], history[2], history[1], history[3]]  # a result before its call
    assert error_of(broken) == error_of([m.model_copy() for m in broken]) is not None


def test_model_first_is_remembered_apart() -> None:
    opening = [Message(role="assistant", parts=(TextPart(text="hi"),), scope="s")]
    validate_history(opening, model_first=True)
    assert error_of(opening) is not None


def test_entries_go_with_their_messages() -> None:
    kept = PerMessage()
    messages = loop(5)
    for message in messages:
        assert kept.get(message, "k", len, message.parts) == len(message.parts)
        assert kept.get(message, "k", lambda: -1) == len(message.parts)  # derived once
    assert len(kept) == 20
    del messages, message
    gc.collect()
    assert len(kept) == 0


def test_a_prefix_is_resumed_only_from_the_same_messages() -> None:
    kept = PerPrefix()
    history = loop(3)
    kept.keep(history, 8, "k", "state after 8")
    assert kept.resume(history, "k") == (8, "state after 8")
    assert kept.resume([*history, *loop(1)], "k") == (8, "state after 8")
    assert kept.resume(history, "other kind") == (0, None)
    assert kept.resume(history[:7], "k") == (0, None)  # shorter than the prefix
    copied = [history[0], *(m.model_copy() for m in history[1:])]  # equal, not the same
    assert kept.resume(copied, "k") == (0, None)


def test_the_last_prefixes_are_kept_and_the_longest_that_serves_is_resumed() -> None:
    kept = PerPrefix()
    history = loop(4)
    kept.keep(history, 4, "k", "after 4")  # where a run's prompt starts
    kept.keep(history, 5, "k", "after 5")  # its first request
    kept.keep(history, 7, "k", "after 7")  # its second request
    assert kept.resume(history, "k") == (7, "after 7")
    branch = [*history[:4], Message.user("another question")]  # the next run, from 4
    assert kept.resume(branch, "k") == (4, "after 4")
    assert kept.resume(history, "k", lambda n, state: n < 7) == (5, "after 5")
    kept.keep(history, 16, "k", "after 16")  # the one kept first gives way
    assert kept.resume(branch, "k") == (0, None)
    kept.keep(history, 4, "k", "again after 4")
    kept.keep(history, 7, "k", "again after 7")  # in place of the one of the same length
    assert kept.resume(history, "k") == (16, "after 16")
    assert kept.resume(history, "k", lambda n, state: n < 16) == (7, "again after 7")
    assert kept.resume(branch, "k") == (4, "again after 4")


def test_a_kept_prefix_goes_with_its_conversation() -> None:
    kept = PerPrefix()
    history = loop(2)
    kept.keep(history, len(history), "k", "state")
    del history
    gc.collect()
    assert len(kept._kept) == 0  # pyright: ignore[reportPrivateUsage]


def test_notes_shown_as_text_are_judged_again_when_the_turn_moves() -> None:
    note = SystemNote(text="Answer in French.", clear_at="next_user_message")
    asked = Message(role="user", parts=(TextPart(text="Paris?"), note))
    answer = Message(role="assistant", parts=(TextPart(text="Il fait beau."),), scope="s")

    def named(messages: list[Message]) -> str | None:
        warning = notes_as_text_warning(messages, why="no notes here", scope="s")
        return warning.message if warning is not None else None

    assert named([asked]) is not None  # shown in its own turn
    later = [asked, answer, Message.user("Rome?")]
    assert named(later) is None  # its turn is over
    assert named(later) == named([m.model_copy() for m in later])
    again = [*later, answer.model_copy(), Message.user("Oslo?")]
    assert named(again) is None


def test_any_tests_the_new_messages_only_and_remembers_what_it_found() -> None:
    kept = PerPrefix()
    history = loop(3)
    tested: list[int] = []

    def test(message: Message) -> bool:
        tested.append(history.index(message) if message in history else -1)
        return message.role == "assistant" and any(
            isinstance(p, TextPart) and p.text == "answer 1" for p in message.parts
        )

    assert kept.any(history[:4], "k", test, prompt=0) is False
    tested.clear()
    assert kept.any(history, "k", test, prompt=8) is True
    assert min(tested) == 4  # the first four were tested before
    tested.clear()
    assert kept.any([*history, *loop(1)], "k", test, prompt=12) is True
    assert tested == []  # found in the prefix kept


def test_a_history_holding_its_first_message_again_is_not_kept() -> None:
    kept = PerPrefix()
    history = loop(2)
    again = [*history, history[0]]  # the same question, the same object
    kept.keep(again, len(again), "k", "state")
    assert kept.resume(again, "k") == (0, None)
    del history, again
    gc.collect()
    assert len(kept._kept) == 0  # pyright: ignore[reportPrivateUsage]
