"""Hostile input, generated: whatever text `load_messages` is given it returns a history that
dumps back to itself or raises `HistoryError`; whatever text a model sends as a tool call's
arguments, the run goes on (the tool runs, or the model gets an error result) and its history
persists losslessly. Never a raw exception."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thinkagent import (
    Agent,
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
from thinkagent.testing import ScriptedModel

SAMPLE = [
    Message.user("What's the weather in Paris?"),
    Message(
        role="assistant",
        parts=(
            ThinkingBlock.signed("Call the tool.", "c2lnbmF0dXJl"),
            ThinkingBlock.redacted_payload("cmVkYWN0ZWQ="),
            ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),
        ),
        scope="anthropic",
        model="claude-sonnet-4-5",
        usage=Usage(input_tokens=10, output_tokens=5),
        finish_reason="tool_call",
    ),
    Message.user_results([ToolResult(call_id="c1", name="get_weather", content="sunny")]),
    Message(role="assistant", parts=(TextPart(text="Sunny."),), scope="anthropic"),
]
DUMP = dump_messages(SAMPLE)

json_scalar = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
json_value = st.recursive(
    json_scalar,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def survives_loading(text: str | bytes) -> None:
    """Loaded and dumped back losslessly, or refused with a `HistoryError`."""
    try:
        messages = load_messages(text)
    except HistoryError:
        return
    assert load_messages(dump_messages(messages)) == messages


@given(st.data())
@settings(max_examples=300, deadline=None)
def test_a_persisted_history_edited_anywhere_loads_or_is_refused(data: st.DataObject) -> None:
    text = DUMP
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text)))
        edit = data.draw(st.sampled_from(["delete", "replace", "insert"]))
        piece = data.draw(st.text(min_size=1, max_size=4))
        if edit == "delete":
            text = text[:at] + text[at + len(piece) :]
        elif edit == "replace":
            text = text[:at] + piece + text[at + len(piece) :]
        else:
            text = text[:at] + piece + text[at:]
    survives_loading(text)


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():  # pyright: ignore[reportUnknownVariableType]
            found += _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):  # pyright: ignore[reportUnknownVariableType]
            found += _paths(value, (*path, index))
    return found


@given(st.data(), json_value)
@settings(max_examples=300, deadline=None)
def test_a_persisted_history_with_any_value_anywhere_loads_or_is_refused(
    data: st.DataObject, value: Any
) -> None:
    tree = json.loads(DUMP)
    path = data.draw(st.sampled_from(_paths(tree)[1:]))
    node = tree
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    survives_loading(json.dumps(tree, allow_nan=True))


@given(st.binary(max_size=200) | st.text(max_size=200))
@settings(max_examples=200, deadline=None)
def test_any_bytes_or_text_load_or_are_refused(blob: str | bytes) -> None:
    survives_loading(blob)


HOSTILE = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=60),
    st.builds(lambda n: '{"city":' + "[" * n + "]" * n + "}", st.integers(1, 200_000)),
    st.builds(lambda n: "{" * n, st.integers(1, 100_000)),
    st.sampled_from(
        [
            '{"city": "Paris", "city": "Lyon"}',
            '{"city": NaN}',
            '{"city": 1e999999}',
            '{"city": "\\ud800"}',
            '{"city": "Paris"',
            "[]",
            "null",
            '"Paris"',
            "",
            '{"city": {"$ref": "#"}}',
            '{"city": "' + "x" * 100_000 + '"}',
        ]
    ),
    json_value.map(json.dumps),
)


@given(HOSTILE)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
async def test_any_tool_argument_text_goes_back_to_the_model_never_out_of_the_run(
    arguments: str,
) -> None:
    ran: list[str] = []

    def get_weather(city: str) -> str:
        """Current weather for a city."""
        ran.append(city)
        return "sunny"

    model = ScriptedModel(
        [
            Message(
                role="assistant",
                parts=(ToolCall(id="c1", name="get_weather", arguments=arguments),),
            ),
            Message(role="assistant", parts=(TextPart(text="Done."),)),
        ]
    )
    result = await Agent(model, tools=[get_weather]).run("Weather?")
    assert result.output == "Done."
    (sent,) = result.messages[2].tool_results
    assert sent.is_error == (not ran)  # the tool ran, or the model was told why not
    assert load_messages(dump_messages(result.messages)) == result.messages
