"""Wall time of a streamed step whose tools start early, against the same step without.

    python benchmarks/early_tools.py [--delay 0.05] [--repeats 5]

One step per wire API, on the emulator with every stream event slowed by `--delay` seconds
(`Fault.slow`): the model thinks, says a few words and asks for three calls of a 300 ms async
tool at once. Measured from the run's start until the step's three results are in, with
`Agent(early_tool_start=True)` (each call starts at the end of its own arguments, while the
rest of the message still streams) and without (the calls start once the whole message has
arrived). Runs alternate and the medians are compared; the ratio is early / without (below 1:
the early start saves time).

The gain is the stream that follows each call's end: the later calls' arguments and the
message's closing events. A wire whose adapter yields no `PartEnd` cannot start anything early
(its ratio is 1.00x, and the row says so). The `scripted` row is the agent alone: a
`ScriptedModel` message streamed with the same delay per event.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack

from thinkagent import (
    Agent,
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    PartEnd,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResultEvent,
)
from thinkagent.emulator import Emulator, Fault, Reply, ToolCallSpec
from thinkagent.providers.base import ModelStreamEvent
from thinkagent.testing import ScriptedModel

TOOL_SECONDS = 0.3
CITIES = ("Paris", "Rome", "Lisbon")


async def get_weather(city: str) -> str:
    """Current weather for a city."""
    await asyncio.sleep(TOOL_SECONDS)
    return f"sunny in {city}, 21 C"


class Slowed:
    """A model whose stream waits `delay` seconds before each event (the scripted row)."""

    def __init__(self, model: Model, delay: float) -> None:
        self._model = model
        self._delay = delay
        self.model_name = model.model_name
        self.scope = model.scope

    async def request(self, request: ModelRequest) -> ModelResponse:
        return await self._model.request(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        async for event in self._model.stream(request):
            await asyncio.sleep(self._delay)
            yield event


async def step_seconds(agent: Agent[None, str]) -> tuple[float, bool]:
    """Seconds from the run's start until its first step's results are in, and whether the
    model's stream ended its parts (`PartEnd`)."""
    started = time.perf_counter()
    results = 0
    ends = False
    async with agent.run_stream("What's the weather in Paris, Rome and Lisbon?") as stream:
        async for event in stream:
            ends = ends or isinstance(event, PartEnd)
            if isinstance(event, ToolResultEvent):
                results += 1
                if results == len(CITIES):
                    break  # the step is over; leaving closes the run
    if results != len(CITIES):
        raise RuntimeError(f"the step ran {results} calls, not {len(CITIES)}")
    return time.perf_counter() - started, ends


def reply() -> Reply:
    return Reply(
        thinking="Three cities: I will look the weather up in each, all at once.",
        text="Looking them up.",
        tool_calls=[ToolCallSpec("get_weather", {"city": city}) for city in CITIES],
    )


def scripted_message() -> Message:
    return Message(
        role="assistant",
        parts=(
            ThinkingBlock.signed(reply().thinking or "", "c2NyaXB0ZWQtc2lnbmF0dXJl"),
            TextPart(text="Looking them up."),
            *(
                ToolCall(id=f"call_{i}", name="get_weather", arguments={"city": city})
                for i, city in enumerate(CITIES)
            ),
        ),
    )


async def wire_models(emu: Emulator, stack: AsyncExitStack) -> dict[str, tuple[str, Model]]:
    """Each wire's model (and its emulator API), on clients closed with `stack`."""
    from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking
    from thinkagent.providers.bedrock import BedrockModel
    from thinkagent.providers.openai import OpenAIChatModel, OpenAIResponsesModel

    anthropic = emu.anthropic_client(max_retries=0)
    stack.push_async_callback(anthropic.close)
    openai = emu.openai_client(max_retries=0)
    stack.push_async_callback(openai.close)
    bedrock = emu.bedrock_client()
    stack.callback(bedrock.close)
    thinking = ClaudeThinking.adaptive()
    models: dict[str, tuple[str, Model]] = {
        "anthropic": (
            "anthropic",
            AnthropicModel("claude-sonnet-4-6", client=anthropic, thinking=thinking),
        ),
        "bedrock": (
            "bedrock",
            BedrockModel("anthropic.claude-sonnet-4-6-v1:0", client=bedrock, thinking=thinking),
        ),
    }
    try:
        from thinkagent.providers.gemini import GeminiModel

        gemini = emu.gemini_client()
        stack.push_async_callback(gemini.aio.aclose)
        models["gemini"] = ("gemini", GeminiModel("gemini-3-pro-preview", client=gemini))
    except ModuleNotFoundError:
        print("skipped gemini: google-genai 3 needs Python 3.11+")
    models["openai-chat"] = (
        "openai",
        OpenAIChatModel("deepseek-reasoner", client=openai, dialect="deepseek"),
    )
    models["openai-resp"] = ("openai-responses", OpenAIResponsesModel("gpt-5", client=openai))
    return models


async def measure(
    make: Callable[[bool], Agent[None, str]], prepare: Callable[[], None], repeats: int
) -> tuple[float, float, bool]:
    """Median step seconds with and without early start (runs alternate), and whether the
    stream had part ends."""
    timings: dict[bool, list[float]] = {True: [], False: []}
    ends = False
    for repeat in range(repeats):
        for early in (True, False) if repeat % 2 == 0 else (False, True):
            prepare()
            seconds, had_ends = await step_seconds(make(early))
            timings[early].append(seconds)
            ends = ends or had_ends
    return statistics.median(timings[True]), statistics.median(timings[False]), ends


async def run(delay: float, repeats: int) -> int:
    print(
        f"a streamed step with {len(CITIES)} parallel calls of a {TOOL_SECONDS * 1000:.0f} ms "
        f"async tool, every stream event {delay * 1000:.0f} ms apart (medians of {repeats})"
    )
    print(f"{'wire':<12} {'without':>9} {'early':>9} {'early/without':>14}")
    ratios: list[float] = []
    with Emulator() as emu:
        async with AsyncExitStack() as stack:
            rows: list[tuple[str, Callable[[bool], Agent[None, str]], Callable[[], None]]] = []
            for name, (api, model) in (await wire_models(emu, stack)).items():

                def prepare(api: str = api) -> None:
                    emu.reset()
                    emu.script(api, [reply()])
                    emu.inject(Fault.slow(delay, api=api))

                def make(early: bool, model: Model = model) -> Agent[None, str]:
                    return Agent(model, tools=[get_weather], early_tool_start=early)

                rows.append((name, make, prepare))

            def make_scripted(early: bool) -> Agent[None, str]:
                model = Slowed(ScriptedModel([scripted_message()], chunk_size=8), delay)
                return Agent(model, tools=[get_weather], early_tool_start=early)

            rows.append(("scripted", make_scripted, lambda: None))
            for name, make, prepare in rows:
                early, without, ends = await measure(make, prepare, repeats)
                ratio = early / without
                note = (
                    "" if ends else "  (its adapter yields no PartEnd yet: nothing can start early)"
                )
                if ends:
                    ratios.append(ratio)
                print(
                    f"{name:<12} {without:>8.2f}s {early:>8.2f}s {ratio:>13.2f}x{note}", flush=True
                )
    if not ratios:
        print("no stream ended its parts: no early start to measure")
        return 1
    print(
        f"early start / without, median over the rows with part ends: {statistics.median(ratios):.2f}x"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.05, help="seconds between stream events")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each mode per wire")
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    return asyncio.run(run(args.delay, args.repeats))


if __name__ == "__main__":
    sys.exit(main())
