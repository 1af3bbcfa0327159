"""Limits checked before spending, the one thinking knob, and the warnings adapters give."""

from __future__ import annotations

from typing import Any

import pytest

from thinkagent import (
    Agent,
    ConfigurationError,
    Message,
    ModelResponse,
    TextPart,
    ToolCall,
    Usage,
    UsageLimitExceeded,
    UsageLimits,
    WarningEvent,
    trim_history,
    validate_history,
)
from thinkagent.providers.base import THINKING_LEVELS, check_thinking, clamp_thinking
from thinkagent.testing import ScriptedModel, ScriptedResponse

ran: list[str] = []


def work(step: str) -> str:
    ran.append(step)
    return "ok"


def calls(*steps: str, input_tokens: int = 100) -> Message:
    return Message(
        role="assistant",
        parts=tuple(ToolCall(id=f"c{s}", name="work", arguments={"step": s}) for s in steps),
        usage=Usage(input_tokens=input_tokens, output_tokens=10),
    )


def answer(input_tokens: int = 100) -> Message:
    return Message(
        role="assistant",
        parts=(TextPart(text="done"),),
        usage=Usage(input_tokens=input_tokens, output_tokens=10),
    )


@pytest.fixture(autouse=True)
def _reset() -> None:
    ran.clear()


async def test_the_request_limit_stops_before_sending() -> None:
    model = ScriptedModel([calls("1"), calls("2"), answer()])
    agent = Agent(model, tools=[work], usage_limits=UsageLimits(requests=2))
    with pytest.raises(UsageLimitExceeded, match="made 2 requests, its limit") as info:
        await agent.run("q")
    assert len(model.requests) == 2
    validate_history(info.value.messages)
    assert info.value.messages[-1].tool_results  # both steps ran; the third request did not go


async def test_the_tool_call_limit_stops_before_running_the_step() -> None:
    model = ScriptedModel([calls("1", "2"), calls("3", "4"), answer()])
    agent = Agent(model, tools=[work], usage_limits=UsageLimits(tool_calls=3))
    with pytest.raises(
        UsageLimitExceeded, match="bring the run to 4, over its tool_calls limit of 3"
    ):
        await agent.run("q")
    # the first step's calls ran (on worker threads, in either order), the second's none
    assert sorted(ran) == ["1", "2"]


async def test_a_token_limit_the_next_request_would_certainly_pass_stops_before_it() -> None:
    model = ScriptedModel([calls("1", input_tokens=400), answer(input_tokens=450)])
    agent = Agent(model, tools=[work], usage_limits=UsageLimits(input_tokens=700))
    with pytest.raises(UsageLimitExceeded, match="bring input_tokens to at least 800") as info:
        await agent.run("q")
    assert len(model.requests) == 1  # the second request was never sent
    assert info.value.usage == Usage(input_tokens=400, output_tokens=10, requests=1)
    validate_history(info.value.messages)


async def test_token_limits_are_not_predicted_when_a_processor_reshapes_the_request() -> None:
    model = ScriptedModel([calls("1", input_tokens=400), answer(input_tokens=250)])
    agent = Agent(
        model,
        tools=[work],
        usage_limits=UsageLimits(input_tokens=700),
        history_processors=[trim_history(10)],
    )
    assert (await agent.run("q")).usage.input_tokens == 650
    assert len(model.requests) == 2


async def test_limits_after_the_response_still_hold() -> None:
    model = ScriptedModel([answer(input_tokens=900)])
    with pytest.raises(UsageLimitExceeded, match="900 input_tokens, over its limit of 700"):
        await Agent(model, usage_limits=UsageLimits(input_tokens=700)).run("q")


def test_the_thinking_knob_takes_false_true_and_levels() -> None:
    assert THINKING_LEVELS == ("low", "medium", "high", "max")
    for value in (False, True, *THINKING_LEVELS):
        assert check_thinking(value) == value
        Agent(ScriptedModel([]), model_settings={"thinking": value})
    with pytest.raises(ConfigurationError, match="thinking must be False, True or one of"):
        Agent(ScriptedModel([]), model_settings={"thinking": "extreme"})  # type: ignore[typeddict-item]


async def test_the_thinking_setting_reaches_the_request() -> None:
    model = ScriptedModel([answer()])
    await Agent(model, model_settings={"thinking": "high"}).run("q")
    assert model.requests[0].settings == {"thinking": "high"}


@pytest.mark.parametrize(
    ("value", "supported", "chosen"),
    [
        ("high", ("low", "high"), "high"),
        ("medium", ("low", "high"), "high"),  # a tie goes up
        ("max", ("low", "medium", "high"), "high"),
        ("low", ("high",), "high"),
    ],
)
def test_clamp_thinking(value: Any, supported: Any, chosen: str) -> None:
    level, warning = clamp_thinking(value, supported, scope="s", model="m-1")
    assert level == chosen
    if value == chosen:
        assert warning is None
    else:
        assert warning == WarningEvent(
            "thinking_clamped",
            f"m-1 has no thinking level {value!r}; {chosen!r} was used instead",
            "s",
        )


async def test_warnings_reach_the_result_and_the_stream() -> None:
    warning = WarningEvent("thinking_clamped", "max became high", "scripted")
    script = [ScriptedResponse(answer(), warnings=[warning])]
    result = await Agent(ScriptedModel(script)).run("q")
    assert result.warnings == [warning]
    events: list[object] = []
    async with Agent(ScriptedModel(script)).run_stream("q") as stream:
        async for event in stream:
            events.append(event)
    assert events[0] == warning  # before the deltas
    assert stream.result.warnings == [warning]  # once, though the response carries it too
    assert isinstance(events[-1], ModelResponse) and events[-1].warnings == (warning,)
