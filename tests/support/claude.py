"""Helpers shared by the Anthropic and Bedrock tests: tools, questions, what a history's
assistant turns must look like on the wire, and `Wire`, what the tests written once for both
wires need to know of each (`WIRES`)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import anthropic
from botocore.exceptions import ClientError

from tests.support import without_ids as without_ids
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
from thinkagent.providers.claude import AnthropicModel, BedrockModel, ClaudeThinking

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


def without_cache(value: Any) -> Any:
    """A request (or any part of one) without its cache breakpoints: no `cache_control` keys,
    no `cachePoint` blocks, and a system text block list back to its text."""
    if isinstance(value, dict):
        out = {k: without_cache(v) for k, v in value.items() if k != "cache_control"}
        system = out.get("system")
        if isinstance(system, list) and [b.get("type") for b in system] == ["text"]:
            out["system"] = system[0]["text"]
        return out
    if isinstance(value, list):
        return [without_cache(v) for v in value if not (isinstance(v, dict) and "cachePoint" in v)]
    return value


def body_text(body: Any) -> str:
    return json.dumps(body)


# --- the two wires -----------------------------------------------------------------------------


def _kind(block: dict[str, Any]) -> str:
    """A Converse content block's kind, in Anthropic's words."""
    if "reasoningContent" in block:
        return "redacted_thinking" if "redactedContent" in block["reasoningContent"] else "thinking"
    (key,) = block
    kinds = {"text": "text", "toolUse": "tool_use", "toolResult": "tool_result"}
    return kinds.get(key, key)  # a cachePoint is itself


def _as_json(value: Any) -> Any:
    """Request parameters as their JSON body carries them (botocore sends bytes as base64)."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_as_json(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


@dataclass(frozen=True)
class Wire:
    """One Claude wire, as the tests written once for both see it."""

    scope: str
    """The scope of its messages, and its API's name for the emulator's faults."""
    model_class: Any
    sonnet: str
    """claude-sonnet-4-6 on this wire."""
    opus: str
    """claude-opus-5, which thinks by default."""
    client_fixture: str
    """The fixture (`tests/support/fixtures.py`) of a client without retries."""
    content: Callable[[Message], list[dict[str, Any]]]
    """What an assistant message of this scope is replayed as, in the JSON body."""
    status_error: type[BaseException]
    """The SDK's exception for an error status or an error event."""
    refusal_error: type[BaseException]
    """The SDK's exception for a request the service found invalid (400)."""
    invalid_request: str
    """The error type of a request Claude refuses."""
    refusal_prefix: str
    """What the service puts before Claude's own words in a refusal."""

    def __str__(self) -> str:
        return self.scope

    @property
    def other(self) -> str:
        """The other Claude platform (its signatures are valid here too)."""
        return "bedrock" if self.scope == "anthropic" else "anthropic"

    def model(self, client: Any = None, name: str | None = None, **kw: Any) -> Any:
        """This wire's model: on `sonnet` unless `name` says otherwise, with adaptive thinking
        unless `thinking` says otherwise, and a client that must not be used unless given. The
        emulator stands in for the Claude API: its scope is the Claude API's."""
        kw.setdefault("thinking", ClaudeThinking.adaptive())
        kw.setdefault("scope", self.scope)
        return self.model_class(name or self.sonnet, client=client or object(), **kw)

    def thinking_sent(self, params: dict[str, Any]) -> Any:
        """The thinking configuration request parameters carry (None: none)."""
        if self.scope == "anthropic":
            return params.get("thinking")
        return params.get("additionalModelRequestFields", {}).get("thinking")

    def messages(self, params: dict[str, Any]) -> Any:
        """The `messages` of request parameters (or of a request's JSON body), as JSON."""
        return _as_json(params["messages"])

    def kind(self, block: dict[str, Any]) -> str:
        """`thinking`, `redacted_thinking`, `text`, `tool_use` or `tool_result`."""
        return block["type"] if self.scope == "anthropic" else _kind(block)

    def kinds(self, content: list[dict[str, Any]]) -> list[str]:
        """The kind of each content block (Converse's cache points left out)."""
        return [self.kind(block) for block in content if self.kind(block) != "cachePoint"]

    def texts(self, content: list[dict[str, Any]]) -> list[str]:
        """The text of each text block."""
        return [block["text"] for block in content if self.kind(block) == "text"]

    def model_requests(self, emu: Any) -> list[Any]:
        """The requests the emulator received for this wire's model calls."""
        return [r for r in emu.requests if r.api == self.scope]


ANTHROPIC = Wire(
    scope="anthropic",
    model_class=AnthropicModel,
    sonnet="claude-sonnet-4-6",
    opus="claude-opus-5",
    client_fixture="anthropic_client",
    content=anthropic_content,
    status_error=anthropic.APIStatusError,
    refusal_error=anthropic.BadRequestError,
    invalid_request="invalid_request_error",
    refusal_prefix="",
)
BEDROCK = Wire(
    scope="bedrock",
    model_class=BedrockModel,
    sonnet="us.anthropic.claude-sonnet-4-6-v1:0",
    opus="global.anthropic.claude-opus-5-v1:0",
    client_fixture="bedrock_client",
    content=bedrock_content,
    status_error=ClientError,
    refusal_error=ClientError,
    invalid_request="ValidationException",
    refusal_prefix="The model returned the following errors: ",
)
WIRES = [ANTHROPIC, BEDROCK]


def check_replayed(wire: Wire, emu: Any, messages: list[Message]) -> None:
    """Each request carried every earlier assistant turn block for block, byte for byte."""
    requests = wire.model_requests(emu)
    turns = [i for i, m in enumerate(messages) if m.role == "assistant"]
    assert len(requests) == len(turns)
    for request, upto in zip(requests[1:], turns[1:], strict=True):
        sent = request.body["messages"]
        for i in turns:
            if i < upto:
                assert sent[i] == {"role": "assistant", "content": wire.content(messages[i])}
