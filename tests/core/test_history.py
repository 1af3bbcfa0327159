"""validate_history, repair, trim_history and the replay policy."""

from __future__ import annotations

import pytest

from thinkagent import (
    HistoryError,
    Message,
    OpaqueBlock,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    dump_messages,
    load_messages,
    repair,
    trim_history,
    validate_history,
)
from thinkagent.history import INTERRUPTED_RESULT, for_scope


def assistant(*parts: object, scope: str = "anthropic") -> Message:
    return Message(role="assistant", parts=tuple(parts), scope=scope, model="m")  # type: ignore[arg-type]


def call(call_id: str, name: str = "lookup") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments={})


def result(call_id: str, name: str = "lookup") -> ToolResult:
    return ToolResult(call_id=call_id, name=name, content="ok")


def results(*call_ids: str) -> Message:
    return Message(role="user", parts=tuple(result(c) for c in call_ids))


def test_a_valid_tool_loop_passes() -> None:
    validate_history(
        [
            Message.user("q"),
            assistant(ThinkingBlock.signed("t", "s"), call("a"), call("b")),
            results("a", "b"),
            assistant(TextPart(text="done")),
            Message.user("again"),
            assistant(call("c")),  # the last message may have calls pending
        ]
    )


def test_empty_history_is_valid() -> None:
    validate_history([])


@pytest.mark.parametrize(
    ("history", "where", "reason"),
    [
        (
            [Message(role="user", parts=(TextPart(text="q"), ThinkingBlock.signed("t", "s")))],
            (0, 1),
            "thinking on a user message",
        ),
        ([assistant(TextPart(text="hi"))], (0, None), "starts with a user message"),
        (
            [Message.user("q"), assistant(TextPart(text="a")), assistant(TextPart(text="b"))],
            (2, None),
            "two assistant messages in a row",
        ),
        (
            [Message.user("q"), assistant(TextPart(text="a")), results("zz")],
            (2, 0),
            "matches no tool call",
        ),
        (
            [Message.user("q"), assistant(call("a")), results("a"), results("a")],
            (3, 0),
            "answered twice",
        ),
        (
            [Message.user("q"), assistant(call("a"), call("b")), results("a")],
            (1, 1),
            "'b' has no result",
        ),
        (
            [
                Message.user("q"),
                assistant(call("a")),
                Message.user("next"),
                assistant(TextPart(text="x")),
            ],
            (1, 0),
            "no result in the user turn after it",
        ),
        (
            [Message.user("q"), assistant(call("a"), call("a"))],
            (1, 1),
            "duplicate tool call id",
        ),
        (
            [Message(role="user", parts=(call("a"),))],
            (0, 0),
            "tool call on a user message",
        ),
        (
            [Message.user("q"), assistant(result("a"))],
            (1, 0),
            "tool result on an assistant message",
        ),
        ([Message(role="user", parts=())], (0, None), "at least one part"),
    ],
)
def test_invalid_histories_name_message_and_part(
    history: list[Message], where: tuple[int, int | None], reason: str
) -> None:
    with pytest.raises(HistoryError, match=reason) as info:
        validate_history(history)
    assert (info.value.message_index, info.value.part_index) == where


def test_an_invalid_block_smuggled_past_construction_is_caught() -> None:
    bad = ThinkingBlock.model_construct(text="visible", redacted="payload", signature=None)
    history = [
        Message.user("q"),
        Message.model_construct(role="assistant", parts=(TextPart(text="a"), bad)),
    ]
    with pytest.raises(HistoryError, match="both text and a redacted payload") as info:
        validate_history(history)
    assert (info.value.message_index, info.value.part_index) == (1, 1)
    assert "messages[1].parts[1]" in str(info.value)


def test_repair_answers_unanswered_calls_and_drops_orphans() -> None:
    history = [
        Message.user("q"),
        assistant(call("a"), call("b")),
        Message(role="user", parts=(result("a"), result("ghost"), TextPart(text="and?"))),
        assistant(call("c")),
        results("nobody"),
    ]
    repaired = repair(history)
    validate_history(repaired)
    assert [r.call_id for r in repaired[2].tool_results] == ["a", "b"]
    assert repaired[2].parts[-1] == TextPart(text="and?")
    interrupted = repaired[2].tool_results[1]
    assert interrupted.is_error and interrupted.content == INTERRUPTED_RESULT
    assert [r.call_id for r in repaired[-1].tool_results] == ["c"]
    assert len(repaired) == 5  # the orphan-only message was dropped, a results turn was added
    assert repair(repaired) == repaired


def test_repair_answers_pending_calls_of_the_last_message() -> None:
    history = [Message.user("q"), assistant(ThinkingBlock.signed("t", "s"), call("a"))]
    repaired = repair(history)
    assert repaired[:2] == history
    assert repaired[2].tool_results[0].call_id == "a"
    assert repair(repaired) == repaired


