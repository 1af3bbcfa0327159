"""Structured output: `Agent(model, output_type=T)`, by the output tool and natively."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from thinkagent import (
    Agent,
    ConfigurationError,
    MaxTurnsExceeded,
    Message,
    ModelProfile,
    ModelRequest,
    OutputValidationFailed,
    PartialOutput,
    TextPart,
    ThinkingBlock,
    ToolCall,
    dump_messages,
    load_messages,
    validate_history,
)
from thinkagent.testing import ScriptedModel

NATIVE = ModelProfile(native_output=True)


class Weather(BaseModel):
    """The weather in a city."""

    city: str
    celsius: int


@dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


def final(arguments: dict[str, Any] | str, call_id: str = "out") -> Message:
    return Message(
        role="assistant",
        parts=(
            ThinkingBlock.signed("I know the answer.", "sig-final"),
            ToolCall(id=call_id, name="final_result", arguments=arguments),
        ),
    )


def text(value: str) -> Message:
    return Message(
        role="assistant",
        parts=(ThinkingBlock.signed("Answering.", "sig-text"), TextPart(text=value)),
    )


def get_weather(city: str) -> str:
    """Current weather."""
    return f"21C in {city}"


async def test_a_pydantic_model_through_the_output_tool() -> None:
    model = ScriptedModel([final({"city": "Paris", "celsius": 21})])
    agent = Agent(model, output_type=Weather, instructions="Be brief.")
    result = await agent.run("Weather in Paris?")
    assert result.output == Weather(city="Paris", celsius=21)
    request = model.requests[0]
    assert request.output is not None and request.output.mode == "tool"
    (tool,) = request.tools
    assert tool.name == "final_result"
    assert tool.description == "The weather in a city."
    assert tool.parameters == {
        "type": "object",
        "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"}},
        "required": ["city", "celsius"],
    }
    assert request.settings.get("tool_choice") is None  # offered, never forced
    assert request.instructions is not None
    assert request.instructions.startswith("Be brief.\n\n")
    assert "`final_result`" in request.instructions
    # The call is answered, so the history is valid and a new prompt can follow it.
    validate_history(result.messages)
    assert result.messages[-1].tool_results[0].content == "Final result processed."
    follow = ScriptedModel([final({"city": "Rome", "celsius": 25}, "out2")])
    again = await Agent(follow, output_type=Weather).run("And Rome?", history=result.messages)
    assert again.output.city == "Rome"


@pytest.mark.parametrize(
    ("output_type", "arguments", "expected"),
    [
        (Point, {"x": 1, "y": 2}, Point(1, 2)),
        (Movie, {"title": "Alien", "year": 1979}, {"title": "Alien", "year": 1979}),
        (int, {"response": 42}, 42),
        (list[str], {"response": ["a", "b"]}, ["a", "b"]),
        (Weather | Point, {"response": {"x": 3, "y": 4}}, Point(3, 4)),
        (Literal["yes", "no"], {"response": "no"}, "no"),
    ],
)
async def test_output_types(output_type: Any, arguments: dict[str, Any], expected: Any) -> None:
    model = ScriptedModel([final(arguments)])
    result = await Agent(model, output_type=output_type).run("q")
    assert result.output == expected
    schema = model.requests[0].tools[0].parameters
    assert schema["type"] == "object"
    if "response" in arguments:  # a non-object type is wrapped in an object
        assert list(schema["properties"]) == ["response"]


async def test_tool_arguments_given_as_json_text_are_validated() -> None:
    model = ScriptedModel([final('{"city": "Oslo", "celsius": "-3"}')])
    result = await Agent(model, output_type=Weather).run("q")
    assert result.output == Weather(city="Oslo", celsius=-3)


async def test_invalid_output_goes_back_as_an_error_result_then_succeeds() -> None:
    model = ScriptedModel(
        [final({"city": "Paris"}, "bad"), final({"city": "Paris", "celsius": 20}, "good")]
    )
    result = await Agent(model, output_type=Weather).run("q")
    assert result.output.celsius == 20
    error = result.messages[2].tool_results[0]
    assert error.is_error and error.call_id == "bad"
    assert error.content == (
        "Invalid final result: celsius: Field required. Fix it and call `final_result` again."
    )
    assert model.requests[1].messages[-1].tool_results[0] == error


async def test_output_retries_are_bounded_and_the_error_carries_the_evidence() -> None:
    model = ScriptedModel([final({"city": "X"}, f"c{i}") for i in range(5)])
    with pytest.raises(OutputValidationFailed, match="no valid output in 2 attempts") as info:
        await Agent(model, output_type=Weather, output_retries=1).run("q")
    assert len(model.requests) == 2
    error = info.value
    assert error.errors[0]["loc"] == ["celsius"] and error.errors[0]["type"] == "missing"
    assert error.output == {"city": "X"}
    validate_history(error.messages)
    assert error.messages[-1].tool_results[0].is_error  # every call answered: resumable
    assert error.usage is not None and error.usage.requests == 2


async def test_a_text_answer_in_tool_mode_is_sent_back_as_a_retry() -> None:
    model = ScriptedModel([text("It is sunny."), final({"city": "Nice", "celsius": 30})])
    result = await Agent(model, output_type=Weather).run("q")
    assert result.output.city == "Nice"
    retry = model.requests[1].messages[-1]
    assert retry.role == "user" and "`final_result` tool" in retry.text


async def test_a_union_with_str_takes_a_text_answer_as_output() -> None:
    model = ScriptedModel([text("I cannot tell.")])
    agent: Agent[None, Weather | str] = Agent(model, output_type=Weather | str)
    result = await agent.run("q")
    assert result.output == "I cannot tell."
    assert "(or answer in plain text)" in (model.requests[0].instructions or "")


async def test_the_output_tool_beside_other_tools_runs_them_and_answers_every_call() -> None:
    ran: list[str] = []

    def record(note: str) -> str:
        ran.append(note)
        return "saved"

    message = Message(
        role="assistant",
        parts=(
            ThinkingBlock.signed("Save, then answer.", "sig"),
            ToolCall(id="a", name="record", arguments={"note": "n1"}),
            ToolCall(id="b", name="final_result", arguments={"city": "Lyon", "celsius": 18}),
            ToolCall(id="c", name="final_result", arguments={"city": "Nope", "celsius": 0}),
        ),
    )
    model = ScriptedModel([message])
    result = await Agent(model, output_type=Weather, tools=[record]).run("q")
    assert result.output.city == "Lyon"
    assert ran == ["n1"]
    results = result.messages[-1].tool_results
    assert [r.call_id for r in results] == ["a", "b", "c"]
    assert [r.content for r in results] == [
        "saved",
        "Final result processed.",
        "A final result was already given in this turn; this call was ignored.",
    ]
    validate_history(result.messages)
    saved = dump_messages(result.messages)
    assert load_messages(saved) == result.messages


async def test_the_output_tool_as_the_last_allowed_turn_still_ends_the_run() -> None:
    model = ScriptedModel([final({"city": "Bern", "celsius": 9})])
    result = await Agent(model, output_type=Weather, max_turns=1).run("q")
    assert result.output.city == "Bern"
    model = ScriptedModel([final({"city": "Bern"})])
    with pytest.raises(MaxTurnsExceeded, match="no final answer"):
        await Agent(model, output_type=Weather, max_turns=1).run("q")


async def test_native_output_is_asked_for_when_the_model_declares_it() -> None:
    model = ScriptedModel([text('{"city": "Paris", "celsius": 21}')], profile=NATIVE)
    agent = Agent(model, output_type=Weather, tools=[get_weather])
    assert agent.output_mode == "native"
    result = await agent.run("q")
    assert result.output == Weather(city="Paris", celsius=21)
    request = model.requests[0]
    assert request.output is not None and request.output.mode == "native"
    assert request.output.name == "final_result"
    assert request.output.schema["required"] == ["city", "celsius"]
    assert [t.name for t in request.tools] == ["get_weather"]  # no output tool
    assert result.messages[-1].role == "assistant"  # the answer itself ends the history


async def test_native_output_that_does_not_validate_is_retried_with_a_user_message() -> None:
    model = ScriptedModel(
        [text('{"city": "Paris"'), text('{"city": "Paris", "celsius": 22}')], profile=NATIVE
    )
    result = await Agent(model, output_type=Weather).run("q")
    assert result.output.celsius == 22
    feedback = model.requests[1].messages[-1]
    assert feedback.role == "user" and feedback.text.startswith("Your answer is not valid:")
    validate_history(result.messages)


async def test_native_output_retries_exhausted() -> None:
    model = ScriptedModel([text("not json")] * 3, profile=NATIVE)
    with pytest.raises(OutputValidationFailed) as info:
        await Agent(model, output_type=Weather, output_retries=2).run("q")
    assert len(model.requests) == 3
    assert info.value.output == "not json"
    assert info.value.errors[0]["type"] == "json_invalid"
    validate_history(info.value.messages)


async def test_native_non_object_output_is_wrapped_and_unwrapped() -> None:
    model = ScriptedModel([text('{"response": [1, 2, 3]}')], profile=NATIVE)
    result = await Agent(model, output_type=list[int]).run("q")
    assert result.output == [1, 2, 3]


def test_output_mode_choices() -> None:
    assert Agent(ScriptedModel([]), output_type=Weather).output_mode == "tool"
    assert Agent(ScriptedModel([], profile=NATIVE), output_type=Weather, output_mode="tool")
    assert Agent(ScriptedModel([])).output_mode is None  # text: nothing asked
    with pytest.raises(ConfigurationError, match="does not declare native structured output"):
        Agent(ScriptedModel([]), output_type=Weather, output_mode="native")


def test_an_output_type_without_a_json_schema_is_refused_at_construction() -> None:
    class Opaque:
        pass

    with pytest.raises(ConfigurationError, match="output_type"):
        Agent(ScriptedModel([]), output_type=Opaque)
    with pytest.raises(ConfigurationError, match="cannot be written as a JSON schema"):
        Agent(ScriptedModel([]), output_type=Callable[[int], int])


def test_a_tool_named_like_the_output_tool_is_refused() -> None:
    def final_result(x: int) -> int:
        return x

    with pytest.raises(ConfigurationError, match="name of the output tool"):
        Agent(ScriptedModel([]), output_type=Weather, tools=[final_result])


class Report(BaseModel):
    title: str
    items: list[str] = []


async def test_streaming_yields_partial_outputs_from_the_output_tool() -> None:
    arguments = {"title": "Plan", "items": ["first step", "second step"]}
    model = ScriptedModel([final(arguments)], chunk_size=4)
    partials: list[Any] = []
    async with Agent(model, output_type=Report).run_stream("q") as stream:
        async for event in stream:
            if isinstance(event, PartialOutput):
                partials.append(event.output)
    final_report = Report(title="Plan", items=["first step", "second step"])
    assert stream.result.output == final_report
    assert partials[-1] == final_report
    assert all(isinstance(p, Report) for p in partials)
    assert Report(title="Plan", items=["first step"]) in partials  # arrived while streaming
    expected = await Agent(ScriptedModel([final(arguments)]), output_type=Report).run("q")
    assert stream.result == expected


async def test_streaming_yields_partial_native_outputs() -> None:
    answer = json.dumps({"city": "Paris", "celsius": 21})
    model = ScriptedModel([text(answer)], chunk_size=3, profile=NATIVE)
    partials: list[Any] = []
    async with Agent(model, output_type=Weather).run_stream("q") as stream:
        async for event in stream:
            if isinstance(event, PartialOutput):
                partials.append(event.output)
    assert partials[-1] == Weather(city="Paris", celsius=21)
    assert len(set(map(repr, partials))) == len(partials)  # only new values are yielded


async def test_a_request_carries_no_output_for_text_runs() -> None:
    seen: list[ModelRequest] = []

    def answer(request: ModelRequest) -> Message:
        seen.append(request)
        return text("plain")

    result = await Agent(ScriptedModel([answer])).run("q")
    assert result.output == "plain" and seen[0].output is None and seen[0].instructions is None
