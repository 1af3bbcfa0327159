"""Claude on Amazon Bedrock (Converse): reasoning with its signature, a tool call, and a replay
Bedrock verifies.

    python examples/bedrock_thinking.py

With AWS credentials in the environment (AWS_ACCESS_KEY_ID or AWS_PROFILE) it talks to Bedrock
(THINKAGENT_BEDROCK_MODEL picks the model); without them, to the thinkagent emulator.
Converse's usage has no thinking count (its output tokens include the thinking), so the usage
lines say "its count not reported".
"""

import asyncio
import os

from _demo import run, service

from thinkagent.providers.claude import BedrockModel, ClaudeThinking

MODEL = os.environ.get("THINKAGENT_BEDROCK_MODEL", "us.anthropic.claude-sonnet-4-6")


async def main() -> None:
    with service("Amazon Bedrock", "AWS_ACCESS_KEY_ID", "AWS_PROFILE") as emulator:
        model = BedrockModel(
            MODEL,
            client=emulator.bedrock_client() if emulator else None,
            thinking=ClaudeThinking.adaptive(display="summarized"),
        )
        await run(model)


if __name__ == "__main__":
    asyncio.run(main())
