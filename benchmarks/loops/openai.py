"""OpenAI: the 2-turn reasoning + tool loop by `AsyncOpenAI` alone and through thinkagent, on
Chat Completions (DeepSeek dialect: `reasoning_content` captured and sent back) and on the
Responses API (encrypted reasoning items replayed). This module is the Chat Completions row;
`openai_responses.py` adds the Responses row with `ResponsesLoops` from here."""

from __future__ import annotations

import json
from typing import Any

import openai

from thinkagent import Agent
from thinkagent.providers.openai import OpenAIChatModel, OpenAIResponsesModel

from . import agent_tools, run_tool

NAME = "openai-chat"

CHAT_MODEL = "deepseek-reasoner"
RESPONSES_MODEL = "gpt-5"
QUESTION = "What's the weather in Paris? I am planning a long walk along the river this afternoon."
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
CHAT_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": SCHEMA,
    },
}
RESPONSES_TOOL: dict[str, Any] = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": SCHEMA,
    "strict": False,
}


def _client(base_url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key="bench", base_url=base_url + "/v1", max_retries=0)


class ChatLoops:
    def __init__(self, base_url: str) -> None:
        self.client = _client(base_url)
        model = OpenAIChatModel(CHAT_MODEL, client=self.client, dialect="deepseek")
        self.agents = {sync: Agent(model, tools=agent_tools(sync)) for sync in (False, True)}

    async def raw(self, streamed: bool, sync: bool) -> None:
        messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
        for turn in range(2):
            if streamed:
                assistant, finish = await self._raw_stream(messages)
            else:
                completion = await self.client.chat.completions.create(
                    model=CHAT_MODEL, messages=messages, tools=[CHAT_TOOL]
                )
                choice = completion.choices[0]
                message = choice.message
                assistant = {"role": "assistant", "content": message.content}
                reasoning = (message.model_extra or {}).get("reasoning_content")
                if reasoning:
                    assistant["reasoning_content"] = reasoning
                if message.tool_calls:
                    assistant["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {
                                "name": c.function.name,
                                "arguments": c.function.arguments,
                            },
                        }
                        for c in message.tool_calls
                        if c.type == "function"
                    ]
                finish = choice.finish_reason
            if finish != "tool_calls":
                if turn != 1 or finish != "stop":
                    raise RuntimeError(f"unexpected finish reason {finish!r} on turn {turn}")
                return
            results = [
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "content": await run_tool(sync, json.loads(call["function"]["arguments"])),
                }
                for call in assistant["tool_calls"]
            ]
            messages = [*messages, assistant, *results]
        raise RuntimeError("the loop did not end with an answer")

    async def _raw_stream(self, messages: list[dict[str, Any]]) -> tuple[dict[str, Any], Any]:
        reasoning: list[str] = []
        content: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish: Any = None
        stream = await self.client.chat.completions.create(
            model=CHAT_MODEL,
            messages=messages,
            tools=[CHAT_TOOL],
            stream=True,
            stream_options={"include_usage": True},
        )
        async with stream:
            async for chunk in stream:
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                delta = choice.delta
                extra = delta.model_extra
                if extra and extra.get("reasoning_content"):
                    reasoning.append(extra["reasoning_content"])
                if delta.content:
                    content.append(delta.content)
                for call in delta.tool_calls or ():
                    entry = calls.get(call.index)
                    if entry is None:
                        entry = calls[call.index] = {"id": call.id, "name": "", "arguments": []}
                    if call.function is not None:
                        if call.function.name:
                            entry["name"] = call.function.name
                        if call.function.arguments:
                            entry["arguments"].append(call.function.arguments)
                if choice.finish_reason is not None:
                    finish = choice.finish_reason
        assistant: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
        if reasoning:
            assistant["reasoning_content"] = "".join(reasoning)
        if calls:
            assistant["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": "".join(c["arguments"])},
                }
                for _, c in sorted(calls.items())
            ]
        return assistant, finish

    async def thinkagent(self, streamed: bool, sync: bool) -> None:
        await _agent_loop(self.agents[sync], streamed)

    async def aclose(self) -> None:
        await self.client.close()


class ResponsesLoops:
    def __init__(self, base_url: str) -> None:
        self.client = _client(base_url)
        model = OpenAIResponsesModel(RESPONSES_MODEL, client=self.client)
        self.agents = {sync: Agent(model, tools=agent_tools(sync)) for sync in (False, True)}
        self.params: dict[str, Any] = {
            "model": RESPONSES_MODEL,
            "tools": [RESPONSES_TOOL],
            "reasoning": {"summary": "auto"},
            "store": False,
            "include": ["reasoning.encrypted_content"],
        }

    async def raw(self, streamed: bool, sync: bool) -> None:
        items: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
        for turn in range(2):
            if streamed:
                output, status = await self._raw_stream(items)
            else:
                response = await self.client.responses.create(**self.params, input=items)
                output, status = list(response.output), response.status
            calls = [item for item in output if item.type == "function_call"]
            if not calls:
                if turn != 1 or status != "completed":
                    raise RuntimeError(f"unexpected status {status!r} on turn {turn}")
                return
            items = [*items, *replayable(output)]
            for call in calls:
                output_text = await run_tool(sync, json.loads(call.arguments))
                items.append(
                    {"type": "function_call_output", "call_id": call.call_id, "output": output_text}
                )
        raise RuntimeError("the loop did not end with an answer")

    async def _raw_stream(self, items: list[dict[str, Any]]) -> tuple[list[Any], Any]:
        done: dict[int, Any] = {}
        status: Any = None
        stream = await self.client.responses.create(**self.params, input=items, stream=True)
        async with stream:
            async for event in stream:
                if event.type == "response.output_item.done":
                    done[event.output_index] = event.item
                elif event.type == "response.completed":
                    status = event.response.status
        return [done[i] for i in sorted(done)], status

    async def thinkagent(self, streamed: bool, sync: bool) -> None:
        await _agent_loop(self.agents[sync], streamed)

    async def aclose(self) -> None:
        await self.client.close()


def replayable(output: list[Any]) -> list[dict[str, Any]]:
    """Output items as input items, by hand: reasoning in full, before the item after it."""
    items: list[dict[str, Any]] = []
    for item in output:
        if item.type == "reasoning":
            reasoning: dict[str, Any] = {
                "type": "reasoning",
                "id": item.id,
                "summary": [{"type": "summary_text", "text": s.text} for s in item.summary],
            }
            if item.encrypted_content is not None:
                reasoning["encrypted_content"] = item.encrypted_content
            items.append(reasoning)
        elif item.type == "function_call":
            items.append(
                {
                    "type": "function_call",
                    "id": item.id,
                    "call_id": item.call_id,
                    "name": item.name,
                    "arguments": item.arguments,
                }
            )
    return items


async def _agent_loop(agent: Agent, streamed: bool) -> None:
    if streamed:
        async with agent.run_stream(QUESTION) as stream:
            async for _ in stream:
                pass
        result = stream.result
    else:
        result = await agent.run(QUESTION)
    if len(result.messages) != 4 or not result.output:
        raise RuntimeError("the loop did not end with an answer after one tool call")


async def setup(base_url: str) -> ChatLoops:
    return ChatLoops(base_url)
