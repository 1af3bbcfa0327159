"""Claude thinks, calls a tool, and its signed thinking goes back on the next request.

    python examples/thinking.py

With ANTHROPIC_API_KEY set it talks to the Anthropic API (THINKAGENT_ANTHROPIC_MODEL picks the
model); without it, to the thinkagent emulator, a local stand-in that signs and verifies
thinking like the real service. The script itself is in `_demo.py`.
"""

import asyncio
import os

from _demo import run, service

from thinkagent.providers.claude import AnthropicModel, ClaudeThinking

MODEL = os.environ.get("THINKAGENT_ANTHROPIC_MODEL", "claude-opus-4-7")


async def main() -> None:
    with service("the Anthropic API", "ANTHROPIC_API_KEY") as emulator:
        model = AnthropicModel(
            MODEL,
            client=emulator.anthropic_client() if emulator else None,
            thinking=ClaudeThinking.adaptive(display="summarized"),
        )
        await run(model)
        await model.client.close()


if __name__ == "__main__":
    asyncio.run(main())
