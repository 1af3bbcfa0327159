"""The assembler folds deltas into exactly the message a non-streamed call returns."""

from __future__ import annotations

import pytest

from thinkagent import (
    Message,
    ServerToolResult,
    TextPart,
    ThinkingBlock,
    ToolCall,
    Usage,
    dump_messages,
    load_messages,
)
from thinkagent.stream import (
    MessageAssembler,
    StreamBuilder,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    model_text,
    tool_arguments,
)
from thinkagent.testing import deltas_for

MESSAGE = Message(
    role="assistant",
    parts=(
        ThinkingBlock.signed("Let me think about this carefully.", "EqQBCkYIBxgC"),
        ThinkingBlock.redacted_payload("EmwKAhgBEgy3va3pzix"),
        TextPart(text="I'll check."),
        ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris", "days": [1, 2]}),
        ThinkingBlock.signed("", "ErUBCkYIBxgC"),
        TextPart(text="", signature="Cs4BAXLI"),
    ),
    scope="anthropic",
    model="claude-sonnet-4-5",
    usage=Usage(input_tokens=10, output_tokens=40, thinking_tokens=20),
    finish_reason="tool_call",
)


def assemble(deltas: list, *, json_arguments: bool = True) -> Message:  # type: ignore[type-arg]
    assembler = MessageAssembler(json_arguments=json_arguments)
    for delta in deltas:
        assembler.add(delta)
    return assembler.message(
        scope="anthropic",
        model="claude-sonnet-4-5",
        usage=MESSAGE.usage,
        finish_reason="tool_call",
    )


@pytest.mark.parametrize("chunk_size", [1, 3, 100])
def test_deltas_assemble_into_the_same_message(chunk_size: int) -> None:
    assert assemble(deltas_for(MESSAGE, chunk_size)) == MESSAGE


def test_interleaved_deltas_fold_by_index() -> None:
    deltas = deltas_for(MESSAGE, 2)
    by_part: dict[int, list[object]] = {}
    for d in deltas:
        by_part.setdefault(d.index, []).append(d)
    # text of part 2 arriving between fragments of part 0 still lands in the right parts
    shuffled = [*by_part[0][:2], *by_part[2], *by_part[0][2:]]
    rest = [d for i in sorted(by_part) if i not in (0, 2) for d in by_part[i]]
    assert assemble(shuffled + rest) == MESSAGE  # type: ignore[arg-type]


def test_text_arguments_are_kept_exactly() -> None:
    deltas = [
        ToolCallDelta(0, id="call_1", name="f"),
        ToolCallDelta(0, args_fragment='{"a":'),
        ToolCallDelta(0, args_fragment=" 1}"),
    ]
    message = assemble(deltas, json_arguments=False)  # type: ignore[arg-type]
    assert message.tool_calls[0].arguments == '{"a": 1}'


def test_unparseable_json_arguments_are_kept_as_text() -> None:
    deltas = [ToolCallDelta(0, id="c", name="f", args_fragment='{"a": ')]
    assert assemble(deltas).tool_calls[0].arguments == '{"a": '  # type: ignore[arg-type]


def test_a_kind_clash_is_an_error() -> None:
    assembler = MessageAssembler()
    assembler.add(TextDelta(0, text="x"))
    with pytest.raises(ValueError, match="part 0"):
        assembler.add(ThinkingDelta(0, text="y"))


def test_partial_never_signs_the_block_being_built() -> None:
    assembler = MessageAssembler()
    for delta in [
        ThinkingDelta(0, text="complete"),
        ThinkingDelta(0, signature="sig-0"),
        TextDelta(1, text="visible"),
        ThinkingDelta(2, text="cut off mid"),
        ThinkingDelta(2, signature="sig-2"),
    ]:
        assembler.add(delta)
    partial = assembler.partial(scope="anthropic", model="m")
    assert partial.parts == (
        ThinkingBlock.signed("complete", "sig-0"),
        TextPart(text="visible"),
        ThinkingBlock.plain("cut off mid"),
    )


