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

import base64
import binascii
import inspect
import json
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from ._extras import needs

with needs("sse", "thinkagent.sse"):
    import anyio
    from sse_starlette import EventSourceResponse

import pydantic_core
from pydantic import BaseModel, ConfigDict, TypeAdapter

from ._telemetry import call_arguments, log
from .agent import AgentStream, Approval, RunResult, ToolApproved, ToolDenied
from .errors import ProviderError, ThinkAgentError
from .history import repair
from .messages import (
    Document,
    FinishReason,
    Image,
    Message,
    Part,
    ServerToolCall,
    ServerToolResult,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
    UserPrompt,
)
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
    "UIChat",
    "UIEntry",
    "UIRequestError",
    "UITurn",
    "event_stream_response",
    "sse_events",
    "ui_finish_reason",
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
        if part.citations:  # what the text cites, for a reader (never an encrypted index)
            cited = [{"url": c.url, "title": c.title} for c in part.citations]
            return {"kind": "text", "citations": cited}
        return {"kind": "text"}
    if isinstance(part, ServerToolCall):  # what the provider's tool was asked, not its block
        arguments: Any = part.arguments
        call = {"kind": part.kind, "id": part.id, "name": part.name, "arguments": arguments}
        return {**call, "builtin": part.builtin, "approval": part.approval}
    if isinstance(part, ServerToolResult):
        return {
            "kind": part.kind,
            "call_id": part.call_id,
            "name": part.name,
            "builtin": part.builtin,
            "is_error": part.is_error,
        }
    return {"kind": part.kind}


