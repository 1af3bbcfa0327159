"""The five wire APIs as the reliability tests drive them: one model per wire on the emulator,
a thinking + tool question, and `outcome`: a run's result or the error it raised."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, Literal

from thinkagent import Agent, Model, RunResult, ThinkAgentError
from thinkagent.emulator import Emulator

from ..conftest import HAS_GENAI
from ..support.claude import run

Wire = Literal["anthropic", "bedrock", "gemini", "openai-chat", "responses", "gemini-interactions"]
WIRES: tuple[Wire, ...] = tuple(
    wire
    for wire in ("anthropic", "bedrock", "gemini", "openai-chat", "responses")
    if HAS_GENAI or wire != "gemini"  # google-genai 3 needs Python 3.11+
)

#: The emulator's name of each wire API (for faults aimed at one of them).
EMULATOR_API: dict[Wire, str] = {
    "anthropic": "anthropic",
    "bedrock": "bedrock",
    "gemini": "gemini",
    "openai-chat": "openai",
    "responses": "openai-responses",
    "gemini-interactions": "gemini-interactions",
}

QUESTION = "What's the weather in Paris?"
"""The emulator thinks, calls get_weather, then answers: two model requests."""


async def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


@asynccontextmanager
async def wire_model(emu: Emulator, wire: Wire, *, retries: bool = True) -> AsyncGenerator[Model]:
    """A thinking model of `wire` on `emu`, its client closed on the way out. `retries`: the
    SDK's default retries (else none); google-genai retries only when told to, in both cases."""
    if wire == "anthropic":
        from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking

        client = emu.anthropic_client(**({} if retries else {"max_retries": 0}))
        try:
            yield AnthropicModel(
                "claude-sonnet-4-5", client=client, thinking=ClaudeThinking.budget(2048)
            )
        finally:
            await client.close()
    elif wire == "bedrock":
        from botocore.config import Config

        from thinkagent.providers.bedrock import BedrockModel, ClaudeThinking

        mode: dict[str, Any] = {"mode": "standard"} if retries else {"total_max_attempts": 1}
        client = emu.bedrock_client(config=Config(retries=mode))
        try:
            yield BedrockModel(
                "anthropic.claude-sonnet-4-5-20250929-v1:0",
                client=client,
                thinking=ClaudeThinking.budget(2048),
            )
        finally:
            client.close()
    elif wire == "gemini":
        from thinkagent.providers.gemini import GeminiModel

        client = emu.gemini_client()
        try:
            yield GeminiModel("gemini-3-pro-preview", client=client)
        finally:
            await client.aio.aclose()
    elif wire == "gemini-interactions":
        from thinkagent.providers.gemini import GeminiInteractionsModel

        client = emu.gemini_client()
        try:
            yield GeminiInteractionsModel("gemini-3-pro-preview", client=client)
        finally:
            await client.aio.aclose()
    else:
        client = emu.openai_client(**({} if retries else {"max_retries": 0}))
        try:
            if wire == "openai-chat":
                from thinkagent.providers.openai import OpenAIChatModel

                yield OpenAIChatModel("deepseek-reasoner", client=client, dialect="deepseek")
            else:
                from thinkagent.providers.openai_responses import OpenAIResponsesModel

                yield OpenAIResponsesModel("gpt-5", client=client)
        finally:
            await client.close()


async def outcome(
    agent: Agent, prompt: str | None, *, streamed: bool, **kw: Any
) -> RunResult | ThinkAgentError:
    """The run's result, or the `ThinkAgentError` it raised."""
    try:
        return await run(agent, prompt, streamed=streamed, **kw)
    except ThinkAgentError as error:
        return error
