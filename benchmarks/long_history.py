"""Client CPU per request on a long conversation: the bare vendor SDK and thinkagent side by
side, against the floor, `json.dumps` of the same request body, on every wire API.

    python benchmarks/long_history.py [--processes 3] [--loops 3] [--sizes 12 100 500 1000]
                                      [--only anthropic responses]

A conversation is grown through thinkagent against a standalone emulator process (so its CPU is
not the client's), one 2-turn thinking + tool loop (four messages) at a time, to each size (in
messages). Then, on that history, the same 2-request loop (a question, a tool call, its
result, the answer) is timed with `time.process_time` (this process, all its threads): by the
vendor SDK alone, its history kept in the SDK's wire form as a careful user keeps it (`raw`),
and through `thinkagent.Agent.run(question, history=...)`. The floor is `json.dumps` of the two
request bodies the client sent (read back from its HTTP client), per request. Each figure is the
median over `--loops` loops in one process, then the median over `--processes` worker processes
(the ratios move more between processes than within one). Beside each, the garbage collector's
work during thinkagent's loops: collections of the oldest generation and milliseconds spent in
the collector, per request.

Targets at 1,000 messages on every wire API: thinkagent at most 3x the floor and at most 1.0x the
raw SDK; per-request cost linear in the new messages plus the JSON encoding (compare the rows).
Exits non-zero when a 1,000-message row misses one of them.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from loops import run_tool
from loops.openai import replayable
from overhead import pin_client, start_emulator, stop_emulator

from thinkagent import Agent, Message

QUESTION = "What's the weather in Paris? I am planning a long walk along the river this afternoon."
SIZES = (12, 100, 500, 1000)
"""History sizes in messages (a multiple of the four messages of one loop)."""
TARGET_SIZE = 1000
FLOOR_TARGET = 3.0
RAW_TARGET = 1.0
KEY = "bench"
TIMEOUT = 600.0
"""Seconds a client waits for an answer (the emulator takes its time on long histories)."""


async def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


class Wire:
    """One wire API: a thinkagent agent and the same loop by the bare SDK.

    `bodies` collects the JSON request bodies the client sends (its HTTP client's hook), for the
    floor; `raw(prefix)` runs the raw loop after `prefix`, the history in the SDK's wire form
    (`prefix_of`)."""

    name = ""
    bodies: list[bytes]
    agent: Agent[Any, Any]

    def prefix_of(self, history: list[Message]) -> list[Any]:
        build: Callable[[list[Message]], list[Any]] = getattr(  # noqa: B009 (not in the protocol)
            self.agent.model, "build_messages"
        )
        return list(build(history))

    async def raw(self, prefix: list[Any]) -> None:
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError


def _httpx_hook(bodies: list[bytes]) -> Callable[[Any], Any]:
    async def hook(request: Any) -> None:
        bodies.append(request.content)

    return hook


def _stripped(value: Any, key: str) -> Any:
    """`value` without `key` at any depth (the cache markers of a replayed prefix)."""
    if isinstance(value, dict):
        return {k: _stripped(v, key) for k, v in value.items() if k != key}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_stripped(v, key) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


class AnthropicWire(Wire):
    model_name = "claude-sonnet-4-5"

    def __init__(self, url: str, name: str = "anthropic", model_name: str | None = None) -> None:
        import anthropic

        from thinkagent.providers.claude import AnthropicModel, ClaudeThinking

        self.name = name
        self.model_name = model_name or self.model_name
        self.bodies = []
        http = anthropic.DefaultAsyncHttpxClient(
            event_hooks={"request": [_httpx_hook(self.bodies)]}
        )
        self.client = anthropic.AsyncAnthropic(
            api_key=KEY, base_url=url, max_retries=0, http_client=http
        )
        preserved = model_name is not None
        thinking = ClaudeThinking.adaptive() if preserved else ClaudeThinking.budget(2048)
        model = AnthropicModel(self.model_name, client=self.client, thinking=thinking)
        self.agent = Agent(model, tools=[get_weather])
        self.params: dict[str, Any] = {
            "model": self.model_name,
            "max_tokens": model.max_tokens,
            "thinking": thinking.to_param(),
            "tools": [
                {
                    "name": "get_weather",
                    "input_schema": self.agent.tools["get_weather"].definition.parameters,
                    "description": "Current weather for a city.",
                    "cache_control": {"type": "ephemeral"},
                }
            ],
        }

    def prefix_of(self, history: list[Message]) -> list[Any]:
        return _stripped(super().prefix_of(history), "cache_control")

    async def raw(self, prefix: list[Any]) -> None:
        mark = {"type": "ephemeral"}
        messages = [
            *prefix,
            {
                "role": "user",
                "content": [{"type": "text", "text": QUESTION, "cache_control": mark}],
            },
        ]
        for turn in range(2):
            response = await self.client.messages.create(**self.params, messages=messages)
            content: list[dict[str, Any]] = []
            results: list[dict[str, Any]] = []
            for block in response.content:
                if block.type == "thinking":
                    content.append(
                        {
                            "type": "thinking",
                            "thinking": block.thinking,
                            "signature": block.signature,
                        }
                    )
                elif block.type == "text" and block.text:
                    content.append({"type": "text", "text": block.text})
                elif block.type == "tool_use":
                    content.append(
                        {
                            "type": "tool_use",
                            "id": block.id,
                            "name": block.name,
                            "input": block.input,
                        }
                    )
                    output = await run_tool(False, block.input)  # pyright: ignore[reportArgumentType]
                    results.append(
                        {"type": "tool_result", "tool_use_id": block.id, "content": output}
                    )
            if not results:
                _answered(turn, response.stop_reason == "end_turn")
                return
            results[-1]["cache_control"] = mark
            messages = [
                *messages,
                {"role": "assistant", "content": content},
                {"role": "user", "content": results},
            ]
        raise RuntimeError("the raw loop did not end with an answer")

    async def aclose(self) -> None:
        await self.client.close()


class BedrockWire(Wire):
    name = "bedrock"
    model_name = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

    def __init__(self, url: str) -> None:
        import boto3
        from botocore.config import Config

        from thinkagent.providers.bedrock import BedrockModel, ClaudeThinking

        self.bodies = []
        self.client: Any = boto3.client(
            "bedrock-runtime",
            region_name="us-east-1",
            endpoint_url=url,
            aws_access_key_id="AKIABENCH",
            aws_secret_access_key=KEY,
            config=Config(retries={"total_max_attempts": 1}, read_timeout=TIMEOUT),
        )

        def hook(request: Any, **_: Any) -> None:
            self.bodies.append(request.body)

        self.client.meta.events.register("before-send.bedrock-runtime", hook)
        thinking = ClaudeThinking.budget(2048)
        model = BedrockModel(self.model_name, client=self.client, thinking=thinking)
        self.agent = Agent(model, tools=[get_weather])
        tool = self.agent.tools["get_weather"].definition
        self.params: dict[str, Any] = {
            "modelId": self.model_name,
            "inferenceConfig": {"maxTokens": model.max_tokens},
            "additionalModelRequestFields": {"thinking": thinking.to_param()},
            "toolConfig": {
                "tools": [
                    {
                        "toolSpec": {
                            "name": tool.name,
                            "description": tool.description,
                            "inputSchema": {"json": tool.parameters},
                        }
                    },
                    {"cachePoint": {"type": "default"}},
                ]
            },
        }

    def prefix_of(self, history: list[Message]) -> list[Any]:
        return [
            {**m, "content": [b for b in m["content"] if "cachePoint" not in b]}
            for m in super().prefix_of(history)
        ]

    async def raw(self, prefix: list[Any]) -> None:
        point = {"cachePoint": {"type": "default"}}
        messages = [*prefix, {"role": "user", "content": [{"text": QUESTION}, point]}]
        for turn in range(2):
            response = await asyncio.to_thread(
                self.client.converse, **self.params, messages=messages
            )
            content = [b for b in response["output"]["message"]["content"] if b.get("text") != ""]
            results: list[dict[str, Any]] = []
            for block in content:
                if "toolUse" in block:
                    use = block["toolUse"]
                    output = await run_tool(False, use["input"])
                    results.append(
                        {
                            "toolResult": {
                                "toolUseId": use["toolUseId"],
                                "content": [{"text": output}],
                                "status": "success",
                            }
                        }
                    )
            if not results:
                _answered(turn, response["stopReason"] == "end_turn")
                return
            messages = [
                *messages,
                {"role": "assistant", "content": content},
                {"role": "user", "content": [*results, point]},
            ]
        raise RuntimeError("the raw loop did not end with an answer")

    async def aclose(self) -> None:
        self.client.close()


class GeminiWire(Wire):
    name = "gemini"
    model_name = "gemini-3-pro-preview"

    def __init__(self, url: str) -> None:
        import httpx2
        from google import genai
        from google.genai import types

        from thinkagent.providers.gemini import GeminiModel

        self.bodies = []
        self.http = httpx2.AsyncClient(event_hooks={"request": [_httpx_hook(self.bodies)]})
        self.client = genai.Client(
            api_key=KEY,
            http_options=types.HttpOptions(
                base_url=url,
                api_version="v1beta",
                httpx_async_client=self.http,
                timeout=int(TIMEOUT * 1000),
            ),
        )
        self.agent = Agent(GeminiModel(self.model_name, client=self.client), tools=[get_weather])
        tool = self.agent.tools["get_weather"].definition
        self.config = types.GenerateContentConfig(
            tools=[
                types.Tool(
                    function_declarations=[
                        types.FunctionDeclaration(
                            name=tool.name,
                            description=tool.description,
                            parameters_json_schema=tool.parameters,
                        )
                    ]
                )
            ],
            thinking_config=types.ThinkingConfig(include_thoughts=True),
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )

    async def raw(self, prefix: list[Any]) -> None:
        from google.genai import types

        contents = [*prefix, types.Content(role="user", parts=[types.Part(text=QUESTION)])]
        for turn in range(2):
            response = await self.client.aio.models.generate_content(
                model=self.model_name, contents=contents, config=self.config
            )
            content = (response.candidates or [])[0].content
            calls = [p.function_call for p in (content.parts or [])] if content else []
            calls = [c for c in calls if c is not None]
            if not calls:
                _answered(turn, True)
                return
            results = [
                types.Part(
                    function_response=types.FunctionResponse(
                        id=call.id,
                        name=call.name,
                        response={"output": await run_tool(False, call.args or {})},
                    )
                )
                for call in calls
            ]
            assert content is not None
            contents = [*contents, content, types.Content(role="user", parts=results)]
        raise RuntimeError("the raw loop did not end with an answer")

    async def aclose(self) -> None:
        await self.client.aio.aclose()
        await self.http.aclose()


class InteractionsWire(GeminiWire):
    name = "interactions"

    def __init__(self, url: str) -> None:
        super().__init__(url)
        from thinkagent.providers.gemini import GeminiInteractionsModel

        model = GeminiInteractionsModel(self.model_name, client=self.client)
        self.agent = Agent(model, tools=[get_weather])
        tool = self.agent.tools["get_weather"].definition
        self.params: dict[str, Any] = {
            "model": self.model_name,
            "store": False,
            "tools": [
                {
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                }
            ],
            "generation_config": {"thinking_summaries": "auto"},
        }

    async def raw(self, prefix: list[Any]) -> None:
        steps: list[Any] = [
            *prefix,
            {"type": "user_input", "content": [{"type": "text", "text": QUESTION}]},
        ]
        for turn in range(2):
            interaction: Any = await self.client.aio.interactions.create(  # pyright: ignore[reportUnknownMemberType]
                **self.params, input=steps
            )
            output = [s.model_dump(mode="json", exclude_none=True) for s in interaction.steps or ()]
            calls = [s for s in output if s.get("type") == "function_call"]
            if not calls:
                _answered(turn, True)
                return
            steps = [*steps, *output]
            for call in calls:
                steps.append(
                    {
                        "type": "function_result",
                        "call_id": call["id"],
                        "name": call["name"],
                        "result": await run_tool(False, call.get("arguments") or {}),
                    }
                )
        raise RuntimeError("the raw loop did not end with an answer")


class ChatWire(Wire):
    name = "openai-chat"
    model_name = "deepseek-reasoner"

    def __init__(self, url: str) -> None:
        import openai

        from thinkagent.providers.openai import OpenAIChatModel

        self.bodies = []
        http = openai.DefaultAsyncHttpxClient(event_hooks={"request": [_httpx_hook(self.bodies)]})
        self.client = openai.AsyncOpenAI(
            api_key=KEY, base_url=url + "/v1", max_retries=0, http_client=http, timeout=TIMEOUT
        )
        model = OpenAIChatModel(self.model_name, client=self.client, dialect="deepseek")
        self.agent = Agent(model, tools=[get_weather])
        tool = self.agent.tools["get_weather"].definition
        self.tools = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "parameters": tool.parameters,
                    "description": tool.description,
                },
            }
        ]

    async def raw(self, prefix: list[Any]) -> None:
        messages = [*prefix, {"role": "user", "content": QUESTION}]
        for turn in range(2):
            completion = await self.client.chat.completions.create(
                model=self.model_name, messages=messages, tools=self.tools
            )
            message = completion.choices[0].message
            calls = [c for c in message.tool_calls or () if c.type == "function"]
            if not calls:
                _answered(turn, completion.choices[0].finish_reason == "stop")
                return
            assistant: dict[str, Any] = {
                "role": "assistant",
                "content": message.content,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in calls
                ],
            }
            reasoning = (message.model_extra or {}).get("reasoning_content")
            if reasoning:
                assistant["reasoning_content"] = reasoning
            results = [
                {
                    "role": "tool",
                    "tool_call_id": c.id,
                    "content": await run_tool(False, json.loads(c.function.arguments)),
                }
                for c in calls
            ]
            messages = [*messages, assistant, *results]
        raise RuntimeError("the raw loop did not end with an answer")

    async def aclose(self) -> None:
        await self.client.close()


class ResponsesWire(Wire):
    name = "responses"
    model_name = "gpt-5"

    def __init__(self, url: str) -> None:
        import openai

        from thinkagent.providers.openai import OpenAIResponsesModel

        self.bodies = []
        http = openai.DefaultAsyncHttpxClient(event_hooks={"request": [_httpx_hook(self.bodies)]})
        self.client = openai.AsyncOpenAI(
            api_key=KEY, base_url=url + "/v1", max_retries=0, http_client=http, timeout=TIMEOUT
        )
        self.agent = Agent(
            OpenAIResponsesModel(self.model_name, client=self.client), tools=[get_weather]
        )
        tool = self.agent.tools["get_weather"].definition
        self.params: dict[str, Any] = {
            "model": self.model_name,
            "store": False,
            "include": ["reasoning.encrypted_content"],
            "reasoning": {"summary": "auto"},
            "tools": [
                {
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "strict": False,
                }
            ],
        }

    async def raw(self, prefix: list[Any]) -> None:
        items = [*prefix, {"role": "user", "content": QUESTION}]
        for turn in range(2):
            response = await self.client.responses.create(**self.params, input=items)
            calls = [i for i in response.output if i.type == "function_call"]
            if not calls:
                _answered(turn, response.status == "completed")
                return
            items += replayable(response.output)
            for call in calls:
                output = await run_tool(False, json.loads(call.arguments))
                items.append(
                    {"type": "function_call_output", "call_id": call.call_id, "output": output}
                )
        raise RuntimeError("the raw loop did not end with an answer")

    async def aclose(self) -> None:
        await self.client.close()


WIRES: dict[str, Callable[[str], Wire]] = {
    "anthropic": AnthropicWire,
    "anthropic-5-5": lambda url: AnthropicWire(url, "anthropic-5-5", "claude-opus-5-5"),
    "bedrock": BedrockWire,
    "gemini": GeminiWire,
    "interactions": InteractionsWire,
    "openai-chat": ChatWire,
    "responses": ResponsesWire,
}
"""Every wire API (`anthropic-5-5`: a model with preserved thinking, whose replayed thinking is
checked against its prefix on every request)."""


def _answered(turn: int, stopped: bool) -> None:
    if turn != 1 or not stopped:
        raise RuntimeError(f"the raw loop ended on turn {turn} without its answer")


class GCWatch:
    """The collector's work while it is on: collections of generation 2, and the CPU time spent
    in every collection."""

    def __init__(self) -> None:
        self.oldest = 0
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.seconds += time.process_time() - self._started
            self.oldest += info["generation"] == 2

    def __enter__(self) -> GCWatch:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self)


def _floor(bodies: list[bytes]) -> float:
    """CPU seconds of `json.dumps` per body, on the parsed bodies."""
    parsed = [json.loads(b) for b in bodies]
    started = time.process_time()
    for _ in range(5):
        for body in parsed:
            json.dumps(body)
    return (time.process_time() - started) / 5 / len(parsed)


async def _measure(wire: Wire, sizes: list[int], loops: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    history: list[Message] = []
    for size in sorted(sizes):
        while len(history) < size:  # the conversation grows one loop (four messages) at a time
            history = (await wire.agent.run(QUESTION, history=history)).messages
        prefix = wire.prefix_of(history)

        async def thinkagent(history: list[Message] = history) -> None:
            result = await wire.agent.run(QUESTION, history=history)
            if len(result.new_messages) != 4:
                raise RuntimeError(f"{wire.name}: the agent loop did not make one tool call")

        async def raw(prefix: list[Any] = prefix) -> None:
            await wire.raw(prefix)

        for warm in (raw, thinkagent):
            await warm()
        cpu: dict[str, list[float]] = {"raw": [], "thinkagent": []}
        gc_oldest: list[int] = []
        gc_ms: list[float] = []
        floors: list[float] = []
        for _ in range(loops):
            for name, loop in (("raw", raw), ("thinkagent", thinkagent)):
                wire.bodies.clear()
                with GCWatch() as watch:
                    started = time.process_time()
                    await loop()
                    cpu[name].append((time.process_time() - started) / 2)
                if name == "thinkagent":
                    gc_oldest.append(watch.oldest)
                    gc_ms.append(watch.seconds * 1e3 / 2)
                    floors.append(_floor(wire.bodies[-2:]))
        rows.append(
            {
                "wire": wire.name,
                "size": len(history),
                "raw": statistics.median(cpu["raw"]),
                "thinkagent": statistics.median(cpu["thinkagent"]),
                "floor": statistics.median(floors),
                "gc_oldest": statistics.median(gc_oldest) / 2,
                "gc_ms": statistics.median(gc_ms),
            }
        )
    return rows


async def _worker(url: str, names: list[str], sizes: list[int], loops: int) -> None:
    for name in names:
        wire = WIRES[name](url)
        try:
            for row in await _measure(wire, sizes, loops):
                print(json.dumps(row), flush=True)
        finally:
            await wire.aclose()


def _run_workers(args: argparse.Namespace, url: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    command = [
        sys.executable,
        __file__,
        "--worker",
        url,
        "--loops",
        str(args.loops),
        "--sizes",
        *map(str, args.sizes),
        "--only",
        *args.only,
    ]
    for number in range(args.processes):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"worker {number} failed:\n{done.stdout}\n{done.stderr}")
        rows += [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        print(f"  (process {number + 1} of {args.processes} done)", file=sys.stderr, flush=True)
    return rows


def _report(rows: list[dict[str, Any]], names: list[str], sizes: list[int]) -> int:
    print(
        "client CPU per request on a history of N messages (medians over processes); floor = "
        "json.dumps of the request body"
    )
    header = (
        f"{'wire':<14} {'N':>5} {'raw':>10} {'thinkagent':>11} {'floor':>9} "
        f"{'/floor':>7} {'/raw':>6} {'gen2/req':>8} {'gc ms/req':>9}"
    )
    print(header)
    missed: list[str] = []
    judged = 0  # rows at the target size
    for name in names:
        for size in sizes:
            group = [r for r in rows if r["wire"] == name and r["size"] == -(-size // 4) * 4]
            if not group:
                continue

            def med(key: str, group: list[dict[str, Any]] = group) -> float:
                return statistics.median(r[key] for r in group)

            agent, raw, floor = med("thinkagent"), med("raw"), med("floor")
            by_floor = statistics.median(r["thinkagent"] / r["floor"] for r in group)
            by_raw = statistics.median(r["thinkagent"] / r["raw"] for r in group)
            actual = group[0]["size"]
            print(
                f"{name:<14} {actual:>5} {raw * 1e3:>8.2f}ms {agent * 1e3:>9.2f}ms "
                f"{floor * 1e3:>7.3f}ms {by_floor:>6.1f}x {by_raw:>5.2f}x "
                f"{med('gc_oldest'):>8.2f} {med('gc_ms'):>9.2f}",
                flush=True,
            )
            judged += actual >= TARGET_SIZE
            if actual >= TARGET_SIZE and (by_floor > FLOOR_TARGET or by_raw > RAW_TARGET):
                missed.append(f"{name} ({by_floor:.1f}x the floor, {by_raw:.2f}x raw)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    if missed:
        verdict = f"missed: {', '.join(missed)}"
    elif judged:
        verdict = "met on every wire API measured"
    else:
        verdict = "not judged (no row of that size)"
    print(
        f"targets at {TARGET_SIZE} messages (<= {FLOOR_TARGET:.0f}x the floor, <= "
        f"{RAW_TARGET:.1f}x raw): {verdict}; load average {load:.2f}"
    )
    return 1 if missed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=3, help="worker processes")
    parser.add_argument("--loops", type=int, default=3, help="timed loops per size and process")
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES), help="messages")
    parser.add_argument("--only", nargs="*", default=list(WIRES), help="wire APIs to run")
    parser.add_argument("--worker", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # the SDKs' deprecation notices, the emulator's models
    unknown = [name for name in args.only if name not in WIRES]
    if unknown:
        parser.error(f"unknown wire APIs: {', '.join(unknown)} (known: {', '.join(WIRES)})")
    if args.worker:
        pin_client()
        asyncio.run(_worker(args.worker, args.only, args.sizes, args.loops))
        return 0
    process, url = start_emulator()
    try:
        rows = _run_workers(args, url)
    finally:
        stop_emulator(process)
    return _report(rows, args.only, args.sizes)


if __name__ == "__main__":
    sys.exit(main())
