"""Per-run overrides and `Agent.override`: what one run (or one test) uses instead of the
agent's own (issue 25)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from thinkagent import (
    Agent,
    ConfigurationError,
    Message,
    ModelProfile,
    RunContext,
    TextPart,
    ToolCall,
    UsageLimitExceeded,
    UsageLimits,
)
from thinkagent.testing import ScriptedModel

NATIVE = ModelProfile(native_output=True)


class Weather(BaseModel):
    city: str
    celsius: int


def text(value: str) -> Message:
    return Message(role="assistant", parts=(TextPart(text=value),))


def call(name: str, arguments: dict[str, object], call_id: str = "c1") -> Message:
    return Message(role="assistant", parts=(ToolCall(id=call_id, name=name, arguments=arguments),))


async def test_agent_model_swap_silently_breaks_structured_output() -> None:
    """Defect 2 (issue 25): the output mode was fixed from the model the agent was built with;
    a model swapped in later (no native output) was asked natively and its tool call ignored."""
    agent = Agent(ScriptedModel([], profile=NATIVE), output_type=Weather)
    assert agent.output_mode == "native"
    scripted = ScriptedModel([call("final_result", {"city": "Paris", "celsius": 21})])
    agent.model = scripted
    assert agent.output_mode == "tool"
    result = await agent.run("Weather in Paris?")
    assert result.output == Weather(city="Paris", celsius=21)
    request = scripted.requests[0]
    assert request.output is not None and request.output.mode == "tool"
    assert [tool.name for tool in request.tools] == ["final_result"]


async def test_a_run_answers_from_the_model_it_is_given() -> None:
    own = ScriptedModel([])
    other = ScriptedModel([text("from the run's model")])
    agent = Agent(own)
    result = await agent.run("hi", model=other)
    assert result.output == "from the run's model"
    assert own.requests == [] and len(other.requests) == 1
    assert agent.model is own  # the agent is unchanged


async def test_a_runs_model_gets_its_own_output_mode() -> None:
    agent = Agent(ScriptedModel([]), output_type=Weather)  # tool mode for the agent's model
    native = ScriptedModel([text('{"city": "Oslo", "celsius": 3}')], profile=NATIVE)
    result = await agent.run("Weather?", model=native)
    assert result.output == Weather(city="Oslo", celsius=3)
    assert native.requests[0].output is not None
    assert native.requests[0].output.mode == "native"
    assert native.requests[0].tools == ()


async def test_per_run_settings_limits_instructions_and_deps() -> None:
    def whoami(ctx: RunContext[str]) -> str:
        return ctx.deps

    model = ScriptedModel([call("whoami", {}), text("done")])
    agent = Agent(
        model,
        deps_type=str,
        tools=[whoami],
        instructions="agent's",
        model_settings={"temperature": 0.1, "max_tokens": 100},
    )
    result = await agent.run(
        "q",
        deps="run's deps",
        model_settings={"max_tokens": 7},
        instructions=lambda ctx: f"run's, for {ctx.deps}",
    )
    assert result.new_messages[2].tool_results[0].content == "run's deps"
    request = model.requests[0]
    assert request.settings == {"temperature": 0.1, "max_tokens": 7}  # over the agent's
    assert request.instructions == "run's, for run's deps"
    with pytest.raises(UsageLimitExceeded):
        await agent.run("q", model=ScriptedModel([text("x")]), usage_limits=UsageLimits(requests=0))


async def test_a_runs_output_type_types_its_result() -> None:
    model = ScriptedModel([call("final_result", {"city": "Rome", "celsius": 30})])
    agent = Agent(model)
    result = await agent.run("Weather?", output_type=Weather)
    assert result.output == Weather(city="Rome", celsius=30)
    plain = await Agent(ScriptedModel([text("just text")]), output_type=Weather).run(
        "q", output_type=str
    )
    assert plain.output == "just text"


async def test_a_runs_output_type_streams_its_partial_output() -> None:
    model = ScriptedModel([text('{"city": "Rome", "celsius": 30}')], profile=NATIVE)
    async with Agent(model).run_stream("Weather?", output_type=Weather) as stream:
        async for _ in stream:
            pass
    assert stream.result.output == Weather(city="Rome", celsius=30)


async def test_native_output_mode_is_refused_per_run_for_a_model_without_it() -> None:
    agent = Agent(ScriptedModel([], profile=NATIVE), output_type=Weather, output_mode="native")
    with pytest.raises(ConfigurationError, match="does not declare native structured output"):
        await agent.run("q", model=ScriptedModel([]))


async def test_override_replaces_the_model_even_when_the_run_names_one() -> None:
    agent = Agent(ScriptedModel([]))
    test_model = ScriptedModel([text("from the test"), text("again")])
    with agent.override(model=test_model):
        assert (await agent.run("q")).output == "from the test"
        assert (await agent.run("q", model=ScriptedModel([]))).output == "again"
    with pytest.raises(Exception, match="no response left"):
        await agent.run("q")  # the agent's own model again, outside the block


async def test_override_is_scoped_to_its_context_under_concurrency() -> None:
    agent = Agent(ScriptedModel([text("own")] * 10))
    started = asyncio.Event()
    release = asyncio.Event()

    async def overridden() -> str:
        with agent.override(model=ScriptedModel([text("overridden")])):
            started.set()
            await release.wait()
            return (await agent.run("q")).output

    async def plain() -> str:
        await started.wait()  # runs while the other task is inside its block
        result = (await agent.run("q")).output
        release.set()
        return result

    inside, outside = await asyncio.gather(overridden(), plain())
    assert (inside, outside) == ("overridden", "own")


async def test_overrides_nest_and_give_deps_settings_and_instructions() -> None:
    def whoami(ctx: RunContext[str]) -> str:
        return ctx.deps

    model = ScriptedModel([call("whoami", {}), text("ok")])
    agent = Agent(ScriptedModel([]), deps_type=str, tools=[whoami], instructions="own")
    with (
        agent.override(model=model, deps="outer"),
        agent.override(deps="inner", instructions="test's", model_settings={"max_tokens": 5}),
    ):
        result = await agent.run("q", deps="run's")
    assert result.new_messages[2].tool_results[0].content == "inner"
    assert model.requests[0].instructions == "test's"
    assert model.requests[0].settings == {"max_tokens": 5}
