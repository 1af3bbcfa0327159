"""OpenAI reasoning models on the Responses API: reasoning summaries, encrypted reasoning items
replayed before the item they preceded, and a replay the service verifies.

    python examples/openai_thinking.py

With OPENAI_API_KEY set it talks to OpenAI (THINKAGENT_OPENAI_MODEL picks the model); without
it, to the thinkagent emulator.
"""

import asyncio
import os

from _demo import run, service

from thinkagent.providers.openai import OpenAIResponsesModel, OpenAIThinking

MODEL = os.environ.get("THINKAGENT_OPENAI_MODEL", "gpt-5-mini")


async def main() -> None:
    with service("the OpenAI API", "OPENAI_API_KEY") as emulator:
        model = OpenAIResponsesModel(
            MODEL,
            client=emulator.openai_client() if emulator else None,
            thinking=OpenAIThinking(effort="low", summary="auto"),
        )
        await run(model)
        await model.client.close()


if __name__ == "__main__":
    asyncio.run(main())
