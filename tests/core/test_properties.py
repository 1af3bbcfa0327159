"""Property tests: any valid history round-trips through JSON exactly, and the history helpers
keep valid histories valid."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from thinkagent import (
    Message,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
    dump_messages,
    load_messages,
    repair,
    trim_history,
    validate_history,
)
from thinkagent.stream import MessageAssembler
from thinkagent.testing import deltas_for

text = st.text(max_size=40)
proof = st.text(min_size=1, max_size=60)
json_scalar = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(text, json_value, max_size=3)
details = st.none() | st.dictionaries(text, json_value, min_size=1, max_size=2)

thinking = st.one_of(
    st.builds(ThinkingBlock.plain, st.text(min_size=1, max_size=40)),
    st.builds(ThinkingBlock.signed, text, proof),
    st.builds(ThinkingBlock.redacted_payload, proof),
    st.builds(lambda t, s, i: ThinkingBlock.signed(t, s, id=i), text, proof, proof),
)
text_part = st.builds(TextPart, text=text, signature=st.none() | proof, provider_details=details)
usage = st.none() | st.builds(
    Usage,
    input_tokens=st.integers(0, 10**6),
    output_tokens=st.integers(0, 10**6),
    thinking_tokens=st.integers(0, 10**6),
    cache_read_tokens=st.integers(0, 10**6),
)


@st.composite
def assistant_turn(draw: st.DrawFn, call_prefix: str) -> tuple[Message, list[ToolCall]]:
    parts: list[Any] = draw(st.lists(st.one_of(thinking, text_part), max_size=4))
    calls = [
        ToolCall(
            id=f"{call_prefix}-{k}",
            name=draw(st.sampled_from(["lookup", "get_weather"])),
            arguments=draw(arguments | st.text(max_size=20)),
            signature=draw(st.none() | proof),
        )
        for k in range(draw(st.integers(0, 3)))
    ]
    message = Message(
        role="assistant",
        parts=(*parts, *calls),
        scope=draw(
            st.sampled_from(
                ["anthropic", "bedrock", "gemini", "vertex", "openai-responses", "deepseek"]
            )
        ),
        model=draw(text),
        id=draw(st.none() | proof),
        usage=draw(usage),
        finish_reason=draw(st.none() | st.sampled_from(["stop", "tool_call", "length"])),
        provider_details=draw(details),
    )
    return message, calls


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    messages: list[Message] = []
    for turn in range(draw(st.integers(0, 4))):
        messages.append(Message.user(draw(text)))
        for step in range(draw(st.integers(1, 3))):
            message, calls = draw(assistant_turn(f"c{turn}.{step}"))
            messages.append(message)
            if not calls:
                break
            messages.append(
                Message(
                    role="user",
                    parts=tuple(
                        ToolResult(
                            call_id=c.id,
                            name=c.name,
                            content=draw(json_value),
                            is_error=draw(st.booleans()),
                        )
                        for c in calls
                    ),
                )
            )
    return messages


@settings(max_examples=200, deadline=None)
@given(histories())
def test_any_valid_history_round_trips_exactly(history: list[Message]) -> None:
    validate_history(history)
    text = dump_messages(history)
    loaded = load_messages(text)
    assert loaded == history
    assert dump_messages(loaded) == text


@settings(max_examples=100, deadline=None)
@given(histories(), st.integers(1, 12))
def test_repair_and_trim_keep_valid_histories_valid(history: list[Message], limit: int) -> None:
    assert repair(history) == history
    trimmed = trim_history(limit)(history)
    validate_history(trimmed)
    assert trimmed == history[len(history) - len(trimmed) :]


@settings(max_examples=150, deadline=None)
@given(assistant_turn("c"), st.integers(1, 16))
def test_streamed_deltas_assemble_into_the_same_message(
    turn: tuple[Message, list[ToolCall]], chunk_size: int
) -> None:
    message, calls = turn
    json_arguments = not any(isinstance(c.arguments, str) for c in calls)
    if not json_arguments and any(isinstance(c.arguments, dict) for c in calls):
        return  # one stream carries arguments in one form
    assembler = MessageAssembler(json_arguments=json_arguments)
    for delta in deltas_for(message, chunk_size):
        assembler.add(delta)
    rebuilt = assembler.message(
        scope=message.scope or "",
        model=message.model or "",
        usage=message.usage,
        finish_reason=message.finish_reason,
        id=message.id,
        provider_details=message.provider_details,
    )
    assert rebuilt == message
