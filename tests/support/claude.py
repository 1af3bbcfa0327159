"""Helpers shared by the Anthropic and Bedrock tests: tools, questions, and what a history's
assistant turns must look like on the wire."""

from __future__ import annotations

import base64
import json
from typing import Any, Literal

from thinkagent import (
    Agent,
    Message,
    ModelResponse,
    RunResult,
    TextPart,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
)

QUESTION = "What's the weather and the time in Paris?"
"""Makes the emulator call get_weather, then get_time, then answer: a 3-turn loop."""

MAGIC = (
    "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_"
    "46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"
)
"""The documented prompt that makes Claude return redacted thinking."""

REDACTED_QUESTION = f"{MAGIC} {QUESTION}"


async def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


async def get_time(city: str, format: Literal["24h", "12h"] = "24h") -> str:
    """Local time in a city."""
    return "14:05" if format == "24h" else "2:05 PM"


TOOLS = [get_weather, get_time]


async def run(agent: Agent, prompt: str | None, *, streamed: bool, **kw: Any) -> RunResult:
    """`agent.run`, or `agent.run_stream` read to its end."""
    if not streamed:
        return await agent.run(prompt, **kw)
    async with agent.run_stream(prompt, **kw) as stream:
        async for _ in stream:
            pass
    return stream.result


async def stream_events(agent: Agent, prompt: str) -> tuple[list[Any], RunResult]:
    events: list[Any] = []
    async with agent.run_stream(prompt) as stream:
        async for event in stream:
            events.append(event)
    return events, stream.result


def assistant_turns(result: RunResult) -> list[Message]:
    return [m for m in result.messages if m.role == "assistant"]


def check_stream_order(events: list[Any]) -> None:
    """Within each response: a thinking block's text deltas come before its signature, its
    deltas before any later part's, and a tool call's first delta carries its id and name."""
    seen_parts: list[int] = []
    signed: set[int] = set()
    tool_started: set[int] = set()
    for event in events:
        if isinstance(event, ModelResponse):
            seen_parts, signed, tool_started = [], set(), set()
            continue
        index = getattr(event, "index", None)
        if index is None:
            continue
        if not seen_parts or seen_parts[-1] != index:
            assert index not in seen_parts, "a part's deltas were interleaved with another's"
            seen_parts.append(index)
        if isinstance(event, ThinkingDelta):
            if event.signature is not None:
                signed.add(index)
            else:
                assert index not in signed or not event.text, "thinking text after its signature"
        if isinstance(event, ToolCallDelta) and index not in tool_started:
            assert event.id and event.name, "a tool call's first delta has its id and name"
            tool_started.add(index)


# --- the wire form a history must take ------------------------------------------------------


def anthropic_content(message: Message) -> list[dict[str, Any]]:
    """What an assistant message of the anthropic scope must be replayed as."""
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ThinkingBlock):
            if part.redacted is not None:
                blocks.append({"type": "redacted_thinking", "data": part.redacted})
            else:
                blocks.append(
                    {"type": "thinking", "thinking": part.text, "signature": part.signature}
                )
        elif isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCall):
            blocks.append(
                {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
            )
    return blocks


def bedrock_content(message: Message) -> list[dict[str, Any]]:
    """What an assistant message of the bedrock scope must look like in the JSON body."""
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ThinkingBlock):
            if part.redacted is not None:
                # botocore sends blobs as standard base64: the stored text, byte for byte
                data = base64.b64encode(base64.b64decode(part.redacted)).decode()
                assert data == part.redacted
                blocks.append({"reasoningContent": {"redactedContent": data}})
            else:
                blocks.append(
                    {
                        "reasoningContent": {
                            "reasoningText": {"text": part.text, "signature": part.signature}
                        }
                    }
                )
        elif isinstance(part, TextPart):
            if part.text:
                blocks.append({"text": part.text})
        elif isinstance(part, ToolCall):
            blocks.append(
                {"toolUse": {"toolUseId": part.id, "name": part.name, "input": part.arguments}}
            )
    return blocks


def without_ids(messages: list[Message]) -> list[Message]:
    return [m.model_copy(update={"id": None}) for m in messages]


def body_text(body: Any) -> str:
    return json.dumps(body)
