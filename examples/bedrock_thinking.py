"""Claude on AWS Bedrock thinks, calls a tool, and its signed reasoning goes back on the next
request.

    python examples/bedrock_thinking.py

With AWS credentials in the environment (AWS_ACCESS_KEY_ID or AWS_PROFILE) it talks to Bedrock
(THINKAGENT_BEDROCK_MODEL picks the model or inference profile, AWS_REGION the region); without
them, to the thinkagent emulator, a local stand-in that signs and verifies reasoning like the
real service.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import Any

from thinkagent import Agent, Message, ProviderError, RunResult, dump_messages, load_messages
from thinkagent.emulator import Emulator
from thinkagent.providers.bedrock import BedrockModel, ClaudeThinking

MODEL = os.environ.get("THINKAGENT_BEDROCK_MODEL", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
QUESTION = (
    "A bat and a ball cost $1.10 in total. The bat costs $1.00 more than the ball. "
    "How much does the ball cost?"
)
FOLLOW_UP = "Is it $0.05? Check it with the check_answer tool."


def check_answer(ball: float) -> str:
    """Check a price for the ball (in dollars): does the bat-and-ball puzzle add up?"""
    bat = ball + 1.00
    verdict = "correct" if abs(ball + bat - 1.10) < 1e-9 else "wrong"
    return f"ball ${ball:.2f} + bat ${bat:.2f} = ${ball + bat:.2f}: {verdict}"


def show(prompt: str, result: RunResult) -> None:
    print(f"\n> {prompt}")
    for message in result.new_messages:
        for part in message.parts:
            if part.kind == "thinking":
                text = "[redacted reasoning]" if part.is_redacted else part.text.strip()
                proof = part.signature or part.redacted or ""
                print(f"  thinking: {text or '[summary omitted]'}")
                print(
                    f"            ({'signature' if part.is_signed else 'payload'}: {len(proof)} chars)"
                )
            elif part.kind == "tool_call":
                print(f"  tool call: {part.name}({json.dumps(part.arguments)})")
            elif part.kind == "tool_result":
                print(f"  tool result: {part.content}")
            elif part.kind == "text" and message.role == "assistant" and part.text:
                print("  text: " + part.text.replace("\n", "\n        "))
        if message.usage is not None:
            u = message.usage
            print(f"  usage: {u.input_tokens} in, {u.output_tokens} out")


def tampered(messages: list[Message], index: int) -> list[Message]:
    """The same history with one character of the first signature of message `index` changed."""
    data = json.loads(dump_messages(messages))
    block = next(p for p in data[index]["parts"] if p.get("signature"))
    middle = len(block["signature"]) // 2
    swap = "A" if block["signature"][middle] != "A" else "B"
    block["signature"] = block["signature"][:middle] + swap + block["signature"][middle + 1 :]
    return load_messages(json.dumps(data))


async def main() -> None:
    with contextlib.ExitStack() as stack:
        client: Any = None  # built from the environment by BedrockModel
        if os.environ.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_PROFILE"):
            print(f"Running on AWS Bedrock with {MODEL}.")
        else:
            emulator = stack.enter_context(Emulator())
            client = emulator.bedrock_client()
            print(f"Running on the thinkagent emulator ({MODEL}); set AWS credentials for Bedrock.")
        model = BedrockModel(MODEL, client=client, thinking=ClaudeThinking.budget(2048))

        first = await Agent(model).run(QUESTION)
        show(QUESTION, first)

        agent = Agent(model, tools=[check_answer])
        second = await agent.run(FOLLOW_UP, history=first.messages)
        show(FOLLOW_UP, second)

        # The request after the tool result carried the tool-call turn's signed reasoning back,
        # byte for byte; Bedrock verified it and answered. A changed byte would be refused:
        call_turn = next(i for i, m in enumerate(second.messages) if m.tool_calls)
        replayed = sum(b.is_signed or b.is_redacted for b in second.messages[call_turn].thinking)
        print(
            f"\nReplay: the request after the tool result carried {replayed} signed reasoning "
            "block(s) back, byte for byte: verified and accepted."
        )
        try:
            await agent.run(None, history=tampered(second.messages[: call_turn + 2], call_turn))
            print("Tampered replay: accepted (unexpected!)")
        except ProviderError as error:
            print(f"Tampered replay (one character changed): refused, {error}")


if __name__ == "__main__":
    asyncio.run(main())
