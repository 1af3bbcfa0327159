"""OpenAI reasoning with thinkagent (Responses API): reasoning summaries, encrypted reasoning
items, and a replay the service verifies.

    python examples/openai_thinking.py

With OPENAI_API_KEY set it talks to the real OpenAI API; without one it runs on thinkagent's
local emulator, which encrypts and verifies reasoning items the same way.
`THINKAGENT_OPENAI_MODEL` picks the model (default `gpt-5-mini`).
"""

from __future__ import annotations

import asyncio
import os
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from thinkagent import Agent, Message, TextPart, ThinkingBlock, ToolCall, Usage
from thinkagent.providers.openai_responses import OpenAIResponsesModel

MODEL = os.environ.get("THINKAGENT_OPENAI_MODEL", "gpt-5-mini")
PUZZLE = (
    "A bat and a ball cost $1.10 together. The bat costs $1.00 more than the ball. "
    "How much does the ball cost? Answer in one sentence."
)
FOLLOW_UP = "Now check the weather in Paris: is it a good afternoon for a walk?"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C, light wind"


def show(message: Message) -> None:
    """Each part of an assistant message in order: reasoning, text, calls, and their proofs."""
    for part in message.parts:
        if isinstance(part, ThinkingBlock):
            proof = f" [encrypted_content: {len(part.signature)} chars]" if part.signature else ""
            print(f"  reasoning {part.id}{proof}:")
            for line in (part.text or "(no summary text)").strip().splitlines():
                print(f"    | {line}")
        elif isinstance(part, TextPart):
            print(f"  text: {part.text.strip() or '(empty)'}")
        elif isinstance(part, ToolCall):
            print(f"  tool call: {part.name}({part.arguments})")


def show_usage(usage: Usage) -> None:
    print(
        f"  usage: {usage.input_tokens} in, {usage.output_tokens} out "
        f"({usage.thinking_tokens} reasoning), {usage.requests} request(s)"
    )


async def main() -> None:
    emulator: AbstractContextManager[Any]
    if os.environ.get("OPENAI_API_KEY"):
        print(f"Running on the OpenAI Responses API with {MODEL}.")
        emulator = nullcontext()
    else:
        from thinkagent.emulator import Emulator

        print(f"No OPENAI_API_KEY: running on the local emulator ({MODEL}).")
        emulator = Emulator()
    with emulator as emu:
        model = OpenAIResponsesModel(
            MODEL, client=emu.openai_client() if emu else None, reasoning_effort="low"
        )

        print("\n1. A question to think about (reasoning summaries on, nothing stored)")
        first = await Agent(model).run(PUZZLE)
        for message in first.new_messages:
            if message.role == "assistant":
                show(message)
        show_usage(first.usage)

        print("\n2. A follow-up with a tool: each reasoning item goes back before its item")
        second = await Agent(model, tools=[get_weather]).run(FOLLOW_UP, history=first.messages)
        for message in second.new_messages:
            if message.role == "assistant":
                show(message)
            else:
                for result in message.tool_results:
                    print(f"  tool result: {result.content}")
        show_usage(second.usage)

        items = model.build_input(second.messages[:-1])
        replayed = [i for i in items if i.get("type") == "reasoning"]
        print(
            f"\nThe last request replayed {len(replayed)} reasoning item(s) with their "
            f"encrypted_content, byte for byte, each right before the item that followed it, "
            f"and {model.provider} verified them (a changed one is refused with a 400)."
        )
        await model.client.close()


if __name__ == "__main__":
    asyncio.run(main())
