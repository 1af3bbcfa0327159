"""Gemini thinking with thinkagent: thought summaries, thought signatures, and a replay the
service verifies.

    python examples/gemini_thinking.py

With GEMINI_API_KEY (or GOOGLE_API_KEY) set it talks to the real Gemini API; without one it
runs on thinkagent's local emulator, which signs and verifies thought signatures the same way.
`THINKAGENT_GEMINI_MODEL` picks the model (default `gemini-3-flash-preview`).
"""

from __future__ import annotations

import asyncio
import os
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from thinkagent import Agent, Message, TextPart, ThinkingBlock, ToolCall, Usage
from thinkagent.providers.gemini import GeminiModel

MODEL = os.environ.get("THINKAGENT_GEMINI_MODEL", "gemini-3-flash-preview")
PUZZLE = (
    "A bat and a ball cost $1.10 together. The bat costs $1.00 more than the ball. "
    "How much does the ball cost? Answer in one sentence."
)
FOLLOW_UP = "Now check the weather in Paris: is it a good afternoon for a walk?"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C, light wind"


def show(message: Message) -> None:
    """Each part of an assistant message in order: thoughts, text, calls, and their proofs."""
    for part in message.parts:
        proof = f"  [signature: {len(part.signature)} chars]" if part.signature else ""
        if isinstance(part, ThinkingBlock):
            print(f"  thought:{proof}")
            for line in (part.text or "(no summary text)").strip().splitlines():
                print(f"    | {line}")
        elif isinstance(part, TextPart):
            print(f"  text: {part.text.strip() or '(empty)'}{proof}")
        elif isinstance(part, ToolCall):
            print(f"  tool call: {part.name}({part.arguments}){proof}")


def show_usage(usage: Usage) -> None:
    print(
        f"  usage: {usage.input_tokens} in, {usage.output_tokens} out "
        f"({usage.thinking_tokens} thinking), {usage.requests} request(s)"
    )


async def main() -> None:
    key = os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
    emulator: AbstractContextManager[Any]
    if key:
        print(f"Running on the Gemini API with {MODEL}.")
        emulator = nullcontext()
    else:
        from thinkagent.emulator import Emulator

        print(f"No GEMINI_API_KEY / GOOGLE_API_KEY: running on the local emulator ({MODEL}).")
        emulator = Emulator()
    with emulator as emu:
        model = GeminiModel(MODEL, client=emu.gemini_client() if emu else None)

        print("\n1. A question to think about (thought summaries on)")
        first = await Agent(model).run(PUZZLE)
        for message in first.new_messages:
            if message.role == "assistant":
                show(message)
        show_usage(first.usage)

        print("\n2. A follow-up with a tool: the earlier turn goes back with its signatures")
        second = await Agent(model, tools=[get_weather]).run(FOLLOW_UP, history=first.messages)
        for message in second.new_messages:
            if message.role == "assistant":
                show(message)
            else:
                for result in message.tool_results:
                    print(f"  tool result: {result.content}")
        show_usage(second.usage)

        replayed = [
            part
            for content in model.build_contents(second.messages[:-1])
            for part in content.parts or ()
            if part.thought_signature is not None
        ]
        print(
            f"\nThe last request replayed {len(replayed)} signed part(s), each on the part it "
            f"came on, byte for byte, and {model.provider} verified them (a changed or missing "
            "function-call signature is refused with a 400)."
        )
        await model.client.aio.aclose()


if __name__ == "__main__":
    asyncio.run(main())