async def sse_events(stream: AgentStream[Any]) -> AsyncIterator[dict[str, str]]:
    """The run as thinkagent's events, each `{"event": name, "data": json}`.

    Per model request (a step, numbered from 1): `step-start` `{step}`; for each part,
    `part-start` `{step, index, kind}` (`kind`: `thinking`, `text` or `tool_call`; a tool call
    with its `id` and `name`, a redacted thinking block with `redacted: true`), its deltas
    (`thinking` and `text` `{step, index, text}`, `tool-call` `{step, index, arguments}` with
    a fragment of the arguments' JSON), and `part-end` `{step, index, kind, ...}` (a tool
    call's whole `id`, `name` and `arguments`, a thinking block's `redacted` and `signed`, a
    built-in tool's call with its `id`, `name`, `builtin` and `arguments` or its result's
    `call_id`, `name` and `is_error`, a text's `citations` as `{url, title}`);
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
                if open_parts.pop(item.index, None) is None:  # a part that arrived whole
                    whole = {"step": step, "index": item.index, "kind": item.part.kind}
                    yield event("part-start", whole)
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
    stream: AgentStream[Any],
    *,
    message_id: str | None = None,
    denied: Collection[str] = (),
) -> AsyncIterator[dict[str, Any]]:
    """The run as the Vercel AI SDK's UI message stream chunks (without the final `[DONE]`).

    One assistant message (`start` with `message_id`, a new id when None); each model
    request a step (`start-step` ... `finish-step`); thinking as `reasoning-start`,
    `reasoning-delta`, `reasoning-end` (a redacted block with `providerMetadata`
    `{"thinkagent": {"redacted": true}}` and no text); text as `text-start`, `text-delta`,
    `text-end`; a tool call as `tool-input-start`, `tool-input-delta`, then
    `tool-input-available` with its whole input, and its result as `tool-output-available` (or
    `tool-output-error`; `tool-output-denied` for the calls in `denied`); a call that awaits
    approval as `tool-approval-request` (its approval id is the call's id, the reason a tool
    gave in `approvalDescriptor`); warnings as transient `data-warning` parts; a structured
    output as a `data-output` part; `finish` with its `finishReason` (`ui_finish_reason`) and
    the run's usage and finish reason in `messageMetadata`, or `error`. Part ids are
    `"<step>-<index>"`; a tool call's id is its own.
    """
    finish: FinishReason | None = None
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
                finish = item.message.finish_reason
                yield {"type": "finish-step"}
            elif isinstance(item, ToolResultEvent):
                result = item.result
                if result.call_id in denied:
                    yield {"type": "tool-output-denied", "toolCallId": result.call_id}
                elif result.is_error:
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
    result = stream.result
    for call in result.pending_approvals:
        request: dict[str, Any] = {
            "type": "tool-approval-request",
            "approvalId": call.id,
            "toolCallId": call.id,
        }
        reason = result.approval_reasons.get(call.id)
        if reason is not None:
            request["approvalDescriptor"] = {"reason": reason}
        yield request
    if not result.pending_approvals and not isinstance(result.output, str):
        yield {"type": "data-output", "data": _jsonable(result.output)}
    reason_ = ui_finish_reason(finish)
    metadata = {"usage": _usage(result.usage), "finishReason": reason_}
    yield {"type": "finish", "finishReason": reason_, "messageMetadata": metadata}


_UI_FINISH: dict[str | None, str] = {
    "stop": "stop",
    "tool_call": "tool-calls",
    "length": "length",
    "content_filter": "content-filter",
    "error": "error",
}


def ui_finish_reason(reason: FinishReason | None) -> str:
    """The AI SDK's finish reason for thinkagent's (`tool_call` is `tool-calls`, a reason the
    provider did not give is `other`)."""
    return _UI_FINISH.get(reason, "other")


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
    denied: Collection[str] = (),
) -> EventSourceResponse:
    """A response that streams the run in the Vercel AI SDK's UI message stream protocol
    (`ui_message_chunks`, then `[DONE]`), with its `x-vercel-ai-ui-message-stream: v1`
    header. Cancelled if the client disconnects; `on_end` runs once the run has ended. To
    answer a `useChat` request, read it with `UIChat.turn` and use `UITurn.response`."""

    async def data() -> AsyncIterator[dict[str, str]]:
        async for chunk in ui_message_chunks(stream, message_id=message_id, denied=denied):
            yield {"data": json.dumps(chunk, ensure_ascii=False)}
        yield {"data": "[DONE]"}

    return EventSourceResponse(
        _ended(data(), stream, on_end),
        headers={**UI_MESSAGE_STREAM_HEADERS, **(headers or {})},
        ping=ping,
    )


# --- the AI SDK's `useChat` requests, read back into a thinkagent history ------------------------


class UIRequestError(ValueError):
    """A `useChat` request body thinkagent cannot take (answer it with a 4xx): the message
    says what is wrong, naming the message."""


@dataclass(frozen=True, slots=True)
class UIEntry:
    """One UI message of a chat and the thinkagent messages behind it, proofs included: a user
    message is one prompt; an assistant message is every message of the run that produced it
    (its turns, tool results and thinking), so a later request that names the UI message by
    its id gets them back exactly."""

    id: str
    role: Literal["user", "assistant"]
    messages: tuple[Message, ...]


class UIChat:
    """The server side of one `useChat` conversation: its UI messages by id, each with the
    thinkagent messages behind it. The browser holds the UI messages (text, reasoning text,
    tool calls and results) and never a proof; a request names them by id and gets the stored
    messages back, signatures and all. Persist it with `dump()` and `UIChat.load()`; `version`
    counts its commits, for a store that refuses a stale write.

    ```python
    chat = UIChat.load(stored) if stored else UIChat()
    turn = chat.turn(await request.json())            # the prompt, history, approvals
    stream = agent.run_stream(turn.prompt, history=turn.history, approvals=turn.approvals)
    return turn.response(stream, on_end=lambda ended: save(turn.commit(ended)))
    ```
    """

    def __init__(self, entries: Sequence[UIEntry] = (), *, version: int = 0) -> None:
        self.entries: list[UIEntry] = list(entries)
        self.version = version

    @property
    def messages(self) -> list[Message]:
        """The whole history, in order (what `agent.run` would be given)."""
        return [message for entry in self.entries for message in entry.messages]

    def dump(self) -> str:
        """The chat as JSON (the messages in their `dump_messages` form)."""
        return _UICHAT.dump_json(
            _UIChatRecord(
                version=self.version,
                entries=[
                    _UIEntryRecord(id=e.id, role=e.role, messages=list(e.messages))
                    for e in self.entries
                ],
            ),
            exclude_none=True,
        ).decode()

    @classmethod
    def load(cls, data: str | bytes) -> UIChat:
        record = _UICHAT.validate_json(data)
        return cls(
            [UIEntry(e.id, e.role, tuple(e.messages)) for e in record.entries],
            version=record.version,
        )

    def turn(self, body: Mapping[str, Any]) -> UITurn:
        """What the request `body` (`useChat`'s: `id`, `messages`, `trigger`, `messageId`)
        asks for: a new prompt (`submit-message` ending with a user message: a new one, or one
        the user edited), the last answer again (`regenerate-message`: the stored turns up to
        the user message, no prompt, so the user turn is not repeated), or the continuation of
        an assistant message whose tool calls the user approved or denied. Messages are taken
        from this chat by id; one it does not hold is read from the body without reasoning (a
        client cannot hand in thinking). `UIRequestError` for a body that says none of these."""
        raw = body.get("messages")
        if not isinstance(raw, list) or not raw:
            raise UIRequestError("the request has no messages")
        ui = [_ui_message(m, i) for i, m in enumerate(cast("list[Any]", raw))]
        trigger = body.get("trigger") or "submit-message"
        if trigger not in ("submit-message", "regenerate-message"):
            raise UIRequestError(f"unknown trigger {trigger!r}")
        stored = {entry.id: entry for entry in self.entries}
        *before, last = ui
        kept = [stored.get(m["id"]) or _entry_from_ui(m, i) for i, m in enumerate(before)]
        if last["role"] == "user":
            if trigger == "regenerate-message":
                entry = stored.get(last["id"]) or _entry_from_ui(last, len(before))
                return UITurn(self, [*kept, entry], None, {}, f"msg-{uuid.uuid4().hex}", None)
            prompt = _ui_prompt(last, len(before))
            return UITurn(self, kept, prompt, {}, f"msg-{uuid.uuid4().hex}", last["id"])
        approvals = _ui_approvals(last)
        if not approvals:
            raise UIRequestError(
                f"messages[{len(before)}] is the assistant's, with no tool call approved or "
                "denied: end the request with a user message, or regenerate"
            )
        entry = stored.get(last["id"])
        if entry is None:
            raise UIRequestError(
                f"messages[{len(before)}]: assistant message {last['id']!r} is not one of this "
                "chat's: only a stored turn can be continued"
            )
        return UITurn(self, [*kept, entry], None, approvals, entry.id, None, continues=entry)


class UITurn:
    """One `useChat` request, read: run the agent with `prompt`, `history` and `approvals`,
    stream the run with `response` (into the assistant message `message_id`), and `commit` the
    run to get the chat to store."""

    def __init__(
        self,
        chat: UIChat,
        kept: list[UIEntry],
        prompt: UserPrompt | None,
        approvals: dict[str, Approval],
        message_id: str,
        prompt_id: str | None,
        *,
        continues: UIEntry | None = None,
    ) -> None:
        self.chat = chat
        self.prompt = prompt
        self.approvals = approvals
        self.message_id = message_id
        self._kept = kept[:-1] if continues is not None else kept
        self._prompt_id = prompt_id
        self._continues = continues
        self.history: list[Message] = [m for entry in kept for m in entry.messages]

    @property
    def denied(self) -> frozenset[str]:
        """The calls this request denies (streamed as `tool-output-denied`)."""
        return frozenset(i for i, decision in self.approvals.items() if not _approves(decision))

    def response(
        self,
        stream: AgentStream[Any],
        *,
        on_end: OnEnd | None = None,
        headers: Mapping[str, str] | None = None,
        ping: float | None = 15,
    ) -> EventSourceResponse:
        """The run as the AI SDK's UI message stream, into this turn's assistant message."""
        return ui_message_stream_response(
            stream,
            on_end=on_end,
            message_id=self.message_id,
            headers=headers,
            ping=ping,
            denied=self.denied,
        )

    def commit(self, ended: AgentStream[Any] | RunResult[Any]) -> UIChat:
        """The chat with this turn's run in it (a new `UIChat`, `version` one higher): the
        entries before the turn, the prompt's user message, and the assistant message with
        every message of the run; a regenerated answer replaces the one after its user
        message. A run that failed or was cut keeps what completed (`repair()`d); a run that
        stopped for approval keeps its calls waiting."""
        if isinstance(ended, RunResult):
            messages, pending = ended.messages, bool(ended.pending_approvals)
        else:
            messages = ended.messages
            try:
                pending = bool(ended.result.pending_approvals)
            except RuntimeError:  # the run failed or was cancelled: no result
                pending = False
        entries = list(self._kept)
        start = sum(len(entry.messages) for entry in entries)
        if self._prompt_id is not None:
            if len(messages) <= start:  # nothing ran, not even the prompt was taken
                return UIChat(self.chat.entries, version=self.chat.version)
            entries.append(UIEntry(self._prompt_id, "user", (messages[start],)))
            start += 1
        answer = list(messages[start:])
        if not pending:
            answer = repair(answer) if answer else answer
        if answer:
            entries.append(UIEntry(self.message_id, "assistant", tuple(answer)))
        return UIChat(entries, version=self.chat.version + 1)


class _UIEntryRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    role: Literal["user", "assistant"]
    messages: list[Message]


class _UIChatRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    version: int = 0
    entries: list[_UIEntryRecord] = []


_UICHAT: TypeAdapter[_UIChatRecord] = TypeAdapter(_UIChatRecord)


def _approves(decision: Approval) -> bool:
    return decision is True or isinstance(decision, ToolApproved)


def _ui_message(raw: Any, index: int) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise UIRequestError(f"messages[{index}] is not an object")
    message = cast("dict[str, Any]", raw)
    if message.get("role") not in ("user", "assistant"):
        raise UIRequestError(f"messages[{index}]: role must be 'user' or 'assistant'")
    if not isinstance(message.get("id"), str) or not message["id"]:
        raise UIRequestError(f"messages[{index}] has no id")
    if not isinstance(message.get("parts"), list):
        raise UIRequestError(f"messages[{index}] has no parts")
    return message


def _ui_prompt(message: Mapping[str, Any], index: int) -> UserPrompt:
    """A user UI message's text and files, as a prompt."""
    content: list[str | Image | Document] = []
    for j, raw in enumerate(cast("list[Any]", message["parts"])):
        part: dict[str, Any] = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
        kind = part.get("type")
        if kind == "text":
            content.append(str(part.get("text", "")))
        elif kind == "file":
            content.append(_ui_file(part, index, j))
    if not any(isinstance(c, Image | Document) or c.strip() for c in content):
        raise UIRequestError(f"messages[{index}]: the user message has no text and no file")
    return content


def _ui_file(part: Mapping[str, Any], index: int, j: int) -> Image | Document:
    url = part.get("url")
    media_type = part.get("mediaType")
    if not isinstance(url, str) or not isinstance(media_type, str):
        raise UIRequestError(f"messages[{index}].parts[{j}]: a file needs a url and a mediaType")
    kind = Image if media_type.startswith("image/") else Document
    try:
        if url.startswith("data:"):
            header, _, payload = url.partition(",")
            data = (
                base64.b64decode(payload, validate=True)
                if header.endswith(";base64")
                else urllib.parse.unquote_to_bytes(payload)
            )
            return kind(data=data, media_type=media_type)
        return kind(url=url, media_type=media_type)
    except (ValueError, binascii.Error) as exc:
        raise UIRequestError(f"messages[{index}].parts[{j}]: {exc}") from exc


def _tool_name(part: Mapping[str, Any]) -> str | None:
    kind = part.get("type")
    if kind == "dynamic-tool":
        name = part.get("toolName")
        return name if isinstance(name, str) else None
    if isinstance(kind, str) and kind.startswith("tool-"):
        return kind[5:]
    return None


def _ui_approvals(message: Mapping[str, Any]) -> dict[str, Approval]:
    """The decisions in an assistant UI message: its tool parts the user approved or denied."""
    decisions: dict[str, Approval] = {}
    for part in cast("list[Any]", message["parts"]):
        if not isinstance(part, dict) or _tool_name(cast("dict[str, Any]", part)) is None:
            continue
        tool = cast("dict[str, Any]", part)
        approval = tool.get("approval")
        if tool.get("state") != "approval-responded" or not isinstance(approval, dict):
            continue
        answer = cast("dict[str, Any]", approval)
        call_id = str(tool.get("toolCallId"))
        if answer.get("approved") is True:
            decisions[call_id] = True
        else:
            reason = answer.get("reason")
            decisions[call_id] = ToolDenied(reason) if isinstance(reason, str) else False
    return decisions


def _entry_from_ui(message: Mapping[str, Any], index: int) -> UIEntry:
    """A UI message this chat does not hold, read from the client: text, files, tool calls and
    results, step by step; never reasoning (it would come without its proof, from a client)."""
    if message["role"] == "user":
        prompt = _ui_prompt(message, index)
        return UIEntry(message["id"], "user", (Message.user(prompt),))
    out: list[Message] = []
    parts: list[Part] = []
    results: list[ToolResult] = []

    def close() -> None:
        if parts:
            out.append(Message(role="assistant", parts=tuple(parts)))
            if results:
                out.append(Message(role="user", parts=tuple(results)))
        parts.clear()
        results.clear()

    for raw in cast("list[Any]", message["parts"]):
        if not isinstance(raw, dict):
            continue
        part = cast("dict[str, Any]", raw)
        kind = part.get("type")
        if kind == "step-start":
            close()
        elif kind == "text" and part.get("text"):
            parts.append(TextPart(text=str(part["text"])))
        elif (name := _tool_name(part)) is not None and part.get("state") not in (
            "input-streaming",
        ):
            call_id = str(part.get("toolCallId"))
            arguments = part.get("input")
            parts.append(
                ToolCall(
                    id=call_id,
                    name=name,
                    arguments=cast("dict[str, Any]", arguments)
                    if isinstance(arguments, dict)
                    else {},
                )
            )
            state = part.get("state")
            if state == "output-available":
                results.append(ToolResult(call_id=call_id, name=name, content=part.get("output")))
            elif state in ("output-error", "output-denied"):
                text = part.get("errorText") or ToolDenied().reason
                results.append(
                    ToolResult(call_id=call_id, name=name, content=str(text), is_error=True)
                )
    close()
    return UIEntry(message["id"], "assistant", tuple(out))
