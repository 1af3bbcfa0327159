"""DeepSeek reasoning with thinkagent (an OpenAI-compatible Chat Completions endpoint):
`reasoning_content` captured as thinking, and sent back where DeepSeek requires it.

    python examples/deepseek_thinking.py

With DEEPSEEK_API_KEY set it talks to the real DeepSeek API (https://api.deepseek.com);
without one it runs on thinkagent's local emulator, which enforces DeepSeek's replay rule with
its real error. `THINKAGENT_DEEPSEEK_MODEL` picks the model (default `deepseek-reasoner`).
"""

from __future__ import annotations

import asyncio
import os
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from thinkagent import Agent, Message, TextPart, ThinkingBlock, ToolCall, Usage
from thinkagent.providers.openai import OpenAIChatModel

MODEL = os.environ.get("THINKAGENT_DEEPSEEK_MODEL", "deepseek-reasoner")
PUZZLE = (
    "A bat and a ball cost $1.10 together. The bat costs $1.00 more than the ball. "
    "How much does the ball cost? Answer in one sentence."
)
FOLLOW_UP = "Now check the weather in Paris: is it a good afternoon for a walk?"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C, light wind"


def show(message: Message) -> None:
    """Each part of an assistant message in order: reasoning, text and calls."""
    for part in message.parts:
        if isinstance(part, ThinkingBlock):
            proof = f"[signature: {len(part.signature)} chars]" if part.signature else "[no proof]"
            print(f"  reasoning_content: {proof}")
            for line in part.text.strip().splitlines():
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
    if os.environ.get("DEEPSEEK_API_KEY"):
        print(f"Running on the DeepSeek API with {MODEL}.")
        emulator = nullcontext()
    else:
        from thinkagent.emulator import Emulator

        print(f"No DEEPSEEK_API_KEY: running on the local emulator ({MODEL}).")
        emulator = Emulator()
    with emulator as emu:
        model = OpenAIChatModel(
            MODEL, client=emu.openai_client() if emu else None, dialect="deepseek"
        )

        print("\n1. A question to think about (the reasoning arrives as reasoning_content)")
        first = await Agent(model).run(PUZZLE)
        for message in first.new_messages:
            if message.role == "assistant":
                show(message)
        show_usage(first.usage)

        print("\n2. A follow-up with a tool: the tool turn's reasoning goes back with it")
        second = await Agent(model, tools=[get_weather]).run(FOLLOW_UP, history=first.messages)
        for message in second.new_messages:
            if message.role == "assistant":
                show(message)
            else:
                for result in message.tool_results:
                    print(f"  tool result: {result.content}")
        show_usage(second.usage)

        sent = model.build_messages(second.messages[:-1])
        assistant = [m for m in sent if m["role"] == "assistant"]
        replayed = [m for m in assistant if "reasoning_content" in m]
        print(
            f"\nThe last request sent {len(assistant)} assistant turn(s); {len(replayed)} carried "
            f"their reasoning_content back (the tool-call turn, as DeepSeek requires: without "
            f"it the request is refused with a 400), and the turn without tools did not."
        )
        await model.client.close()


if __name__ == "__main__":
    asyncio.run(main())
