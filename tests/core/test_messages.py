"""The shared schema: block kinds, message accessors, JSON form."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from thinkagent import (
    HistoryError,
    Message,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
    dump_messages,
    load_messages,
)


def test_three_kinds_of_block() -> None:
    plain = ThinkingBlock.plain("step one")
    signed = ThinkingBlock.signed("step two", "c2lnbmF0dXJl")
    redacted = ThinkingBlock.redacted_payload("EmwKAhgBEgy3va3pzix")
    assert (plain.is_signed, plain.is_redacted) == (False, False)
    assert (signed.is_signed, signed.is_redacted) == (True, False)
    assert (redacted.is_signed, redacted.is_redacted) == (False, True)


def test_signed_block_with_empty_text_is_valid() -> None:
    block = ThinkingBlock.signed("", "EqQBCkYIBxgCKkB")
    assert block.text == "" and block.signature == "EqQBCkYIBxgCKkB"


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({}, "needs text, a signature or a redacted payload"),
        ({"text": ""}, "needs text, a signature or a redacted payload"),
        ({"text": "a", "redacted": "b"}, "both text and a redacted payload"),
        ({"redacted": "b", "signature": "s"}, "redacted thinking block cannot carry a signature"),
    ],
)
def test_invalid_blocks_are_rejected(fields: dict[str, str], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        ThinkingBlock(**fields)


def test_blocks_are_immutable_and_strict() -> None:
    block = ThinkingBlock.plain("x")
    with pytest.raises(ValidationError):
        block.text = "y"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="Extra inputs"):
        ThinkingBlock(text="x", signatur="typo")  # type: ignore[call-arg]


def test_message_accessors_keep_provider_order() -> None:
    parts = (
        ThinkingBlock.signed("first", "s1"),
        TextPart(text="Let me check. "),
        ThinkingBlock.redacted_payload("opaque"),
        ToolCall(id="c1", name="lookup", arguments={"q": "x"}),
        TextPart(text="Done."),
        ToolCall(id="c2", name="lookup", arguments='{"q": "y"}'),
    )
    message = Message(role="assistant", parts=parts, scope="anthropic", model="claude")
    assert message.parts == parts
    assert [b.text or b.redacted for b in message.thinking] == ["first", "opaque"]
    assert message.text == "Let me check. Done."
    assert [c.id for c in message.tool_calls] == ["c1", "c2"]
    assert message.tool_calls[1].arguments_dict() == {"q": "y"}


def test_tool_call_arguments_must_be_an_object() -> None:
    assert ToolCall(id="c", name="n", arguments="").arguments_dict() == {}
    with pytest.raises(ValueError, match="JSON object"):
        ToolCall(id="c", name="n", arguments="[1, 2]").arguments_dict()


def test_tool_result_content_text() -> None:
    assert ToolResult(call_id="c", name="n", content="plain").content_text() == "plain"
    assert ToolResult(call_id="c", name="n", content={"a": [1, "é"]}).content_text() == (
        '{"a": [1, "é"]}'
    )


def test_usage_adds_up() -> None:
    total = Usage(input_tokens=3, output_tokens=5, thinking_tokens=2) + Usage(
        input_tokens=1, output_tokens=1, cache_read_tokens=7, requests=1
    )
    assert total == Usage(
        input_tokens=4, output_tokens=6, thinking_tokens=2, cache_read_tokens=7, requests=1
    )
    assert total.total_tokens == 10


def test_text_only_message_json_is_pinned() -> None:
    history = [
        Message.user("What is 2 + 2?"),
        Message(
            role="assistant",
            parts=(TextPart(text="4"),),
            scope="openai",
            model="gpt-5",
            usage=Usage(input_tokens=12, output_tokens=1),
            finish_reason="stop",
        ),
    ]
    assert dump_messages(history) == (
        '[{"role":"user","parts":[{"kind":"text","text":"What is 2 + 2?"}]},'
        '{"role":"assistant","parts":[{"kind":"text","text":"4"}],"provider":"openai",'
        '"model":"gpt-5","usage":{"input_tokens":12,"output_tokens":1},"finish_reason":"stop"}]'
    )
    assert "thinking" not in dump_messages(history)
    assert "signature" not in dump_messages(history)


def test_every_proof_round_trips_byte_exact() -> None:
    history = [
        Message.user("q"),
        Message(
            role="assistant",
            parts=(
                ThinkingBlock.signed("reasoning\n\twith\u00a0odd \u2028 chars 🙂", "Eq+/=="),
                ThinkingBlock.redacted_payload("EmwKAhgBEgy3va3pzix/0jOqQ=="),
                ThinkingBlock.signed("", "ErUBCkYIBxgC"),
                TextPart(text="", signature="Cs4BAXLI2nw_-"),
                ToolCall(id="f1", name="get", arguments={"n": 1.5, "x": None}, signature="Cq0Q"),
                ThinkingBlock.signed("summary", "gAAAAABo", id="rs_123"),
            ),
            scope="gemini",
            model="gemini-3-pro-preview",
            usage=Usage(input_tokens=1, output_tokens=9, thinking_tokens=7),
            finish_reason="tool_call",
            provider_details={"raw_finish_reason": "STOP"},
        ),
        Message(
            role="user",
            parts=(ToolResult(call_id="f1", name="get", content={"ok": True}, is_error=True),),
        ),
    ]
    text = dump_messages(history)
    loaded = load_messages(text)
    assert loaded == history
    assert dump_messages(loaded) == text
    assert load_messages(text.encode()) == history


def test_load_names_the_message_and_part_of_an_invalid_block() -> None:
    text = (
        '[{"role":"user","parts":[{"kind":"text","text":"q"}]},'
        '{"role":"assistant","parts":[{"kind":"text","text":"a"},'
        '{"kind":"thinking","text":"t","redacted":"r"}]}]'
    )
    with pytest.raises(HistoryError) as info:
        load_messages(text)
    assert (info.value.message_index, info.value.part_index) == (1, 1)
    assert "messages[1].parts[1]" in str(info.value)
    assert "both text and a redacted payload" in str(info.value)


def test_load_reports_a_malformed_message() -> None:
    with pytest.raises(HistoryError, match=r"messages\[0\]: role"):
        load_messages('[{"role":"robot","parts":[]}]')