def test_partial_drops_thinking_with_nothing_to_show() -> None:
    assembler = MessageAssembler()
    assembler.add(TextDelta(0, text="a"))
    assembler.add(ToolCallDelta(1, args_fragment='{"x"'))  # its id and name never arrived
    assembler.add(ThinkingDelta(2, signature="only-a-signature"))
    assert assembler.partial(scope="p", model="m").parts == (TextPart(text="a"),)


def test_a_part_end_carries_the_complete_part_and_the_message_reuses_it() -> None:
    from thinkagent import PartEnd, StreamBuilder

    parts = StreamBuilder(json_arguments=True)
    parts.thinking("block-0", "Let me check.")
    parts.thinking("block-0", signature="sig")
    end = parts.end("block-0")
    assert end == PartEnd(0, ThinkingBlock.signed("Let me check.", "sig"))
    parts.tool_call("block-1", id="c1", name="get_weather")
    parts.tool_call("block-1", arguments='{"city": ')
    parts.tool_call("block-1", arguments='"Paris"}')
    call = parts.end("block-1")
    assert call is not None and call.index == 1
    assert call.part == ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})
    assert parts.end("never-opened") is None
    message = parts.message(scope="s", model="m")
    assert message.parts == (end.part, call.part)
    assert message.parts[1] is call.part  # built once


def test_a_tool_call_that_never_got_a_name_has_no_end() -> None:
    from thinkagent import StreamBuilder

    parts = StreamBuilder(json_arguments=True)
    parts.tool_call(0, arguments="{}")
    assert parts.end(0) is None


# Issue 21: what a hostile stream sends is kept only as it can be sent back and persisted


@pytest.mark.parametrize(
    "text",
    ['["Paris"]', '"Paris"', "42", '{"city": NaN}', '{"city": Infinity}', '{"c": -Infinity}'],
)
def test_defect_1_arguments_that_are_not_a_plain_json_object_stay_their_text(text: str) -> None:
    builder = StreamBuilder(json_arguments=True)
    builder.tool_call(0, id="toolu_1", name="get_weather")
    builder.tool_call(0, arguments=text[:3])
    builder.tool_call(0, arguments=text[3:])
    end = builder.end(0)  # before: a raw pydantic ValidationError
    assert end is not None and end.part == ToolCall(
        id="toolu_1", name="get_weather", arguments=text
    )
    message = builder.message(scope="anthropic", model="m")
    assert message.parts == (end.part,)
    assert load_messages(dump_messages([message])) == [message]
    with pytest.raises(ValueError, match=r"not a JSON value|must be a JSON object"):
        message.tool_calls[0].arguments_dict()  # the agent answers with an error result


def test_defect_2_escaped_lone_surrogates_in_streamed_arguments_stay_their_text() -> None:
    builder = StreamBuilder(json_arguments=True)
    builder.tool_call(0, id="toolu_1", name="get_weather", arguments='{"city": "\\ud800"}')
    (call,) = builder.message(scope="anthropic", model="m").tool_calls
    assert call.arguments == '{"city": "\\ud800"}'  # ASCII, as it came: persists, replays as {}
    with pytest.raises(ValueError, match="lone surrogate"):
        call.arguments_dict()
    # an escaped pair is a character like any other
    builder = StreamBuilder(json_arguments=True)
    builder.tool_call(0, id="toolu_1", name="get_weather", arguments='{"city": "\\ud83d\\ude00"}')
    assert builder.message(scope="anthropic", model="m").tool_calls[0].arguments == {"city": "😀"}


