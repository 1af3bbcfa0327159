"""Dependencies and `RunContext`: what tools and instructions learn about their run."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from thinkagent import (
    Agent,
    ConfigurationError,
    HistoryError,
    Message,
    RunContext,
    TextPart,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolError,
    Usage,
)
from thinkagent.providers.base import ModelRequest
from thinkagent.testing import ScriptedModel


@dataclass
class Deps:
    user: str


def reply(*parts: object) -> Message:
    return Message(
        role="assistant", parts=tuple(parts), usage=Usage(input_tokens=7, output_tokens=3)
    )  # type: ignore[arg-type]


def call(name: str, call_id: str = "c1", **arguments: object) -> Message:
    return reply(
        ThinkingBlock.signed("tool", "sig"),
        ToolCall(id=call_id, name=name, arguments=dict(arguments)),
    )


def answer(text: str = "done") -> Message:
    return reply(TextPart(text=text))


async def test_a_tool_receives_the_runs_context_and_the_schema_leaves_it_out() -> None:
    seen: list[RunContext[Deps]] = []

    def greet(ctx: RunContext[Deps], greeting: str) -> str:
        """Greet the user."""
        seen.append(ctx)
        return f"{greeting}, {ctx.deps.user}"

    tool = Tool(greet)
    assert tool.takes_context
    assert tool.definition.parameters == {
        "type": "object",
        "properties": {"greeting": {"type": "string"}},
        "required": ["greeting"],
        "additionalProperties": False,
    }
    model = ScriptedModel([call("greet", greeting="Hello"), answer()])
    agent = Agent(model, deps_type=Deps, tools=[greet])
    result = await agent.run("hi", deps=Deps("Ada"))
    assert result.messages[2].tool_results[0].content == "Hello, Ada"
    (ctx,) = seen
    assert ctx.deps == Deps("Ada")
    assert ctx.tool_call_id == "c1" and ctx.tool_name == "greet" and ctx.retry == 0
    assert ctx.usage == Usage(input_tokens=7, output_tokens=3, requests=1)
    assert list(ctx.messages) == result.messages[:2]  # the call's own message is the last
    assert ctx.model is model


async def test_the_retry_count_reaches_the_tool() -> None:
    retries: list[int] = []

    async def flaky(ctx: RunContext[None]) -> str:
        retries.append(ctx.retry)
        if ctx.retry < 2:
            raise RuntimeError("not yet")
        return "ok"

    model = ScriptedModel([call("flaky", "a"), call("flaky", "b"), call("flaky", "c"), answer()])
    result = await Agent(model, tools=[flaky]).run("q")
    assert retries == [0, 1, 2]
    assert result.messages[-2].tool_results[0].content == "ok"


def test_a_run_context_anywhere_but_first_is_refused_by_name() -> None:
    def late(city: str, ctx: RunContext[Deps]) -> str:
        return city

    with pytest.raises(ToolError, match="parameter 'ctx' is a RunContext"):
        Tool(late)

    def keyword(*, ctx: RunContext[Deps]) -> str:
        return ""

    with pytest.raises(ToolError, match="parameter 'ctx' is a RunContext"):
        Tool(keyword)


async def test_instructions_may_be_a_function_of_the_context_evaluated_per_run() -> None:
    calls: list[str] = []

    def instructions(ctx: RunContext[Deps]) -> str:
        calls.append(ctx.deps.user)
        return f"The user is {ctx.deps.user}."

    async def async_instructions(ctx: RunContext[Deps]) -> str:
        await asyncio.sleep(0)
        return f"Async for {ctx.deps.user}."

    model = ScriptedModel([call("noop"), answer(), answer()])

    def noop() -> str:
        return "ok"

    agent = Agent(model, deps_type=Deps, instructions=instructions, tools=[noop])
    await agent.run("q", deps=Deps("Ada"))
    await agent.run("q", deps=Deps("Bob"))
    assert [r.instructions for r in model.requests] == [
        "The user is Ada.",
        "The user is Ada.",  # the same bytes on every request of a run
        "The user is Bob.",
    ]
    assert calls == ["Ada", "Bob"]  # once per run
    model2 = ScriptedModel([answer()])
    await Agent(model2, deps_type=Deps, instructions=async_instructions).run("q", deps=Deps("Cy"))
    assert model2.requests[0].instructions == "Async for Cy."


async def test_instructions_that_return_no_text_are_refused() -> None:
    def bad(ctx: RunContext[None]) -> str:
        return 42  # type: ignore[return-value]

    with pytest.raises(ConfigurationError, match="returned int"):
        await Agent(ScriptedModel([answer()]), instructions=bad).run("q")


async def test_one_agent_serves_fifty_concurrent_runs_with_their_own_deps() -> None:
    async def whoami(ctx: RunContext[Deps]) -> str:
        await asyncio.sleep(0.001 * (hash(ctx.deps.user) % 5))
        return ctx.deps.user

    def script(request: ModelRequest) -> Message:
        last = request.messages[-1]
        if last.tool_results:
            return answer(str(last.tool_results[0].content))
        return call("whoami")

    model = ScriptedModel([script] * 100)
    agent = Agent(
        model,
        deps_type=Deps,
        tools=[whoami],
        instructions=lambda ctx: f"Serve {ctx.deps.user}.",
    )
    users = [f"user-{i}" for i in range(50)]
    results = await asyncio.gather(*(agent.run("who?", deps=Deps(u)) for u in users))
    assert [r.output for r in results] == users
    assert sorted(r.instructions or "" for r in model.requests) == sorted(
        f"Serve {u}." for u in users for _ in range(2)
    )


async def test_a_run_from_instructions_alone() -> None:
    model = ScriptedModel([call("noop"), answer("Report written.")])

    def noop() -> str:
        return "ok"

    agent = Agent(model, instructions="Write the daily report.", tools=[noop])
    result = await agent.run()
    assert result.output == "Report written."
    assert model.requests[0].messages == []
    assert [m.role for m in result.messages] == ["assistant", "user", "assistant"]
    assert model.requests[1].messages == result.messages[:2]
    # The evidence can be continued, and a prompt-less resume keeps its meaning.
    more = ScriptedModel([answer("More.")])
    again = await Agent(more, instructions="Write the daily report.").run(
        "Add the weather.", history=result.messages
    )
    assert again.output == "More."


async def test_no_prompt_no_history_and_no_instructions_is_still_nothing_to_run() -> None:
    model = ScriptedModel([answer()])
    with pytest.raises(HistoryError, match="nothing to run"):
        await Agent(model).run()
    with pytest.raises(HistoryError, match="nothing to run"):
        await Agent(model, instructions=lambda ctx: "").run()
    assert model.requests == []
