"""Gemini: thought summaries, thought signatures on the parts that carry them, and a replay the
service verifies.

    python examples/gemini_thinking.py

With GEMINI_API_KEY (or GOOGLE_API_KEY) set it talks to the Gemini API (THINKAGENT_GEMINI_MODEL
picks the model); without one, to the thinkagent emulator. On Python 3.10 it says it is skipped
and exits cleanly: google-genai 3 installs on 3.11 or newer.
"""

import asyncio
import os
import sys

from _demo import run, service

MODEL = os.environ.get("THINKAGENT_GEMINI_MODEL", "gemini-3-flash-preview")


async def main() -> None:
    from thinkagent.providers.gemini import GeminiModel, GeminiThinking

    with service("the Gemini API", "GEMINI_API_KEY", "GOOGLE_API_KEY") as emulator:
        print(
            "Gemini signs the part that follows its thoughts, not the thought summary: the "
            "first function call of a turn, else its last text part. So the proofs below sit "
            "on the text and the tool call, and the thoughts show none."
        )
        model = GeminiModel(
            MODEL,
            client=emulator.gemini_client() if emulator else None,
            thinking=GeminiThinking(include_thoughts=True),
        )
        await run(model)
        await model.client.aio.aclose()


if __name__ == "__main__":
    if sys.version_info < (3, 11):
        version = ".".join(map(str, sys.version_info[:2]))
        print(
            f"Skipping the Gemini demo: it needs google-genai 3, which installs on Python 3.11 "
            f"or newer (this is Python {version}). The other demos run on 3.10."
        )
        sys.exit(0)
    asyncio.run(main())
