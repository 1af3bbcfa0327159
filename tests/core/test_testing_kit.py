"""The test kit for users' agents: `TestModel`, the request block, the request capture, and the
pytest plugin's fixtures (issue 25)."""

from __future__ import annotations

from datetime import date
from enum import Enum
from typing import Any, Literal

import anthropic
import pytest
from pydantic import BaseModel, Field

from thinkagent import Agent, FallbackModel, Message, ThinkingBlock, ToolCall, ToolResultEvent
from thinkagent.providers.anthropic import AnthropicModel
from thinkagent.testing import (
    CapturedRequest,
    ModelRequestsBlocked,
    ScriptedModel,
    TestModel,
    block_model_requests,
    capture_model_requests,
    schema_value,
)


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str = Field(min_length=5)
    number: int = Field(ge=3)


class Weather(BaseModel):
    city: str
    celsius: float


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


def everything(
    name: str,
    count: int,
    ratio: float,
    flag: bool,
    color: Color,
    mode: Literal["fast", "slow"],
    when: date,
    tags: list[str],
    address: Address,
    note: str | None = None,
) -> dict[str, Any]:
    """A tool with every kind of parameter."""
    return {"name": name, "count": count, "address": address.model_dump(), "when": str(when)}


async def test_test_model_calls_every_tool_with_valid_arguments_then_answers() -> None:
    model = TestModel()
    result = await Agent(model, tools=[get_weather, everything]).run("Go")
    calls = result.messages[1].tool_calls
    assert [c.name for c in calls] == ["get_weather", "everything"]
    assert not any(r.is_error for r in result.messages[2].tool_results)  # all valid
    assert result.output.startswith('{"get_weather": "sunny in a"')
    assert len(model.requests) == 2


async def test_test_model_answers_structured_output_natively_and_through_the_output_tool() -> None:
    native = await Agent(TestModel(), output_type=Weather).run("Weather?")
    assert native.output == Weather(city="a", celsius=0.0)
    from thinkagent import ModelProfile

    tool_only = TestModel(profile=ModelProfile())
    by_tool = await Agent(tool_only, output_type=Weather, tools=[get_weather]).run("Weather?")
    assert by_tool.output == Weather(city="a", celsius=0.0)
    assert [c.name for c in by_tool.messages[1].tool_calls] == ["get_weather"]
    assert [c.name for c in by_tool.messages[3].tool_calls] == ["final_result"]


async def test_test_model_chooses_tools_and_text() -> None:
    model = TestModel(call_tools=["get_weather"], output_text="done")
    result = await Agent(model, tools=[get_weather, everything]).run("Go")
    assert [c.name for c in result.messages[1].tool_calls] == ["get_weather"]
    assert result.output == "done"
    assert (await Agent(TestModel()).run("hi")).output == "success (no tool calls)"


@pytest.mark.parametrize(
    ("thinking", "signed_block", "signed_call", "has_id"),
    [
        ("anthropic", True, False, False),
        ("bedrock", True, False, False),
        ("gemini", False, True, False),
        ("vertex", False, True, False),
        ("openai-responses", True, False, True),
        ("deepseek", False, False, False),
    ],
)
async def test_test_model_thinks_in_each_providers_shape(
    thinking: Any, signed_block: bool, signed_call: bool, has_id: bool
) -> None:
    result = await Agent(TestModel(thinking=thinking), tools=[get_weather]).run("Go")
    first = result.messages[1]
    (block,) = first.thinking
    assert isinstance(first.parts[0], ThinkingBlock) and block.text
    assert (block.signature is not None) == signed_block
    assert (first.tool_calls[0].signature is not None) == signed_call
    assert (block.id is not None and block.id.startswith("rs_")) == has_id
    assert first.scope == f"test-{thinking}"


