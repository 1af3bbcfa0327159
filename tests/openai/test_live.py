"""Live tests against the real services: opt-in, run only with the API key set
(`OPENAI_API_KEY`, `DEEPSEEK_API_KEY`), e.g. `pytest -m live tests/openai`."""

from __future__ import annotations

import os

import pytest

from tests.support.openai import get_weather, thinking
from thinkagent import Agent, dump_messages, load_messages
from thinkagent.providers.openai import OpenAIChatModel, OpenAIResponsesModel, OpenAIThinking

pytestmark = pytest.mark.live

needs_openai = pytest.mark.skipif(
    not os.environ.get("OPENAI_API_KEY"), reason="OPENAI_API_KEY not set"
)
needs_deepseek = pytest.mark.skipif(
    not os.environ.get("DEEPSEEK_API_KEY"), reason="DEEPSEEK_API_KEY not set"
)

OPENAI_MODEL = os.environ.get("THINKAGENT_OPENAI_MODEL", "gpt-5-mini")
QUESTION = "What's the weather in Paris? Use the tool."


@needs_openai
@pytest.mark.parametrize("streamed", [False, True])
async def test_responses_tool_loop_replays_encrypted_reasoning(streamed: bool) -> None:
    thinking = OpenAIThinking(effort="low", summary="auto")
    agent = Agent(OpenAIResponsesModel(OPENAI_MODEL, thinking=thinking), tools=[get_weather])
    if streamed:
        async with agent.run_stream(QUESTION) as stream:
            async for _ in stream:
                pass
        result = stream.result
    else:
        result = await agent.run(QUESTION)
    assert any(m.tool_calls for m in result.messages) and result.output
    blocks = thinking(result.messages)
    assert blocks and all(b.id and b.signature for b in blocks)
    again = await agent.run("And in Lyon?", history=load_messages(dump_messages(result.messages)))
    assert again.output


@needs_openai
async def test_openai_chat_reports_reasoning_tokens() -> None:
    model = OpenAIChatModel(OPENAI_MODEL, thinking=OpenAIThinking(effort="low"))
    assert model.scope == "openai"
    result = await Agent(model, tools=[get_weather]).run(QUESTION)
    assert result.output and result.usage.thinking_tokens > 0
    assert thinking(result.messages) == []


@needs_deepseek
@pytest.mark.parametrize("streamed", [False, True])
async def test_deepseek_tool_loop_replays_reasoning_content(streamed: bool) -> None:
    agent = Agent(OpenAIChatModel("deepseek-reasoner", dialect="deepseek"), tools=[get_weather])
    if streamed:
        async with agent.run_stream(QUESTION) as stream:
            async for _ in stream:
                pass
        result = stream.result
    else:
        result = await agent.run(QUESTION)
    assert any(m.tool_calls for m in result.messages) and result.output
    assert thinking(result.messages)
    again = await agent.run("And in Lyon?", history=load_messages(dump_messages(result.messages)))
    assert again.output
