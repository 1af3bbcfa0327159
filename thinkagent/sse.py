"""An agent's streamed run as Server-Sent Events, for a browser or any HTTP client.

Two wire formats, each a Starlette response (built on sse-starlette's `EventSourceResponse`,
which frames the events, keeps the connection alive with pings and notices a client that
goes away; `pip install "thinkagent[sse]"`):

- `event_stream_response(stream)`: thinkagent's own events, named and in JSON (the schema is
  `sse_events`'s docstring and `docs/streaming.md`), with the start and end of every part so a
  page can open and close a thinking block, a text or a tool call as it streams.
- `ui_message_stream_response(stream)`: the Vercel AI SDK's UI message stream protocol
  (`x-vercel-ai-ui-message-stream: v1`), reasoning parts included, so a front end written with
  that SDK's `useChat` hook works unchanged.

```python
@app.post("/chat")
async def chat(body: Question) -> EventSourceResponse:
    stream = agent.run_stream(body.message, history=load(body.conversation))
    return event_stream_response(stream, on_end=lambda s: save(body.conversation, s.messages))
```

When the client disconnects, the run is cancelled (the model's stream closed, running tools
cancelled) and `on_end` still runs, with the evidence of the messages that completed: what
you persist there is a valid history (`repair()` answers calls left without results). Proofs
never leave the server: a redacted block is sent as a block marked `redacted`, with no
payload, and no signature is ever sent.
"""

from __future__ import annotations

import inspect
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from ._extras import needs

with needs("sse", "thinkagent.sse"):
    import anyio
    from sse_starlette import EventSourceResponse

import pydantic_core

from ._telemetry import call_arguments, log
from .agent import AgentStream
from .errors import ProviderError, ThinkAgentError
from .messages import Part, TextPart, ThinkingBlock, ToolCall, Usage
from .providers.base import ModelResponse
from .stream import (
    PartEnd,
    PartialOutput,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolResultEvent,
    WarningEvent,
)

__all__ = [
    "UI_MESSAGE_STREAM_HEADERS",
    "OnEnd",
    "event_stream_response",
    "sse_events",
    "ui_message_chunks",
    "ui_message_stream_response",
]

OnEnd = Callable[[AgentStream[Any]], Awaitable[None] | None]
"""Called once the run has ended, however it ended (answered, failed, or cancelled because the
client went away), with the stream: `stream.messages` is the evidence to persist."""

UI_MESSAGE_STREAM_HEADERS: Mapping[str, str] = {"x-vercel-ai-ui-message-stream": "v1"}
"""The header that tells the AI SDK's `useChat` the body is a UI message stream."""

_KINDS: dict[type[Any], str] = {
    ThinkingDelta: "thinking",
    TextDelta: "text",
    ToolCallDelta: "tool_call",
}


def _jsonable(value: object) -> Any:
    return pydantic_core.to_jsonable_python(value)


def _usage(usage: Usage, *, requests: bool = True) -> dict[str, int]:
    counts = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "thinking_tokens": usage.thinking_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
    }
    if requests:  # a run's totals; a step is one request
        counts["requests"] = usage.requests
    return counts


def _error(error: BaseException) -> dict[str, Any]:
    """What a client is told about a failed run: thinkagent's own errors say what happened,
    anything else stays on the server (logged), as an internal error."""
    if isinstance(error, ThinkAgentError):
        data: dict[str, Any] = {"type": type(error).__name__, "message": str(error)}
        if isinstance(error, ProviderError):
            data["retryable"] = error.retryable
        return data
    log.error("the run failed", exc_info=error)
    return {"type": "InternalError", "message": "the run failed on the server"}


def _part_end(part: Part) -> dict[str, Any]:
    """What `part-end` says about a part: never a proof."""
    if isinstance(part, ThinkingBlock):
        return {
            "kind": "thinking",
            "redacted": part.redacted is not None,
            "signed": part.signature is not None,
        }
    if isinstance(part, ToolCall):
        arguments: Any = part.arguments
        return {"kind": "tool_call", "id": part.id, "name": part.name, "arguments": arguments}
    if isinstance(part, TextPart):
        return {"kind": "text"}
    return {"kind": part.kind}


