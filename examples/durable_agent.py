"""A durable agent run on DBOS: kill it mid-run, run it again, and it resumes where it stopped.

    python examples/durable_agent.py          # on the emulator, with a SQLite file in the cwd

The run is a DBOS workflow whose model requests and tool calls are checkpointed steps. Run the
script, press Ctrl-C while the slow tool runs (or kill the process), and run it again: DBOS
resumes the run from its last completed step, so the model requests that completed are not
sent again (the emulator's request count shows it) and the history comes out the same.
With ANTHROPIC_API_KEY set it talks to the real service instead of the emulator.

DBOS's own log is kept to errors (`log_level` below): at its default, INFO, it prints some 80
lines at launch, and on Ctrl-C a warning naming the cancelled step (by name only: thinkagent
never lets a step's arguments, the run's messages, reach it; `docs/durable.md`, Logging). The
SQLite file, `durable_agent.sqlite` in the current folder, is ignored by git.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from dbos import DBOS

from thinkagent import Agent, ModelResponse, RunContext, ToolResultEvent
from thinkagent.durable import DurableAgent, idempotency_key
from thinkagent.emulator import Emulator
from thinkagent.providers.claude import AnthropicModel, ClaudeThinking

DATABASE = Path("durable_agent.sqlite")
CONVERSATION = "example-conversation-1"  # the workflow id: the same on every attempt


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


async def get_forecast(ctx: RunContext[None], city: str) -> str:
    """Weather forecast for a city."""
    # A slow tool: interrupt the script now and run it again to see the run resume.
    # A tool with an effect would pass this key to the service it calls, to act only once.
    print(f"  get_forecast({city!r}) running, idempotency key {idempotency_key(ctx)}", flush=True)
    await asyncio.sleep(float(os.environ.get("FORECAST_SECONDS", "2")))
    return f"rain tomorrow in {city}"


async def main(emulator: Emulator | None) -> None:
    client = emulator.anthropic_client() if emulator is not None else None
    model = AnthropicModel("claude-sonnet-4-6", client=client, thinking=ClaudeThinking.adaptive())
    agent = Agent(model, tools=[get_weather, get_forecast])

    # The application configures DBOS; SQLite needs nothing installed (Postgres: a URL).
    DBOS(
        config={
            "name": "durable-example",
            "system_database_url": f"sqlite:///{DATABASE}",
            "log_level": "ERROR",  # no INFO chatter at launch
        }
    )
    durable = DurableAgent(agent, name="weather")  # before launch: recovery looks it up
    DBOS.launch()  # resumes a run an earlier process left pending
    try:
        run = await durable.start(
            "What's the weather and forecast in Paris?", workflow_id=CONVERSATION
        )
        async for event in run.events():  # the run's checkpoints, as they are made
            if isinstance(event, ModelResponse):
                calls = ", ".join(call.name for call in event.message.tool_calls) or "none"
                print(
                    f"  model answered ({len(event.message.thinking)} thinking block(s)), tools: {calls}"
                )
            elif isinstance(event, ToolResultEvent):
                print(f"  {event.result.name} -> {event.result.content}")
        result = await run.result()
        print(f"status: {await run.status()}")
        print(result.output)
        if emulator is not None:
            print(f"model requests sent by this process: {len(emulator.requests)}")
    finally:
        DBOS.destroy()


if __name__ == "__main__":
    try:
        if os.environ.get("ANTHROPIC_API_KEY"):
            asyncio.run(main(None))
        else:
            with Emulator() as emu:
                asyncio.run(main(emu))
    except KeyboardInterrupt:
        print("Interrupted: run the script again and the run resumes from its last checkpoint.")
        sys.exit(130)
    sys.exit(0)
