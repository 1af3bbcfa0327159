"""An OpenAI-compatible reasoning endpoint (DeepSeek's thinking mode): `reasoning_content`
captured as thinking and sent back on the tool turn, as DeepSeek requires.

    python examples/deepseek_thinking.py

With DEEPSEEK_API_KEY set it talks to https://api.deepseek.com (THINKAGENT_DEEPSEEK_MODEL picks
the model); without it, to the thinkagent emulator.
"""

import asyncio
import os

from _demo import run, service

from thinkagent.providers.openai import OpenAIChatModel

MODEL = os.environ.get("THINKAGENT_DEEPSEEK_MODEL", "deepseek-v4-flash")


async def main() -> None:
    with service("the DeepSeek API", "DEEPSEEK_API_KEY") as emulator:
        model = OpenAIChatModel(
            MODEL, client=emulator.openai_client() if emulator else None, dialect="deepseek"
        )
        await run(model)
        await model.client.close()


if __name__ == "__main__":
    asyncio.run(main())