async def sse_events(stream: AgentStream[Any]) -> AsyncIterator[dict[str, str]]:
    """The run as thinkagent's events, each `{"event": name, "data": json}`.

    Per model request (a step, numbered from 1): `step-start` `{step}`; for each part,
    `part-start` `{step, index, kind}` (`kind`: `thinking`, `text` or `tool_call`; a tool call
    with its `id` and `name`, a redacted thinking block with `redacted: true`), its deltas
    (`thinking` and `text` `{step, index, text}`, `tool-call` `{step, index, arguments}` with
    a fragment of the arguments' JSON), and `part-end` `{step, index, kind, ...}` (a tool
    call's whole `id`, `name` and `arguments`, a thinking block's `redacted` and `signed`);
    then `step` `{step, finish_reason, model}` and `usage` (the request's tokens). After the
    step's tools: `tool-result` `{call_id, name, content, is_error}` for each call, in call
    order. With an output type, `partial-output` `{output}` while the output's JSON streams;
    `warning` `{code, message}` for what an adapter adjusted. The run ends with `done`
    `{output, usage, pending_approvals}` (the run's totals), or with `error`
    `{type, message}` (and `retryable` for a provider's error).
    """
    step = 0
    in_step = False
    open_parts: dict[int, str] = {}

    def event(name: str, data: dict[str, Any]) -> dict[str, str]:
        return {"event": name, "data": json.dumps(data, ensure_ascii=False)}

    try:
        async for item in stream:
            kind = _KINDS.get(type(item))
            if not in_step and (kind is not None or isinstance(item, PartEnd | ModelResponse)):
                step += 1
                in_step = True
                yield event("step-start", {"step": step})
            if kind is not None:
                delta: Any = item
                index: int = delta.index
                if index not in open_parts:
                    open_parts[index] = kind
                    start: dict[str, Any] = {"step": step, "index": index, "kind": kind}
                    if kind == "tool_call":
                        start.update(id=delta.id, name=delta.name)
                    elif kind == "thinking" and delta.redacted is not None:
                        start["redacted"] = True
                    yield event("part-start", start)
                if kind == "tool_call":
                    if delta.args_fragment:
                        data = {"step": step, "index": index, "arguments": delta.args_fragment}
                        yield event("tool-call", data)
                elif delta.text:
                    yield event(kind, {"step": step, "index": index, "text": delta.text})
            elif isinstance(item, PartEnd):
                open_parts.pop(item.index, None)
                yield event("part-end", {"step": step, "index": item.index, **_part_end(item.part)})
            elif isinstance(item, ModelResponse):
                message = item.message
                for index in sorted(open_parts):  # a part its adapter did not close
                    end = {"step": step, "index": index, **_part_end(message.parts[index])}
                    yield event("part-end", end)
                open_parts.clear()
                in_step = False
                finish = {
                    "step": step,
                    "finish_reason": message.finish_reason,
                    "model": message.model,
                }
                yield event("step", finish)
                yield event("usage", {"step": step, **_usage(item.usage, requests=False)})
            elif isinstance(item, ToolResultEvent):
                result = item.result
                data = {
                    "call_id": result.call_id,
                    "name": result.name,
                    "content": _jsonable(result.content),
                    "is_error": result.is_error,
                }
                yield event("tool-result", data)
            elif isinstance(item, PartialOutput):
                yield event("partial-output", {"output": _jsonable(item.output)})
            elif isinstance(item, WarningEvent):
                yield event("warning", {"code": item.code, "message": item.message})
    except Exception as exc:  # the run failed: say so, then end the stream cleanly
        yield event("error", _error(exc))
        return
    result = stream.result
    pending = [{"id": call.id, "name": call.name} for call in result.pending_approvals]
    done = {
        "output": None if pending else _jsonable(result.output),
        "usage": _usage(result.usage),
        "pending_approvals": pending,
    }
    yield event("done", done)


