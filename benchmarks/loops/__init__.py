"""The provider loops `benchmarks/overhead.py` measures, one module per provider.

Each module in this package adds rows to the overhead table without touching the runner. A
module defines:

```python
NAME: str  # the row label, e.g. "anthropic"

async def setup(base_url: str) -> Loops:
    # Build the clients for the emulator at `base_url` (called once, inside the running
    # event loop). Import the vendor SDK at module level: a module whose SDK is not
    # installed is skipped with a note.
    ...
```

and `Loops` is any object with:

```python
async def raw(self, streamed: bool, sync: bool) -> None:
    # One complete loop driven by the bare vendor client: the request, the tool call, the
    # follow-up request that replays the thinking (built by hand, as a careful user would),
    # and the final answer. Streamed: the events are read and folded by hand.
    ...

async def thinkagent(self, streamed: bool, sync: bool) -> None:
    # The same loop through `thinkagent.Agent` (`run`, or `run_stream` read to its end).
    ...

async def aclose(self) -> None:
    # Release the clients.
    ...

# Optional: a second raw variant, reported with its ratio for information only (not held to
# the target), labelled by the module-level string REFERENCE.
async def reference(self, streamed: bool, sync: bool) -> None: ...
```

Rules that keep the comparison fair: both loops use the same model, thinking configuration,
tool and question, so the emulator sends the same responses; both raise if the loop did not
end with an answer after exactly one tool call (a loop that silently failed would look fast);
no output, logging or sleeping inside a loop. The runner warms each loop up, then measures
client CPU time (`time.process_time`, all threads of the process) over many iterations.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import AsyncIterator, Mapping
from types import ModuleType
from typing import Any, Protocol

from thinkagent import (
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolResult,
    Usage,
)

__all__ = [
    "InstantModel",
    "Loops",
    "agent_tools",
    "discover",
    "get_weather",
    "minimal_loop",
    "run_tool",
    "weather",
]


def weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


async def get_weather(city: str) -> str:
    """Current weather for a city."""
    return weather(city)


async def run_tool(sync: bool, arguments: Mapping[str, Any]) -> str:
    """The raw loops' tool call: the plain function called as it is, or the async one awaited."""
    return weather(**arguments) if sync else await get_weather(**arguments)


def agent_tools(sync: bool) -> list[Any]:
    """The thinkagent loops' tool: the async function, or the plain one run inline (a fast
    sync tool, no hop to a thread: `Tool(..., inline=True)`)."""
    return [Tool(weather, name="get_weather", inline=True)] if sync else [get_weather]


class InstantModel:
    """A model that answers at once, with what the emulator answers the loops: thinking and a
    `get_weather` call, then thinking and the answer. The runner's "agent loop alone" row runs
    the agent on it after each raw loop: the agent loop's own cost, with no adapter and no
    request, measured among the SDK's work as the full loop is."""

    model_name = "instant"
    scope = "instant"

    def __init__(self) -> None:
        usage = Usage(input_tokens=120, output_tokens=40)
        self._answers = (
            Message(
                role="assistant",
                parts=(
                    ThinkingBlock.signed("The user wants the weather in Paris.", "sig-1"),
                    ToolCall(id="call-1", name="get_weather", arguments={"city": "Paris"}),
                ),
                scope=self.scope,
                model=self.model_name,
                usage=usage,
                finish_reason="tool_call",
            ),
            Message(
                role="assistant",
                parts=(
                    ThinkingBlock.signed("It is sunny: good for a walk.", "sig-2"),
                    TextPart(text="Sunny in Paris, 21 C: a fine afternoon for a walk."),
                ),
                scope=self.scope,
                model=self.model_name,
                usage=usage,
                finish_reason="stop",
            ),
        )

    async def request(self, request: ModelRequest) -> ModelResponse:
        answered = any(m.tool_results for m in request.messages)
        return ModelResponse(self._answers[1 if answered else 0])

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelResponse]:
        yield await self.request(request)  # the runner measures the agent loop unstreamed only


async def minimal_loop(model: Model, tool: Tool, question: str) -> None:
    """The least an agent loop over validated messages does, by hand: the prompt message, each
    request, the usage sum, the tool's validated call and its result message. No history
    checks, limits, hooks or result object: the floor the agent loop is measured against."""
    messages = [Message(role="user", parts=(TextPart(text=question),))]
    usage = Usage()
    tools = (tool.definition,)
    while True:
        response = await model.request(ModelRequest(messages=list(messages), tools=tools))
        messages.append(response.message)
        usage = usage + response.usage + Usage(requests=1)
        calls = response.message.tool_calls
        if not calls:
            if len(messages) != 4:
                raise RuntimeError("the minimal loop did not make one tool call")
            return
        results = [
            ToolResult(
                call_id=call.id, name=call.name, content=await tool.call(call.arguments_dict())
            )
            for call in calls
        ]
        messages.append(Message(role="user", parts=tuple(results)))


class Loops(Protocol):
    async def raw(self, streamed: bool, sync: bool) -> None: ...

    async def thinkagent(self, streamed: bool, sync: bool) -> None: ...

    async def aclose(self) -> None: ...


def discover(only: list[str] | None = None) -> tuple[list[ModuleType], list[str]]:
    """The loop modules of this package (by file name order), and notes on those skipped."""
    modules: list[ModuleType] = []
    skipped: list[str] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_") or (only and info.name not in only):
            continue
        try:
            module: Any = importlib.import_module(f"{__name__}.{info.name}")
        except ImportError as exc:
            skipped.append(f"{info.name}: {exc}")
            continue
        modules.append(module)
    return modules, skipped
