"""Bedrock: the 2-turn thinking + tool loop, by boto3 alone and through thinkagent.

boto3 is synchronous, so the raw loop uses it the way an asyncio program must: each
`converse` call in a worker thread (`asyncio.to_thread`), and each `converse_stream` read in
a worker thread that hands every event to the event loop through an `asyncio.Queue`
(`loop.call_soon_threadsafe`), the usual recipe for boto3 in asyncio. The reference
row calls boto3 on the event loop's own thread (no worker thread at all: it blocks the loop,
which no asyncio program can afford, so it is shown for information and not held to the
target).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import boto3
from botocore.config import Config

from thinkagent import Agent
from thinkagent.providers.bedrock import BedrockModel, ClaudeThinking

from . import agent_tools, run_tool

NAME = "bedrock"
REFERENCE = "boto3 on the loop thread"

MODEL = "us.anthropic.claude-sonnet-4-6"
THINKING = ClaudeThinking.adaptive(display="summarized")
MAX_TOKENS = 4096
QUESTION = "What's the weather in Paris? I am planning a long walk along the river this afternoon."
TOOL_CONFIG: dict[str, Any] = {
    "tools": [
        {
            "toolSpec": {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "inputSchema": {
                    "json": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                        "additionalProperties": False,
                    }
                },
            }
        },
        {"cachePoint": {"type": "default"}},
    ]
}
CACHE_POINT: dict[str, Any] = {"cachePoint": {"type": "default"}}
"""A cache point, where thinkagent puts its own by default: after the tools and after each of
the last two user turns (the raw loop caches as a careful user would)."""


class _Fold:
    """Folds ConverseStream events into the assistant content to replay, by hand."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.stop: Any = None
        self.metadata = False

    def add(self, event: dict[str, Any]) -> None:
        if "contentBlockDelta" in event:
            body = event["contentBlockDelta"]
            delta = body["delta"]
            block = self.blocks.setdefault(body["contentBlockIndex"], {})
            if "text" in delta:
                block["text"] = block.get("text", "") + delta["text"]
            elif "reasoningContent" in delta:
                reasoning = delta["reasoningContent"]
                if "redactedContent" in reasoning:
                    block["redacted"] = reasoning["redactedContent"]
                else:
                    block["reasoning"] = block.get("reasoning", "") + reasoning.get("text", "")
                    if "signature" in reasoning:
                        block["signature"] = reasoning["signature"]
            elif "toolUse" in delta:
                block["input"] = block.get("input", "") + delta["toolUse"]["input"]
        elif "contentBlockStart" in event:
            body = event["contentBlockStart"]
            use = body["start"].get("toolUse")
            if use is not None:
                self.blocks[body["contentBlockIndex"]] = {
                    "id": use["toolUseId"],
                    "name": use["name"],
                }
        elif "messageStop" in event:
            self.stop = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            self.metadata = True

    def result(self) -> tuple[list[dict[str, Any]], Any]:
        if not self.metadata:
            raise RuntimeError("the stream ended early")
        content: list[dict[str, Any]] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if "id" in block:
                text = block.get("input", "")
                content.append(
                    {
                        "toolUse": {
                            "toolUseId": block["id"],
                            "name": block["name"],
                            "input": json.loads(text) if text else {},
                        }
                    }
                )
            elif "redacted" in block:
                content.append({"reasoningContent": {"redactedContent": block["redacted"]}})
            elif "signature" in block:
                reasoning = {"text": block.get("reasoning", ""), "signature": block["signature"]}
                content.append({"reasoningContent": {"reasoningText": reasoning}})
            elif block.get("text"):
                content.append({"text": block["text"]})
        return content, self.stop


class BedrockLoops:
    def __init__(self, base_url: str) -> None:
        self.client: Any = boto3.client(
            "bedrock-runtime",
            region_name="us-east-1",
            endpoint_url=base_url,
            aws_access_key_id="AKIABENCH",
            aws_secret_access_key="bench",
            config=Config(retries={"total_max_attempts": 1}),
        )
        model = BedrockModel(MODEL, client=self.client, thinking=THINKING, max_tokens=MAX_TOKENS)
        self.agents = {sync: Agent(model, tools=agent_tools(sync)) for sync in (False, True)}
        self.params: dict[str, Any] = {
            "modelId": MODEL,
            "inferenceConfig": {"maxTokens": MAX_TOKENS},
            "additionalModelRequestFields": {"thinking": THINKING.to_param()},
            "toolConfig": TOOL_CONFIG,
        }

    async def raw(self, streamed: bool, sync: bool) -> None:
        await self._loop(streamed, sync, threaded=True)

    async def reference(self, streamed: bool, sync: bool) -> None:
        await self._loop(streamed, sync, threaded=False)

    async def _loop(self, streamed: bool, sync: bool, *, threaded: bool) -> None:
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": [{"text": QUESTION}, CACHE_POINT]}
        ]
        for turn in range(2):
            if streamed:
                fold = _Fold()
                if threaded:
                    await self._stream_threaded(messages, fold)
                else:
                    for event in self.client.converse_stream(**self.params, messages=messages)[
                        "stream"
                    ]:
                        fold.add(event)
                content, stop = fold.result()
            else:
                if threaded:
                    response = await asyncio.to_thread(
                        self.client.converse, **self.params, messages=messages
                    )
                else:
                    response = self.client.converse(**self.params, messages=messages)
                content = [
                    b for b in response["output"]["message"]["content"] if b.get("text") != ""
                ]
                stop = response["stopReason"]
            if stop != "tool_use":
                if turn != 1 or stop != "end_turn":
                    raise RuntimeError(f"unexpected stop reason {stop!r} on turn {turn}")
                return
            results: list[dict[str, Any]] = []
            for block in content:
                if "toolUse" in block:
                    use = block["toolUse"]
                    output = await run_tool(sync, use["input"])
                    results.append(
                        {
                            "toolResult": {
                                "toolUseId": use["toolUseId"],
                                "content": [{"text": output}],
                                "status": "success",
                            }
                        }
                    )
            messages = [
                *messages,
                {"role": "assistant", "content": content},
                {"role": "user", "content": [*results, CACHE_POINT]},
            ]
        raise RuntimeError("the loop did not end with an answer")

    async def _stream_threaded(self, messages: list[dict[str, Any]], fold: _Fold) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        end = object()

        def pump() -> None:
            try:
                response = self.client.converse_stream(**self.params, messages=messages)
                for event in response["stream"]:
                    loop.call_soon_threadsafe(queue.put_nowait, event)
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, end)

        done = loop.run_in_executor(None, pump)
        while (event := await queue.get()) is not end:
            fold.add(event)
        await done

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
        self.client.close()


async def setup(base_url: str) -> BedrockLoops:
    return BedrockLoops(base_url)