async def ui_message_chunks(
    stream: AgentStream[Any], *, message_id: str | None = None
) -> AsyncIterator[dict[str, Any]]:
    """The run as the Vercel AI SDK's UI message stream chunks (without the final `[DONE]`).

    One assistant message (`start` with `message_id`, a new id when None); each model
    request a step (`start-step` ... `finish-step`); thinking as `reasoning-start`,
    `reasoning-delta`, `reasoning-end` (a redacted block with `providerMetadata`
    `{"thinkagent": {"redacted": true}}` and no text); text as `text-start`, `text-delta`,
    `text-end`; a tool call as `tool-input-start`, `tool-input-delta`, then
    `tool-input-available` with its whole input, and its result as `tool-output-available` (or
    `tool-output-error`); warnings as transient `data-warning` parts; `finish` with the run's
    usage in `messageMetadata`, or `error`. Part ids are `"<step>-<index>"`; a tool call's id is
    its own.
    """
    step = 0
    in_step = False
    open_parts: dict[int, str] = {}  # index -> the part's id in the protocol
    calls: dict[int, ToolCall | str] = {}  # index -> the call id (its name until it ends)
    yield {"type": "start", "messageId": message_id or f"msg-{uuid.uuid4().hex}"}
    try:
        async for item in stream:
            kind = _KINDS.get(type(item))
            if not in_step and (kind is not None or isinstance(item, PartEnd | ModelResponse)):
                step += 1
                in_step = True
                yield {"type": "start-step"}
            if kind is not None:
                delta: Any = item
                index: int = delta.index
                if kind == "tool_call":
                    if index not in open_parts:
                        open_parts[index] = delta.id
                        calls[index] = delta.name
                        yield {
                            "type": "tool-input-start",
                            "toolCallId": delta.id,
                            "toolName": delta.name,
                        }
                    if delta.args_fragment:
                        call_id = open_parts[index]
                        yield {
                            "type": "tool-input-delta",
                            "toolCallId": call_id,
                            "inputTextDelta": delta.args_fragment,
                        }
                    continue
                part = "reasoning" if kind == "thinking" else "text"
                if index not in open_parts:
                    part_id = open_parts[index] = f"{step}-{index}"
                    start: dict[str, Any] = {"type": f"{part}-start", "id": part_id}
                    if kind == "thinking" and delta.redacted is not None:
                        start["providerMetadata"] = {"thinkagent": {"redacted": True}}
                    yield start
                if delta.text:
                    yield {"type": f"{part}-delta", "id": open_parts[index], "delta": delta.text}
            elif isinstance(item, PartEnd):
                if item.index in open_parts:
                    yield _ui_part_end(open_parts.pop(item.index), item.part)
            elif isinstance(item, ModelResponse):
                for index in sorted(open_parts):  # a part its adapter did not close
                    yield _ui_part_end(open_parts[index], item.message.parts[index])
                open_parts.clear()
                in_step = False
                yield {"type": "finish-step"}
            elif isinstance(item, ToolResultEvent):
                result = item.result
                if result.is_error:
                    yield {
                        "type": "tool-output-error",
                        "toolCallId": result.call_id,
                        "errorText": result.content_text(),
                    }
                else:
                    yield {
                        "type": "tool-output-available",
                        "toolCallId": result.call_id,
                        "output": _jsonable(result.content),
                    }
            elif isinstance(item, WarningEvent):
                warning = {"code": item.code, "message": item.message}
                yield {"type": "data-warning", "data": warning, "transient": True}
    except Exception as exc:  # the run failed: say so, then end the stream cleanly
        yield {"type": "error", "errorText": _error(exc)["message"]}
        return
    yield {"type": "finish", "messageMetadata": {"usage": _usage(stream.result.usage)}}


def _ui_part_end(part_id: str, part: Part) -> dict[str, Any]:
    if isinstance(part, ToolCall):
        return {
            "type": "tool-input-available",
            "toolCallId": part.id,
            "toolName": part.name,
            "input": call_arguments(part),
        }
    if isinstance(part, ThinkingBlock):
        return {"type": "reasoning-end", "id": part_id}
    return {"type": "text-end", "id": part_id}


async def _ended(
    events: AsyncIterator[dict[str, str]], stream: AgentStream[Any], on_end: OnEnd | None
) -> AsyncIterator[dict[str, str]]:
    """`events`, then the run closed and `on_end` called, however the response ends: the
    client going away cancels this generator, and its cleanup is shielded from that."""
    try:
        async for item in events:
            yield item
    finally:
        with anyio.CancelScope(shield=True):
            await stream.aclose()
            if on_end is not None:
                done = on_end(stream)
                if inspect.isawaitable(done):
                    await done


def event_stream_response(
    stream: AgentStream[Any],
    *,
    on_end: OnEnd | None = None,
    headers: Mapping[str, str] | None = None,
    ping: float | None = 15,
) -> EventSourceResponse:
    """A response that streams the run as thinkagent's events (`sse_events`).

    The run starts when the response is sent, and is cancelled if the client disconnects;
    `on_end` runs once it has ended. `ping` is the keep-alive interval in seconds."""
    return EventSourceResponse(
        _ended(sse_events(stream), stream, on_end), headers=headers, ping=ping
    )


def ui_message_stream_response(
    stream: AgentStream[Any],
    *,
    on_end: OnEnd | None = None,
    message_id: str | None = None,
    headers: Mapping[str, str] | None = None,
    ping: float | None = 15,
) -> EventSourceResponse:
    """A response that streams the run in the Vercel AI SDK's UI message stream protocol
    (`ui_message_chunks`, then `[DONE]`), with its `x-vercel-ai-ui-message-stream: v1`
    header. Cancelled if the client disconnects; `on_end` runs once the run has ended."""

    async def data() -> AsyncIterator[dict[str, str]]:
        async for chunk in ui_message_chunks(stream, message_id=message_id):
            yield {"data": json.dumps(chunk, ensure_ascii=False)}
        yield {"data": "[DONE]"}

    return EventSourceResponse(
        _ended(data(), stream, on_end),
        headers={**UI_MESSAGE_STREAM_HEADERS, **(headers or {})},
        ping=ping,
    )
