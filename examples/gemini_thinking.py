"""Gemini: thought summaries, thought signatures on the parts that carry them, and a replay the
service verifies.

    python examples/gemini_thinking.py

With GEMINI_API_KEY (or GOOGLE_API_KEY) set it talks to the Gemini API (THINKAGENT_GEMINI_MODEL
picks the model); without one, to the thinkagent emulator.
"""

import asyncio
import os

from _demo import run, service

from thinkagent.providers.gemini import GeminiModel, GeminiThinking

MODEL = os.environ.get("THINKAGENT_GEMINI_MODEL", "gemini-3-flash-preview")


async def main() -> None:
    with service("the Gemini API", "GEMINI_API_KEY", "GOOGLE_API_KEY") as emulator:
        model = GeminiModel(
            MODEL,
            client=emulator.gemini_client() if emulator else None,
            thinking=GeminiThinking(include_thoughts=True),
        )
        await run(model)
        await model.client.aio.aclose()


if __name__ == "__main__":
    asyncio.run(main())