def test_results_must_come_in_the_user_message_right_after_the_calls() -> None:
    history = [Message.user("q"), assistant(call("a")), Message.user("and?"), results("a")]
    with pytest.raises(HistoryError, match="'a' has no result in the user turn after it") as info:
        validate_history(history)
    assert (info.value.message_index, info.value.part_index) == (1, 0)
    repaired = repair(history)
    validate_history(repaired)
    assert repaired == [
        Message.user("q"),
        assistant(call("a")),
        Message(role="user", parts=(result("a"), TextPart(text="and?"))),
    ]


def test_repair_leaves_a_valid_history_alone() -> None:
    history = [Message.user("q"), assistant(call("a")), results("a"), assistant(TextPart(text="x"))]
    assert repair(history) == history


def turn(n: int, *, tools: int) -> list[Message]:
    messages = [Message.user(f"question {n}")]
    for k in range(tools):
        messages += [
            assistant(ThinkingBlock.signed(f"t{n}{k}", "s"), call(f"c{n}{k}")),
            results(f"c{n}{k}"),
        ]
    return [*messages, assistant(TextPart(text=f"answer {n}"))]


def test_trim_history_cuts_only_before_a_user_prompt() -> None:
    history = turn(1, tools=1) + turn(2, tools=2) + turn(3, tools=0)  # 4 + 6 + 2 messages
    trim = trim_history(8)
    trimmed = trim(history)
    assert trimmed == history[4:]  # turns 2 and 3: 8 messages
    validate_history(trimmed)
    assert trim_history(7)(history) == history[10:]  # only turn 3 fits
    assert trim_history(100)(history) == history


def test_trim_history_keeps_the_current_turn_whole() -> None:
    history = turn(1, tools=0) + turn(2, tools=3)  # the last turn has 8 messages
    trimmed = trim_history(3)(history)
    assert trimmed == history[2:]
    validate_history(trimmed)


def test_trim_history_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        trim_history(0)


def test_for_scope_keeps_own_proofs_and_drops_foreign_ones() -> None:
    own = assistant(ThinkingBlock.signed("mine", "s1"), call("a"), scope="anthropic")
    foreign = Message(
        role="assistant",
        parts=(
            ThinkingBlock.signed("theirs", "g1"),
            ThinkingBlock.redacted_payload("opaque"),
            TextPart(text="hi", signature="g2"),
            ToolCall(id="b", name="lookup", arguments={}, signature="g3"),
        ),
        scope="gemini",
        model="gemini-3",
    )
    history = [Message.user("q"), own, results("a"), foreign]
    dropped = for_scope(history, "anthropic")
    assert dropped[1] is own
    assert dropped[3].parts == (
        TextPart(text="hi"),
        ToolCall(id="b", name="lookup", arguments={}),
    )
    assert dropped[3].scope == "gemini"
    as_text = for_scope(history, "anthropic", foreign_reasoning="text")
    assert as_text[3].parts[0] == TextPart(text="<thinking>\ntheirs\n</thinking>")
    assert len(as_text[3].parts) == 3  # the redacted payload cannot become text


COMPACTION = OpaqueBlock.of({"type": "compaction", "content": "The user asked about Paris."})


def test_opaque_blocks_go_back_to_their_own_scope_only() -> None:
    own = assistant(COMPACTION, ThinkingBlock.signed("mine", "s1"), call("a"), scope="anthropic")
    history = [Message.user("q"), own, results("a")]
    assert for_scope(history, "anthropic")[1] is own
    moved = for_scope(history, "bedrock", compatible={"anthropic"})[1]
    assert moved.parts == (ThinkingBlock.signed("mine", "s1"), call("a"))  # proofs kept
    foreign = for_scope(history, "gemini")[1]
    assert foreign.parts == (call("a"),)


def test_compatible_scopes_still_answer_to_readable() -> None:
    own = assistant(ThinkingBlock.signed("mine", "s1"), call("a"), scope="anthropic")
    history = [Message.user("q"), own, results("a")]
    unread = for_scope(history, "bedrock", compatible={"anthropic"}, readable=lambda m: False)
    assert unread[1].parts == (call("a"),)


def test_opaque_blocks_are_validated_and_persisted_exactly() -> None:
    history = [Message.user("q"), assistant(COMPACTION, TextPart(text="ok"))]
    validate_history(history)
    text = dump_messages(history)
    assert load_messages(text) == history and dump_messages(load_messages(text)) == text
    with pytest.raises(HistoryError, match=r"messages\[0\]\.parts\[1\]: a provider block"):
        validate_history([Message(role="user", parts=(TextPart(text="q"), COMPACTION))])
    assert OpaqueBlock.of({"content": "no type"}).type == "unknown"
