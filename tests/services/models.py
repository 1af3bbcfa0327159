"""One thinking model per wire API, on the suite's emulator clients, and the tools the
services tests offer them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from thinkagent import Message, Model, TextPart, ThinkingBlock, dump_messages
from thinkagent.emulator import Emulator, Reply, ToolCallSpec

from ..conftest import needs_genai

WIRES = [
    pytest.param("anthropic", id="anthropic"),
    pytest.param("bedrock", id="bedrock"),
    pytest.param("gemini", id="gemini", marks=needs_genai),
    pytest.param("openai", id="openai-chat"),
    pytest.param("openai-responses", id="responses"),
]
"""The emulator API of each wire (its script key)."""

PROVIDER = {
    "anthropic": "anthropic",
    "bedrock": "aws.bedrock",
    "gemini": "gcp.gemini",
    "openai": "deepseek",
    "openai-responses": "openai",
}
"""The `gen_ai.provider.name` each wire's model reports."""


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def get_time(city: str) -> str:
    """Current local time in a city."""
    return f"12:00 in {city}"


@asynccontextmanager
async def wire_model(api: str, emu: Emulator) -> AsyncIterator[Model]:
    """A thinking model on `api`, over a client of its own pointed at `emu` (no retries, so a
    fault reaches the adapter as it happened), closed afterwards."""
    from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking
    from thinkagent.providers.bedrock import BedrockModel
    from thinkagent.providers.openai import OpenAIChatModel, OpenAIResponsesModel

    if api == "bedrock":
        from botocore.config import Config

        client = emu.bedrock_client(config=Config(retries={"total_max_attempts": 1}))
        try:
            yield BedrockModel(
                "anthropic.claude-sonnet-4-6",
                client=client,
                thinking=ClaudeThinking.adaptive(),
            )
        finally:
            client.close()
        return
    if api == "gemini":
        from thinkagent.providers.gemini import GeminiModel

        gemini = emu.gemini_client()
        try:
            yield GeminiModel("gemini-3-pro-preview", client=gemini)
        finally:
            await gemini.aio.aclose()
        return
    model: Model
    if api == "anthropic":
        client = emu.anthropic_client(max_retries=0)
        model = AnthropicModel(
            "claude-sonnet-4-6", client=client, thinking=ClaudeThinking.adaptive()
        )
    else:
        client = emu.openai_client(max_retries=0)
        model = (
            OpenAIChatModel("deepseek-reasoner", client=client, dialect="deepseek")
            if api == "openai"
            else OpenAIResponsesModel("gpt-5", client=client)
        )
    try:
        yield model
    finally:
        await client.close()


def script_parallel_calls(emu: Emulator, api: str) -> None:
    """The next run on `api`: thinking and two parallel calls, then thinking and the answer."""
    emu.script(
        api,
        [
            Reply(
                thinking="Two things to look up, at once.",
                text="Looking both up.",
                tool_calls=[
                    ToolCallSpec("get_weather", {"city": "Paris"}),
                    ToolCallSpec("get_time", {"city": "Paris"}),
                ],
            ),
            Reply(thinking="Both came back.", text="Sunny, and it is noon in Paris."),
        ],
    )


GEMINI_SIGNATURE = "c2lnbmF0dXJlLW9mLWdlbWluaQ=="
GEMINI_TURN = Message(
    role="assistant",
    scope="gemini",
    model="gemini-3-pro-preview",
    parts=(
        ThinkingBlock.signed("Gemini's own reasoning.", GEMINI_SIGNATURE),
        TextPart(text="Hello."),
    ),
)
"""A turn another scope signed: reasoning any other model must leave out (or send as text)."""


def proofs_of(messages: list[Message]) -> set[str]:
    """Every proof in `messages` (signatures, redacted payloads, encrypted reasoning)."""
    found: set[str] = set()
    for message in json.loads(dump_messages(messages)):
        for part in message["parts"]:
            for key in ("signature", "redacted"):
                value = part.get(key)
                if isinstance(value, str) and len(value) >= 16:
                    found.add(value)
    return found