async def test_test_model_without_thinking_and_streamed() -> None:
    for shape in ("openai", "none"):
        result = await Agent(TestModel(thinking=shape), tools=[get_weather]).run("Go")  # type: ignore[arg-type]
        assert result.messages[1].thinking == []
    agent = Agent(TestModel(), tools=[get_weather])
    async with agent.run_stream("Go") as stream:
        events = [e async for e in stream]
    assert any(isinstance(e, ToolResultEvent) for e in events)
    again = await agent.run("Go")
    assert stream.result.messages[1].tool_calls[0].name == again.messages[1].tool_calls[0].name


def test_schema_values_follow_refs_unions_and_bounds() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/A"},
            "b": {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 4}]},
            "c": {"type": "array", "items": {"type": "string", "format": "email"}, "minItems": 2},
            "d": {"type": "number", "exclusiveMinimum": 1.5},
            "e": {"const": "x"},
        },
        "required": ["a", "b", "c", "d", "e"],
        "$defs": {"A": {"type": "object", "properties": {"z": {"type": "boolean"}}}},
    }
    assert schema_value(schema) == {
        "a": {"z": False},
        "b": 4,
        "c": ["user@example.com", "user@example.com"],
        "d": 2.5,
        "e": "x",
    }


async def test_a_real_request_is_blocked_before_anything_is_sent() -> None:
    client = anthropic.AsyncAnthropic(api_key="not-a-key", max_retries=0)
    real = AnthropicModel("claude-sonnet-4-6", client=client)
    with block_model_requests(), pytest.raises(ModelRequestsBlocked) as info:
        await Agent(real).run("hi")
    assert "api.anthropic.com:443" in str(info.value) and "claude-sonnet-4-6" in str(info.value)
    with block_model_requests(), pytest.raises(ModelRequestsBlocked):  # a wrapped one too
        await Agent(FallbackModel(ScriptedModel([]), real)).run("hi")
    with block_model_requests():  # test models and the emulator are not real providers
        assert (await Agent(TestModel()).run("hi")).output
    await client.close()


async def test_the_block_is_undone_when_its_block_ends(emu: Any) -> None:
    with block_model_requests():
        with block_model_requests(False):
            pass
        client = emu.anthropic_client(max_retries=0)
        local = AnthropicModel("claude-sonnet-4-6", client=client)
        assert (await Agent(local).run("hi")).output  # the emulator is on this machine
        await client.close()
    from thinkagent import _endpoint

    assert _endpoint.blocked is False


async def test_captured_requests_are_those_the_agents_sent() -> None:
    call = ToolCall(id="c", name="get_weather", arguments={"city": "Oslo"})
    scripted = ScriptedModel(
        [
            Message(role="assistant", parts=(call,)),
            Message.user("x").model_copy(update={"role": "assistant"}),
        ]
    )
    with capture_model_requests() as sent:
        await Agent(TestModel(), tools=[get_weather]).run("one", model_settings={"max_tokens": 9})
        await Agent(scripted, tools=[get_weather]).run("two")
    assert [type(c) for c in sent] == [CapturedRequest] * 4
    assert sent[0].request.settings == {"max_tokens": 9}
    assert isinstance(sent[3].model, ScriptedModel)
    assert sent[3].request.messages[2].tool_results[0].content == "sunny in Oslo"


def test_the_plugin_is_a_pytest11_entry_point() -> None:
    from importlib.metadata import entry_points

    plugins = [ep.value for ep in entry_points(group="pytest11") if ep.name == "thinkagent"]
    assert plugins == ["thinkagent.pytest_plugin"]


async def test_the_plugins_fixtures(
    scripted_model: Any, test_model: TestModel, model_requests: list[CapturedRequest]
) -> None:
    model = scripted_model("first", ["second", "third"])
    agent = Agent(model)
    assert [(await agent.run("q")).output for _ in range(3)] == ["first", "second", "third"]
    await Agent(test_model, tools=[get_weather]).run("q")
    assert len(model_requests) == 5


async def test_a_scripted_string_is_a_text_answer() -> None:
    agent = Agent(ScriptedModel(["from the agent's model"]))
    result = await agent.run("hi", model=ScriptedModel(["from the run's model"]))
    assert result.output == "from the run's model"
    assert result.messages[1].scope == "scripted"
