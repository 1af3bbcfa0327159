"""One thinking + tool loop on each OpenAI-compatible reasoning endpoint thinkagent has a dialect
for: Kimi, Z.AI, OpenRouter (Gemini and Claude behind it), DeepSeek (Chat and Responses), vLLM
and Mistral's Magistral. For each: the reasoning of every tool turn, in the shape the endpoint
returned it (a field, OpenRouter's signed items, Mistral's chunks, DeepSeek's Responses items),
goes back as the endpoint wants it, and the loop completes.

    python examples/compatible_endpoints.py            # every endpoint
    python examples/compatible_endpoints.py kimi zai   # some of them

An endpoint whose key is set (MOONSHOT_API_KEY, ZAI_API_KEY, OPENROUTER_API_KEY,
DEEPSEEK_API_KEY, MISTRAL_API_KEY; VLLM_BASE_URL for a vLLM server) runs on the real service;
the others on the thinkagent emulator.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass

import openai

from thinkagent import Agent, Model
from thinkagent.emulator import Emulator
from thinkagent.providers.openai import OpenAIChatModel, OpenAIResponsesModel


@dataclass(frozen=True)
class Endpoint:
    model: str
    dialect: str | None  # None: the Responses API
    key: str  # the variable that selects the real service
    base_url: str  # the real service's base URL
    route: str = ""  # the emulator's dialect knob (`/{route}/v1`)


ENDPOINTS = {
    "kimi": Endpoint(
        "kimi-k2-thinking", "moonshot", "MOONSHOT_API_KEY", "https://api.moonshot.ai/v1"
    ),
    "zai": Endpoint("glm-4.6", "zai", "ZAI_API_KEY", "https://api.z.ai/api/paas/v4"),
    "openrouter-gemini": Endpoint(
        "google/gemini-3-pro-preview",
        "openrouter",
        "OPENROUTER_API_KEY",
        "https://openrouter.ai/api/v1",
    ),
    "openrouter-claude": Endpoint(
        "anthropic/claude-sonnet-4.5",
        "openrouter",
        "OPENROUTER_API_KEY",
        "https://openrouter.ai/api/v1",
    ),
    "deepseek": Endpoint(
        "deepseek-v4-pro", "deepseek", "DEEPSEEK_API_KEY", "https://api.deepseek.com"
    ),
    "deepseek-responses": Endpoint(
        "deepseek-v4-pro", None, "DEEPSEEK_API_KEY", "https://api.deepseek.com"
    ),
    "vllm": Endpoint("Qwen/Qwen3-8B", "vllm", "VLLM_BASE_URL", "", route="vllm"),
    "magistral": Endpoint(
        "magistral-medium-latest", "mistral", "MISTRAL_API_KEY", "https://api.mistral.ai/v1"
    ),
}


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def client_for(endpoint: Endpoint, emulator: Emulator) -> openai.AsyncOpenAI:
    """The real service's client when its variable is set, else one on the emulator."""
    if endpoint.key == "VLLM_BASE_URL" and os.environ.get("VLLM_BASE_URL"):
        return openai.AsyncOpenAI(api_key="vllm", base_url=os.environ["VLLM_BASE_URL"])
    if os.environ.get(endpoint.key):
        return openai.AsyncOpenAI(api_key=os.environ[endpoint.key], base_url=endpoint.base_url)
    base = f"{emulator.url}/{endpoint.route}/v1" if endpoint.route else None
    return emulator.openai_client(**({"base_url": base} if base else {}))


def model_for(endpoint: Endpoint, client: openai.AsyncOpenAI) -> Model:
    if endpoint.dialect is None:
        return OpenAIResponsesModel(endpoint.model, client=client)
    return OpenAIChatModel(endpoint.model, client=client, dialect=endpoint.dialect)


async def loop(name: str, endpoint: Endpoint, emulator: Emulator) -> None:
    client = client_for(endpoint, emulator)
    model = model_for(endpoint, client)
    where = "the real service" if os.environ.get(endpoint.key) else "the emulator"
    print(f"\n=== {name}: {endpoint.model} (scope {model.scope!r}, on {where})")
    agent = Agent(model, tools=[get_weather])
    history = (await agent.run("What's the weather in Paris?")).messages
    async with agent.run_stream("And in Rome?", history=history) as stream:
        async for _ in stream:
            pass
    history = stream.result.messages
    for message in history:
        if message.role != "assistant":
            continue
        for block in message.thinking:
            proof = "signed" if block.signature else "encrypted" if block.redacted else "plain"
            shape = (block.provider_details or {}).get("type", "text")
            print(f"  thinking ({proof}, {shape}): {block.text[:70]!r}")
        for call in message.tool_calls:
            print(f"  tool call: {call.name}({call.arguments})")
    print(f"  answer: {stream.result.output[:90]!r}")
    await client.close()


async def main(names: list[str]) -> None:
    unknown = [n for n in names if n not in ENDPOINTS]
    if unknown:
        sys.exit(f"unknown endpoint {unknown[0]!r}; known: {', '.join(ENDPOINTS)}")
    with Emulator() as emulator:
        for name in names or list(ENDPOINTS):
            await loop(name, ENDPOINTS[name], emulator)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