def test_defect_2_lone_surrogates_in_streamed_text_and_thinking_become_the_replacement_char() -> (
    None
):
    builder = StreamBuilder(json_arguments=False)
    thinking = builder.thinking("t", "we\udfffigh")
    text = builder.text("x", "hi \ud800 there")
    raw = builder.tool_call("c", id="call_1", name="f", arguments='{"city": "\ud800')
    builder.tool_call("c", arguments='"}')
    assert thinking is not None and thinking.text == "we\ufffdigh"  # what a UI is shown...
    assert text is not None and text.text == "hi \ufffd there"
    assert raw is not None and raw.args_fragment == '{"city": "\\ud800'
    message = builder.message(scope="openai", model="m")  # ...is what is kept
    assert message.thinking[0].text == "we\ufffdigh"
    assert message.text == "hi \ufffd there"
    assert message.tool_calls[0].arguments == '{"city": "\\ud800"}'  # text kept, escaped
    assert load_messages(dump_messages([message])) == [message]


def test_defect_2_the_assembler_mends_deltas_the_same_way() -> None:
    message = assemble(
        [
            TextDelta(0, "a\ud800b"),
            ToolCallDelta(1, id="toolu_1", name="f"),
            ToolCallDelta(1, args_fragment='{"x": "\ud83d'),  # a pair split between fragments
            ToolCallDelta(1, args_fragment='\ude00"}'),
        ]
    )
    assert message.text == "a\ufffdb"
    assert message.tool_calls[0].arguments == {"x": "😀"}  # the escaped halves read as the pair


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        ({"city": "Paris", "days": [1, 2.5]}, {"city": "Paris", "days": [1, 2.5]}),
        ({"city": float("nan")}, '{"city": NaN}'),
        ({"t": [float("-inf")]}, '{"t": [-Infinity]}'),
        ({"city": "\ud800"}, '{"city": "\\ud800"}'),
        ({"\udfff": 1}, '{"\\udfff": 1}'),
        (["Paris"], '["Paris"]'),
        ("Paris", "Paris"),
        ('{"a": 1}', {"a": 1}),
    ],
)
def test_tool_arguments_keeps_plain_objects_and_the_text_of_anything_else(
    value: object, kept: object
) -> None:
    assert tool_arguments(value) == kept
    assert model_text("ok") == "ok"


def test_tool_arguments_without_parsing_keeps_the_text_exactly() -> None:
    assert tool_arguments('{"a": NaN}', parse=False) == '{"a": NaN}'
    assert tool_arguments('{"a": "\ud800"}', parse=False) == '{"a": "\\ud800"}'


def test_defect_2_a_lone_surrogate_in_a_streamed_call_id_or_name_is_mended() -> None:
    builder = StreamBuilder(json_arguments=True)
    builder.tool_call(0, id="toolu_\ud800", name="get_\udfffweather", arguments="{}")
    (call,) = builder.message(scope="anthropic", model="m").tool_calls
    assert (call.id, call.name) == ("toolu_\ufffd", "get_\ufffdweather")


def test_a_server_tool_block_arriving_whole_is_mended_like_any_provider_block() -> None:
    builder = StreamBuilder(json_arguments=True)
    hostile = ServerToolResult(
        call_id="srvtoolu_1",
        name="web_search",
        content=[{"title": "Pa\ud800ris", "rank": 1}],
        type="web_search_tool_result",
        data={"type": "web_search_tool_result", "content": [{"title": "Pa\ud800ris"}]},
    )
    end = builder.whole(0, hostile)
    kept = builder.message(scope="anthropic", model="m").parts[0]
    assert end.part == kept
    assert isinstance(kept, ServerToolResult)
    assert kept.data == {"type": "web_search_tool_result", "content": [{"title": "Pa\ufffdris"}]}
    assert kept.content == [{"title": "Pa\ufffdris", "rank": 1}]
    assert load_messages(dump_messages([Message(role="assistant", parts=(kept,))]))[0].parts == (
        kept,
    )
    plain = hostile.model_copy(update={"content": None, "data": {"type": "x"}})
    assert StreamBuilder(json_arguments=True).whole(0, plain).part is plain  # nothing to mend
