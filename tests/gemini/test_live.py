"""Against the real Gemini API: opt-in, run only with GEMINI_API_KEY or GOOGLE_API_KEY set.

    GEMINI_API_KEY=... pytest tests/gemini/test_live.py -m live

`THINKAGENT_GEMINI_MODEL` picks the model (default `gemini-3-flash-preview`)."""

from __future__ import annotations

import os

import pytest

from thinkagent import Agent, dump_messages, load_messages
from thinkagent.providers.gemini import GeminiModel

KEY = os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
MODEL = os.environ.get("THINKAGENT_GEMINI_MODEL", "gemini-3-flash-preview")

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not KEY, reason="needs GEMINI_API_KEY or GOOGLE_API_KEY"),
]


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_thinking_tool_loop_on_the_real_api(streamed: bool) -> None:
    agent = Agent(GeminiModel(MODEL), tools=[get_weather])
    question = "What's the weather in Paris? Use the tool."
    if streamed:
        async with agent.run_stream(question) as stream:
            async for _ in stream:
                pass
        result = stream.result
    else:
        result = await agent.run(question)
    calls = [c for m in result.messages for c in m.tool_calls]
    assert calls and calls[0].signature  # Gemini 3 signs the first call of a step
    assert result.output
    # the stored history replays: the service verifies every signature again
    again = await agent.run("And in Lyon?", history=load_messages(dump_messages(result.messages)))
    assert again.output
    assert KEY is not None and KEY not in dump_messages(again.messages)
