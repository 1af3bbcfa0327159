"""Static checks: pyright (strict, in CI) must infer these types. Never executed."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel
from typing_extensions import assert_type

from thinkagent import Agent, PartialOutput, RunContext, RunResult
from thinkagent.testing import ScriptedModel


class Weather(BaseModel):
    city: str
    celsius: int


@dataclass
class Deps:
    api_key: str


def lookup(ctx: RunContext[Deps], city: str) -> str:
    assert_type(ctx.deps, Deps)
    return city


async def check() -> None:
    plain = Agent(ScriptedModel([]))
    assert_type(plain, Agent[None, str])
    assert_type((await plain.run("q")).output, str)

    typed = Agent(ScriptedModel([]), output_type=Weather)
    result = await typed.run("q")
    assert_type(result, RunResult[Weather])
    assert_type(result.output, Weather)

    with_deps = Agent(ScriptedModel([]), output_type=int, deps_type=Deps, tools=[lookup])
    assert_type(with_deps, Agent[Deps, int])
    assert_type((await with_deps.run("q", deps=Deps("k"))).output, int)

    union: Agent[None, int | str] = Agent(ScriptedModel([]), output_type=int | str)
    assert_type((await union.run("q")).output, int | str)

    async with typed.run_stream("q") as stream:
        async for event in stream:
            if isinstance(event, PartialOutput):
                pass
    assert_type(stream.result.output, Weather)
