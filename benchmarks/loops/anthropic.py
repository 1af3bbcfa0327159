"""Anthropic: the 2-turn thinking + tool loop, by `AsyncAnthropic` alone and through thinkagent."""

from __future__ import annotations

import json
from typing import Any

import anthropic

from thinkagent import Agent
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking

from . import agent_tools, run_tool

NAME = "anthropic"

MODEL = "claude-opus-4-7"
THINKING = ClaudeThinking.adaptive(display="summarized")
MAX_TOKENS = 4096
QUESTION = "What's the weather in Paris? I am planning a long walk along the river this afternoon."
CACHE: dict[str, Any] = {"type": "ephemeral"}
"""A cache breakpoint, where thinkagent puts its own by default: the end of the tools and of
each of the last two user turns (the raw loop caches as a careful user would)."""
TOOL: dict[str, Any] = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "cache_control": CACHE,
}


class AnthropicLoops:
    def __init__(self, base_url: str) -> None:
        self.client = anthropic.AsyncAnthropic(api_key="bench", base_url=base_url, max_retries=0)
        model = AnthropicModel(MODEL, client=self.client, thinking=THINKING, max_tokens=MAX_TOKENS)
        self.agents = {sync: Agent(model, tools=agent_tools(sync)) for sync in (False, True)}
        self.params: dict[str, Any] = {
            "model": MODEL,
            "max_tokens": MAX_TOKENS,
            "thinking": THINKING.to_param(),
            "tools": [TOOL],
        }

    async def raw(self, streamed: bool, sync: bool) -> None:
        messages: list[dict[str, Any]] = [
            {
                "role": "user",
                "content": [{"type": "text", "text": QUESTION, "cache_control": CACHE}],
            }
        ]
        for turn in range(2):
            if streamed:
                content, stop = await self._raw_stream(messages)
            else:
                response = await self.client.messages.create(**self.params, messages=messages)
                content, stop = _replayable(response.content), response.stop_reason
            if stop != "tool_use":
                if turn != 1 or stop != "end_turn":
                    raise RuntimeError(f"unexpected stop reason {stop!r} on turn {turn}")
                return
            results: list[dict[str, Any]] = []
            for block in content:
                if block["type"] == "tool_use":
                    output = await run_tool(sync, block["input"])
                    results.append(
                        {
                            "type": "tool_result",
                            "tool_use_id": block["id"],
                            "content": output,
                            "is_error": False,
                        }
                    )
            results[-1]["cache_control"] = CACHE
            messages = [
                *messages,
                {"role": "assistant", "content": content},
                {"role": "user", "content": results},
            ]
        raise RuntimeError("the loop did not end with an answer")

    async def _raw_stream(self, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Any]:
        blocks: dict[int, dict[str, Any]] = {}
        json_parts: dict[int, list[str]] = {}
        stop: Any = None
        stream = await self.client.messages.create(**self.params, messages=messages, stream=True)
        async with stream:
            async for event in stream:
                if event.type == "content_block_delta":
                    delta = event.delta
                    block = blocks[event.index]
                    if delta.type == "thinking_delta":
                        block["thinking"] += delta.thinking
                    elif delta.type == "text_delta":
                        block["text"] += delta.text
                    elif delta.type == "signature_delta":
                        block["signature"] = delta.signature
                    elif delta.type == "input_json_delta":
                        json_parts[event.index].append(delta.partial_json)
                elif event.type == "content_block_start":
                    cb = event.content_block
                    if cb.type == "thinking":
                        blocks[event.index] = {"type": "thinking", "thinking": "", "signature": ""}
                    elif cb.type == "redacted_thinking":
                        blocks[event.index] = {"type": "redacted_thinking", "data": cb.data}
                    elif cb.type == "text":
                        blocks[event.index] = {"type": "text", "text": ""}
                    elif cb.type == "tool_use":
                        blocks[event.index] = {"type": "tool_use", "id": cb.id, "name": cb.name}
                        json_parts[event.index] = []
                elif event.type == "message_delta":
                    stop = event.delta.stop_reason
        for index, parts in json_parts.items():
            text = "".join(parts)
            blocks[index]["input"] = json.loads(text) if text else {}
        content = [blocks[i] for i in sorted(blocks)]
        return [b for b in content if b["type"] != "text" or b["text"]], stop

    async def thinkagent(self, streamed: bool, sync: bool) -> None:
        if streamed:
            async with self.agents[sync].run_stream(QUESTION) as stream:
                async for _ in stream:
                    pass
            result = stream.result
        else:
            result = await self.agents[sync].run(QUESTION)
        if len(result.messages) != 4 or not result.output:
            raise RuntimeError("the loop did not end with an answer after one tool call")

    async def aclose(self) -> None:
        await self.client.close()


def _replayable(content: list[Any]) -> list[dict[str, Any]]:
    """A response's content as request blocks, by hand (empty text blocks left out)."""
    blocks: list[dict[str, Any]] = []
    for block in content:
        if block.type == "thinking":
            blocks.append(
                {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
            )
        elif block.type == "redacted_thinking":
            blocks.append({"type": "redacted_thinking", "data": block.data})
        elif block.type == "text":
            if block.text:
                blocks.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            blocks.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
    return blocks


async def setup(base_url: str) -> AnthropicLoops:
    return AnthropicLoops(base_url)
